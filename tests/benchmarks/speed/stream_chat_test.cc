// StreamingChat (evals/server/stream.h) against the fake llama-server with
// planted service times, and against raw sockets that send hostile streams.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/redact.h"
#include "evals/server/stream.h"
#include "tests/support/fake_server.h"
#include "tests/support/scripted_socket.h"

namespace evalrun::testing {
namespace {

using nlohmann::json;

Prompt UserPrompt(const std::string& text, int max_tokens) {
  Prompt p;
  p.messages = {{"user", text}};
  p.params.max_tokens = max_tokens;
  p.params.temperature = 0.0;
  p.params.cache_prompt = false;
  return p;
}

ServerConfig Config(const std::string& base_url) {
  ServerConfig c;
  c.base_url = base_url;
  return c;
}

StreamedReply Send(const std::string& base_url, const Prompt& p, const json* extra = nullptr,
                   const std::string& token = "", double timeout_s = 30) {
  StreamingChat chat(MakeHttpTransport(Config(base_url).Origin(), token), Config(base_url));
  return chat.Send(p, extra, timeout_s, nullptr);
}

void ExpectWithin(double got, double want, double rel, const char* what) {
  EXPECT_NEAR(got, want, want * rel) << what << ": got " << got << ", planted " << want;
}

class StreamChatTest : public ::testing::Test {
 protected:
  void StartServer(const FakeServerOptions& o) {
    server_ = std::make_unique<FakeServer>(o);
    ASSERT_TRUE(server_->Start());
    server_->SetResponder([](const json&) {
      FakeReply r;
      r.content = "The quick brown fox jumps over the lazy dog.";
      return r;
    });
  }
  std::unique_ptr<FakeServer> server_;
};

// The planted prefill and decode come back, within 1 %, on both clocks.
// The client's TTFT also holds the connection and the request's way in (a
// few ms on a loaded machine): the prefill is long enough for that to stay
// under 1 %.
TEST_F(StreamChatTest, PlantedTimesGiveTtftAndDecodeRate) {
  FakeServerOptions o;
  o.prefill_base_ms = 1500;
  o.prefill_ms_per_token = 3;
  o.ms_per_token = 15;
  StartServer(o);
  const json extra = {{"ignore_eos", true}};
  StreamedReply r = Send(server_->base_url(), UserPrompt("Tell me a story about a fox.", 40), &extra);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  const Completion& c = r.completion;
  EXPECT_EQ(c.completion_tokens, 40);
  ASSERT_GT(c.prompt_tokens, 5);
  EXPECT_EQ(c.finish_reason, "length");
  EXPECT_TRUE(r.saw_done);
  // One chunk per token: the role chunk, 40 tokens, the finish and the usage chunk.
  EXPECT_EQ(r.timing.text_chunk_s.size(), 40u);
  EXPECT_EQ(r.chunks, 43);
  const double prefill_s = (1500 + 3.0 * c.prompt_tokens) / 1000;
  const double decode_s = 39 * 0.015;
  ExpectWithin(r.timing.first_token_s, prefill_s, 0.01, "client TTFT");
  ExpectWithin(r.timing.last_token_s - r.timing.first_token_s, decode_s, 0.01, "client decode time");
  ExpectWithin(39 / (r.timing.last_token_s - r.timing.first_token_s), 1000.0 / 15, 0.01, "client decode rate");
  EXPECT_LE(r.timing.first_byte_s, r.timing.first_token_s);
  EXPECT_GE(r.timing.done_s, r.timing.last_token_s);
  // The server's own clock, in its timings.
  ASSERT_TRUE(c.timings.present);
  EXPECT_EQ(c.timings.prompt_n, c.prompt_tokens);
  EXPECT_EQ(c.timings.cache_n, 0);
  EXPECT_EQ(c.timings.predicted_n, 40);
  ExpectWithin(c.timings.prompt_ms, prefill_s * 1000, 0.01, "server prompt_ms");
  ExpectWithin(c.timings.predicted_ms, decode_s * 1000, 0.01, "server predicted_ms");
  // The text is whole, in order.
  EXPECT_EQ(c.content.rfind("The quick brown fox", 0), 0u) << c.content;
}

TEST_F(StreamChatTest, TheRequestAsksForAStreamWithUsageAndTheExtraKeys) {
  StartServer({});
  const json extra = {{"n_predict", 3}, {"ignore_eos", true}};
  StreamedReply r = Send(server_->base_url(), UserPrompt("hi", 8), &extra);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  const json req = server_->requests().back();
  EXPECT_EQ(req["stream"], true);
  EXPECT_EQ(req["stream_options"], json({{"include_usage", true}}));
  EXPECT_EQ(req["n_predict"], 3);
  EXPECT_EQ(req["max_tokens"], 8);
  EXPECT_EQ(req["cache_prompt"], false);
  EXPECT_EQ(r.completion.completion_tokens, 3);  // n_predict, the later key, wins (as llama-server)
  EXPECT_FALSE(r.completion.reply_id.empty());
}

TEST_F(StreamChatTest, PingsAreSkippedAndCounted) {
  FakeServerOptions o;
  o.prefill_base_ms = 10;
  o.ms_per_token = 120;
  o.ping_every_ms = 40;
  StartServer(o);
  const json extra = {{"ignore_eos", true}};
  StreamedReply r = Send(server_->base_url(), UserPrompt("hi", 4), &extra);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_GE(r.comments, 3);
  EXPECT_EQ(r.completion.completion_tokens, 4);
  EXPECT_EQ(r.timing.text_chunk_s.size(), 4u);
}

TEST_F(StreamChatTest, ACacheReusingServerSaysSo) {
  FakeServerOptions o;
  o.force_cache_n = 4;
  StartServer(o);
  StreamedReply r = Send(server_->base_url(), UserPrompt("a prompt of some length for the cache", 4));
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.completion.timings.cache_n, 4);
  EXPECT_EQ(r.completion.timings.prompt_n, r.completion.prompt_tokens - 4);
}

TEST_F(StreamChatTest, ReasoningDeltasAndAThinkBlockAreKeptApart) {
  StartServer({});
  server_->SetResponder([](const json&) {
    FakeReply r;
    r.reasoning_content = "first I think";
    r.content = "then I answer";
    return r;
  });
  StreamedReply r = Send(server_->base_url(), UserPrompt("q", 64));
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.completion.reasoning, "first I think");
  EXPECT_EQ(r.completion.content, "then I answer");
  EXPECT_EQ(r.completion.finish_reason, "stop");
  server_->SetResponder([](const json&) {
    FakeReply r;
    r.content = "<think>hmm</think>\n\nfour";
    return r;
  });
  r = Send(server_->base_url(), UserPrompt("q", 64));
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.completion.reasoning, "hmm");
  EXPECT_EQ(r.completion.content, "four");
  EXPECT_GT(r.timing.first_token_s, 0);
}

TEST_F(StreamChatTest, NeverMoreThanTheSlotsGenerateAtOnce) {
  FakeServerOptions o;
  o.slots = 2;
  o.prefill_base_ms = 20;
  o.ms_per_token = 10;
  StartServer(o);
  std::vector<std::thread> threads;
  std::vector<StreamedReply> replies(5);
  const json extra = {{"ignore_eos", true}};
  for (int i = 0; i < 5; ++i)
    threads.emplace_back([&, i] { replies[i] = Send(server_->base_url(), UserPrompt("hi " + std::to_string(i), 10), &extra); });
  for (auto& t : threads) t.join();
  for (const auto& r : replies) EXPECT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(server_->max_running(), 2);
}

TEST_F(StreamChatTest, APromptTooLongIsTooLong) {
  FakeServerOptions o;
  o.n_ctx = 32;
  StartServer(o);
  std::string text;
  for (int i = 0; i < 60; ++i) text += " word";
  StreamedReply r = Send(server_->base_url(), UserPrompt(text, 4));
  EXPECT_EQ(r.status, CallStatus::kTooLong) << r.error;
  EXPECT_EQ(r.http_status, 400);
  EXPECT_NE(r.error.find("POST /v1/chat/completions (streamed): HTTP 400"), std::string::npos) << r.error;
}

// Hostile streams, from a raw socket.
StreamedReply FromScript(const std::string& sse_body, bool terminate = true, const std::string& token = "") {
  std::string bytes = ReplyHead("Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n") + Chunk(sse_body);
  if (terminate) bytes += "0\r\n\r\n";
  ScriptedSocketServer server({{{0, bytes}}});
  return Send(server.origin() + "/v1", UserPrompt("q", 4), nullptr, token, 5);
}

const std::string kRole =
    R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"id":"c1"})"
    "\n\n";
const std::string kText = R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"A"}}],"id":"c1"})"
                          "\n\n";

TEST(StreamChatHostile, NoDoneIsAFailure) {
  StreamedReply r = FromScript(kRole + kText);
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_NE(r.error.find("without data: [DONE]"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("POST /v1/chat/completions"), std::string::npos) << r.error;
  r = FromScript(kRole + kText, /*terminate=*/false);  // and the connection closes mid-stream
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_NE(r.error.find("closed"), std::string::npos) << r.error;
}

TEST(StreamChatHostile, AChunkThatIsNotJsonIsAFailure) {
  StreamedReply r = FromScript(kRole + "data: {\"choices\": [\n\n" + kText + "data: [DONE]\n\n");
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_NE(r.error.find("not a JSON object"), std::string::npos) << r.error;
}

TEST(StreamChatHostile, AnErrorInTheStreamIsAFailureWithoutTheToken) {
  RegisterSecret("sk-stream-secret-1");
  StreamedReply r = FromScript(
      kRole + kText +
          R"(data: {"error":{"code":500,"message":"slot died; Authorization: Bearer sk-stream-secret-1","type":"server_error"}})"
          "\n\n",
      true, "sk-stream-secret-1");
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_NE(r.error.find("carries an error: slot died"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find("sk-stream-secret-1"), std::string::npos) << r.error;
}

TEST(StreamChatHostile, ChunksOfTwoRepliesOrEventsAfterDoneAreFailures) {
  std::string other = kText;
  other.replace(other.find("\"c1\""), 4, "\"c2\"");
  StreamedReply r = FromScript(kRole + other + "data: [DONE]\n\n");
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_NE(r.error.find("two replies"), std::string::npos) << r.error;
  r = FromScript(kRole + kText + "data: [DONE]\n\n" + kText);
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_NE(r.error.find("after data: [DONE]"), std::string::npos) << r.error;
}

TEST(StreamChatHostile, AGoodScriptedStreamIsRead) {
  const std::string usage =
      R"(data: {"choices":[],"id":"c1","usage":{"completion_tokens":1,"prompt_tokens":9},"timings":{"cache_n":0,"prompt_n":9,"prompt_ms":1.5,"predicted_n":1,"predicted_ms":0.5}})"
      "\n\n";
  StreamedReply r = FromScript(": ping\n\n" + kRole + kText + usage + "data: [DONE]\n\n");
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.completion.content, "A");
  EXPECT_EQ(r.completion.prompt_tokens, 9);
  EXPECT_EQ(r.completion.completion_tokens, 1);
  EXPECT_EQ(r.completion.timings.prompt_ms, 1.5);
  EXPECT_EQ(r.comments, 1);
  EXPECT_EQ(r.chunks, 3);
}

TEST(StreamChatHostile, NothingListensIsUnreachable) {
  int port;
  {
    ScriptedSocketServer s({});
    port = s.port();
  }
  StreamedReply r = Send("http://127.0.0.1:" + std::to_string(port) + "/v1", UserPrompt("q", 4));
  EXPECT_EQ(r.status, CallStatus::kUnreachable) << r.error;
}

}  // namespace
}  // namespace evalrun::testing
