// The setup's command on the page: the card's server.launch (a server
// started by hand), checked like every card key, and SetupCommandOf, which
// shows the managed engine's server.command as evalrun ran it or the
// launch line as given (evals/publish/setup_command.h).
#include "evals/publish/setup_command.h"

#include <gtest/gtest.h>

#include "evals/run/card.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string CardWithServer(const std::string& server_extra) {
  return R"({"name": "t", "server": {"base_url": "http://127.0.0.1:8080/v1")" + server_extra +
         R"(}, "parts": {"gpqa": {}}})";
}

TEST(ServerLaunch, IsReadAsGivenAndCheckedLikeEveryKey) {
  Card c;
  ASSERT_TRUE(ParseCard(CardWithServer(R"(, "launch": "llama-server -m m.gguf -c 32768 -np 4 --port 8080")"),
                        "cards/x.json", &c)
                  .ok());
  EXPECT_EQ(c.server.launch, "llama-server -m m.gguf -c 32768 -np 4 --port 8080");

  Status st = ParseCard(CardWithServer(R"(, "launch": ["llama-server"])"), "cards/x.json", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cards/x.json: server.launch:"), std::string::npos) << st.message();
  st = ParseCard(CardWithServer(R"(, "launch": "")"), "cards/x.json", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cards/x.json: server.launch:"), std::string::npos) << st.message();
  st = ParseCard(CardWithServer(R"(, "lauch": "llama-server")"), "cards/x.json", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "cards/x.json: server.lauch: unknown field (did you mean \"launch\"?)");
  st = ParseCard(CardWithServer(R"(, "launch": "llama-server", "context": 4096, "slots": 2,
                                   "command": ["llama-server", "--port", "{port}"])"),
                 "cards/x.json", &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("server.launch: not with server.command"), std::string::npos) << st.message();
}

TEST(SetupCommand, TheManagedEnginesCommandAsItRan) {
  const json run = json::parse(R"({"slots": 4, "card": {"server": {"base_url": "http://127.0.0.1:8081/v1",
      "context": 131072, "command": ["llama-server", "-m", "/models/a b.gguf", "--port", "{port}", "-c", "{context}",
                                     "-np", "{slots}", "--chat-template-kwargs", "{\"enable_thinking\":false}"]}}})");
  const SetupCommand c = SetupCommandOf(run);
  EXPECT_EQ(c.source, "server.command");
  EXPECT_EQ(c.line,
            "llama-server -m '/models/a b.gguf' --port 8081 -c 131072 -np 4 --chat-template-kwargs "
            "'{\"enable_thinking\":false}'");
}

TEST(SetupCommand, TheLaunchLineAsGivenAndNothingWithoutEither) {
  SetupCommand c = SetupCommandOf(json::parse(R"({"card": {"server": {"base_url": "http://h:1/v1",
      "launch": "CUDA_VISIBLE_DEVICES=0 llama-server -m m.gguf -np 4"}}})"));
  EXPECT_EQ(c.source, "server.launch");
  EXPECT_EQ(c.line, "CUDA_VISIBLE_DEVICES=0 llama-server -m m.gguf -np 4");
  EXPECT_EQ(SetupCommandOf(json::parse(R"({"card": {"server": {"base_url": "http://h:1/v1"}}})")).line, "");
  EXPECT_EQ(SetupCommandOf(json()).line, "");
  EXPECT_EQ(ShellQuoted("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuoted(""), "''");
}

}  // namespace
}  // namespace evalrun
