#include "evals/server/openai_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

std::string Ref(const std::string& name) {
  std::string text = testing::ReadFile(testing::ReferenceDir() + "/" + name);
  EXPECT_FALSE(text.empty()) << "missing reference reply " << name;
  return text;
}

TEST(OpenAiWireTest, RealLlamaServerReplies) {
  Completion c;
  ASSERT_TRUE(ParseChatReply(Ref("chat_nonstream.body"), &c).ok());
  EXPECT_EQ(c.content, "\"Here!\" Asked Jacky.");
  EXPECT_EQ(c.finish_reason, "length");
  EXPECT_EQ(c.prompt_tokens, 92);
  EXPECT_EQ(c.completion_tokens, 16);
  EXPECT_TRUE(c.timings.present);
  EXPECT_EQ(c.timings.prompt_n, 92);
  EXPECT_NEAR(c.timings.predicted_per_second, 3598.848, 1e-3);
  for (const char* f : {"chat_eos.body", "chat_eos_forced.body", "chat_stopword.body", "chat_kwargs.body",
                        "chat_unknown_model.body", "chat_slot_ctx_overflow_nokvu.body"}) {
    Completion x;
    EXPECT_TRUE(ParseChatReply(Ref(f), &x).ok()) << f;
    EXPECT_FALSE(x.finish_reason.empty()) << f;
  }
  Completion eos;
  ASSERT_TRUE(ParseChatReply(Ref("chat_eos_forced.body"), &eos).ok());
  EXPECT_EQ(eos.finish_reason, "stop");
}

TEST(OpenAiWireTest, ErrorsAreServerErrors) {
  Completion c;
  EXPECT_FALSE(ParseChatReply("not json", &c).ok());
  EXPECT_FALSE(ParseChatReply(R"({"choices": []})", &c).ok());
  Status st = ParseChatReply(Ref("err_toolong.body"), &c);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exceeds the available context size"), std::string::npos) << st.message();
  EXPECT_EQ(ErrorMessageOf(Ref("err_nomsg.body")).empty(), false);
}

TEST(OpenAiWireTest, ReasoningKeptApart) {
  Completion c;
  ASSERT_TRUE(ParseChatReply(
      R"({"choices":[{"finish_reason":"stop","message":{"content":"B","reasoning_content":"hmm"}}]})", &c).ok());
  EXPECT_EQ(c.content, "B");
  EXPECT_EQ(c.reasoning, "hmm");
  ASSERT_TRUE(ParseChatReply(
      R"({"choices":[{"finish_reason":"stop","message":{"content":"\n<think>A or C?</think>\n\nC"}}]})", &c).ok());
  EXPECT_EQ(c.content, "C");
  EXPECT_EQ(c.reasoning, "A or C?");
  EXPECT_FALSE(c.unclosed_think);
  ASSERT_TRUE(ParseChatReply(
      R"({"choices":[{"finish_reason":"length","message":{"content":"<think>A is wrong because"}}]})", &c).ok());
  EXPECT_EQ(c.content, "");
  EXPECT_TRUE(c.unclosed_think);
}

TEST(OpenAiWireTest, RequestBody) {
  Prompt p;
  p.messages.push_back({"user", "Q?"});
  p.params.max_tokens = 1024;
  p.params.temperature = 0;
  p.params.top_k = 1;
  p.params.top_p = 1;
  p.params.seed = 42;
  p.params.enable_thinking = false;
  auto j = nlohmann::json::parse(ChatRequestBody(p, "m"));
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["messages"][0]["content"], "Q?");
  EXPECT_EQ(j["max_tokens"], 1024);
  EXPECT_EQ(j["top_k"], 1);
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_FALSE(nlohmann::json::parse(ChatRequestBody(p, "")).contains("model"));
}

// The body as a JSON object built and dumped: what ChatRequestBody wrote
// before it wrote the bytes itself. They must stay the same bytes.
std::string BodyAsDumpedObject(const Prompt& prompt, const std::string& model) {
  nlohmann::json j;
  if (!model.empty()) j["model"] = model;
  j["messages"] = nlohmann::json::array();
  for (const auto& m : prompt.messages) j["messages"].push_back({{"role", m.role}, {"content", m.content}});
  const GenParams& p = prompt.params;
  if (p.max_tokens > 0) j["max_tokens"] = p.max_tokens;
  if (p.temperature) j["temperature"] = *p.temperature;
  if (p.top_k) j["top_k"] = *p.top_k;
  if (p.top_p) j["top_p"] = *p.top_p;
  if (p.seed) j["seed"] = *p.seed;
  if (p.enable_thinking) j["chat_template_kwargs"] = {{"enable_thinking", *p.enable_thinking}};
  if (p.reasoning_budget) j["reasoning_budget_tokens"] = *p.reasoning_budget;
  if (p.cache_prompt) j["cache_prompt"] = *p.cache_prompt;
  if (!p.stop.empty()) j["stop"] = p.stop;
  j["stream"] = false;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(OpenAiWireTest, RequestBodyBytesAreThoseOfTheDumpedObject) {
  std::vector<Prompt> prompts(4);
  prompts[0].messages.push_back({"user", "plain"});
  prompts[1].messages = {{"system", "s\"q\\\n\t\x01\x1f\x7f"},
                         {"user", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
                         {"assistant", "bad \xff\xfe utf8 \xc3 cut"},
                         {"user", ""}};
  prompts[1].params = {4000, 0.7, 20, 0.95, -3, true, 512, false};
  prompts[2].messages.push_back({"user", std::string(5000, 'x') + "</s>"});
  prompts[2].params = {1, 1e-5, 0, 1.0, int64_t{1} << 53, false, std::nullopt, true};
  prompts[1].params.stop = {"\n\n", "Question:"};
  prompts[2].params.stop = {"</s>", "q\"uote\\ \x01 caf\xc3\xa9"};
  prompts[3].params.temperature = 0.0;  // no messages at all
  for (const Prompt& p : prompts)
    for (const std::string model : {"", "m", "we\"ird\xff"})
      EXPECT_EQ(ChatRequestBody(p, model), BodyAsDumpedObject(p, model));
}

}  // namespace
}  // namespace evalrun
