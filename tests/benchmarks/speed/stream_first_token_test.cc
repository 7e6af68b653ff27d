// When StreamingChat's clock starts and what counts as the first token
// (evals/server/stream.h): the clock starts when the request's
// last byte is written (after the connect), each piece is stamped as its
// read returns, and the first token is the first chunk with a choice:
// llama-server's role chunk, which comes with the first generated token
// even when its chat parser has no text to show yet (a <think> tag, a
// partial tool-call marker). The text's own first arrival is kept apart.
// Only lower bounds on gaps the script plants (a loaded machine only
// widens them); no speed is asserted.
#include <gtest/gtest.h>

#include <string>

#include "evals/server/stream.h"
#include "tests/support/fake_server.h"
#include "tests/support/scripted_socket.h"

namespace evalrun::testing {
namespace {

const std::string kHead = ReplyHead("Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n");
const std::string kRole =
    R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"id":"c1"})"
    "\n\n";
const std::string kReasoning =
    R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"hm"}}],"id":"c1"})"
    "\n\n";
const std::string kText =
    R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"A"}}],"id":"c1"})"
    "\n\n";

StreamedReply Send(const std::string& origin, Clock* clock = RealClock::Default()) {
  ServerConfig c;
  c.base_url = origin + "/v1";
  Prompt p;
  p.messages = {{"user", "q"}};
  p.params.max_tokens = 4;
  StreamingChat chat(MakeHttpTransport(origin, ""), c, clock);
  return chat.Send(p, nullptr, 10, nullptr);
}

TEST(StreamFirstTokenTest, TheRoleChunkIsTheFirstTokenAndTheTextIsKeptApart) {
  // The head at once; the role chunk after 200 ms (the prefill); the
  // reasoning text 300 ms later (the parser held the first token back).
  SocketScript script;
  script.writes = {{0, kHead},
                   {200, Chunk(kRole)},
                   {300, Chunk(kReasoning)},
                   {0, Chunk(kText + "data: [DONE]\n\n") + "0\r\n\r\n"}};
  ScriptedSocketServer server(script);
  const StreamedReply r = Send(server.origin());
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  const StreamTiming& t = r.timing;
  EXPECT_GE(t.sent_s, 0) << "the transport says when the request was written";
  EXPECT_GE(t.first_token_s, 0.19);
  EXPECT_GE(t.first_text_s - t.first_token_s, 0.28) << "first token " << t.first_token_s << ", first text "
                                                      << t.first_text_s;
  EXPECT_GE(t.last_token_s, t.first_text_s);
  EXPECT_EQ(r.completion.reasoning, "hm");
  EXPECT_EQ(r.completion.content, "A");
  EXPECT_EQ(t.text_chunk_s.size(), 2u);
}

TEST(StreamFirstTokenTest, ReasoningTextCountsAsTextWithoutARoleChunk) {
  SocketScript script;
  script.writes = {{0, kHead}, {150, Chunk(kReasoning)}, {0, Chunk(kText + "data: [DONE]\n\n") + "0\r\n\r\n"}};
  ScriptedSocketServer server(script);
  const StreamedReply r = Send(server.origin());
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_GE(r.timing.first_token_s, 0.14);
  EXPECT_EQ(r.timing.first_token_s, r.timing.first_text_s) << "the reasoning chunk is both";
}

// The fake server's planted prefill: the client's time to first token is
// measured from the written request, and the server's own timings are kept
// beside it.
TEST(StreamFirstTokenTest, PlantedPrefillIsMeasuredFromTheWrittenRequestWithTheServersTimings) {
  FakeServerOptions o;
  o.prefill_base_ms = 300;
  o.ms_per_token = 5;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) { return FakeReply{"one two three four", "", "stop"}; });
  const StreamedReply r = Send(server.origin());
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_GE(r.timing.sent_s, 0);
  EXPECT_GE(r.timing.first_token_s, 0.29);
  ASSERT_TRUE(r.completion.timings.present);
  EXPECT_GE(r.completion.timings.prompt_ms, 290);
  EXPECT_GE(r.timing.first_token_s * 1000, r.completion.timings.prompt_ms - 1)
      << "the client cannot see the first token before the server made it";
}

}  // namespace
}  // namespace evalrun::testing
