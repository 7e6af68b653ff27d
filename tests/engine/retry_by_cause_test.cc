// Retry by cause (evals/server/retry_cause.h) and the raw-text fallback
// (evals/server/raw_fallback.h), one fake-server fault per cause, through
// the real http:// transport and OpenAiClient on a fake clock (the backoff
// is recorded, never slept): which causes are retried, how often, what each
// attempt's cause was, and what a parser refusal becomes.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/server/client.h"
#include "evals/server/raw_fallback.h"
#include "evals/server/retry_cause.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

Prompt Question() {
  Prompt p;
  p.messages.push_back({"user", "Which letter? A. one B. two C. three"});
  p.params.max_tokens = 32;
  p.params.temperature = 0.0;
  p.params.seed = 42;
  return p;
}

// A fake llama-server whose model answers with `fault` on its first
// `failures` chat requests (all of them for -1), then "Answer: C".
class CauseTest : public ::testing::Test {
 protected:
  void Serve(Fault fault, int failures, const std::string& content = "Answer: C") {
    server_ = std::make_unique<FakeServer>();
    server_->SetResponder([this, fault, failures, content](const nlohmann::json&) {
      FakeReply r{content, "", "stop"};
      const int n = chats_++;
      if (failures < 0 || n < failures) r.fault = fault;
      return r;
    });
    ASSERT_TRUE(server_->Start());
  }

  CallResult Ask(int retries, bool raw_fallback = true) {
    ServerConfig s;
    s.base_url = server_->base_url();
    s.raw_fallback = raw_fallback;
    RetryPolicy retry;
    retry.retries = retries;
    OpenAiClient client(MakeHttpTransport(server_->origin(), ""), s, retry, nullptr, &clock_);
    return client.Complete(Question());
  }

  static std::vector<std::string> Causes(const CallResult& r) {
    std::vector<std::string> v;
    for (const auto& a : r.attempt_log) v.push_back(a.cause + "/" + std::to_string(a.http_status));
    return v;
  }

  // The /completion requests the fake saw (the raw fallback's).
  std::vector<nlohmann::json> CompletionRequests() const {
    std::vector<nlohmann::json> v;
    for (const auto& b : server_->requests())
      if (b.contains("prompt")) v.push_back(b);
    return v;
  }

  std::unique_ptr<FakeServer> server_;
  std::atomic<int> chats_{0};
  FakeClock clock_;
};

TEST_F(CauseTest, AParserRefusalIsRecoveredAsRawTextAndMarked) {
  Serve(Fault::kParserRefusal, -1, "<think>hmm</think>Answer: C");
  const CallResult r = Ask(3);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_TRUE(r.raw_fallback);
  EXPECT_FALSE(r.server_parse_error);
  EXPECT_EQ(r.completion.content, "Answer: C");
  EXPECT_EQ(r.completion.reasoning, "hmm");
  EXPECT_EQ(r.completion.finish_reason, "stop");
  EXPECT_GT(r.completion.completion_tokens, 0);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"server_parse_error/500", "raw_fallback/200"}));
  EXPECT_EQ(server_->chat_requests(), 1) << "a parser refusal is not asked again as chat when the fallback is on";
  EXPECT_TRUE(clock_.sleeps().empty());
  // The fallback asked /completion with the templated prompt, the same
  // sampling and the parser that accepts anything.
  const auto raw = CompletionRequests();
  ASSERT_EQ(raw.size(), 1u);
  EXPECT_EQ(raw[0]["chat_parser"], kAcceptAnythingParser);
  EXPECT_EQ(raw[0]["n_predict"], 32);
  EXPECT_EQ(raw[0]["temperature"], 0.0);
  EXPECT_EQ(raw[0]["seed"], 42);
  EXPECT_NE(raw[0]["prompt"].get<std::string>().find("Which letter?"), std::string::npos);
}

TEST_F(CauseTest, WithTheFallbackOffAParserRefusalIsRetriedOnceThenAnsweredEmpty) {
  Serve(Fault::kParserRefusal, -1);
  const CallResult r = Ask(3, /*raw_fallback=*/false);
  ASSERT_EQ(r.status, CallStatus::kOk) << "a parser refusal is an answer counted wrong, never a failed request";
  EXPECT_TRUE(r.server_parse_error);
  EXPECT_FALSE(r.raw_fallback);
  EXPECT_EQ(r.completion.content, "");
  EXPECT_EQ(r.completion.finish_reason, "server_parse_error");
  EXPECT_NE(r.error.find("does not match the expected peg-native format"), std::string::npos) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"server_parse_error/500", "server_parse_error/500"}));
  EXPECT_EQ(server_->chat_requests(), 2);
  EXPECT_TRUE(CompletionRequests().empty());
  EXPECT_EQ(clock_.sleeps(), (std::vector<double>{1}));
}

TEST_F(CauseTest, WithNoAttemptLeftAParserRefusalIsAnsweredEmpty) {
  Serve(Fault::kParserRefusal, -1);
  const CallResult r = Ask(0);
  ASSERT_EQ(r.status, CallStatus::kOk);
  EXPECT_TRUE(r.server_parse_error);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_TRUE(CompletionRequests().empty()) << "retries: 0 allows one attempt in all, the fallback included";
}

TEST_F(CauseTest, ARepeatedIdentical500IsRetriedOnceOnly) {
  Serve(Fault::kHttp500, -1);
  const CallResult r = Ask(3);
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_EQ(r.http_status, 500);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"http_500/500", "http_500/500"}));
  EXPECT_EQ(server_->chat_requests(), 2);
  EXPECT_EQ(clock_.sleeps(), (std::vector<double>{1}));
}

TEST_F(CauseTest, A500ThenAnAnswerIsRetried) {
  Serve(Fault::kHttp500, 1);
  const CallResult r = Ask(3);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"http_500/500", "ok/200"}));
}

TEST_F(CauseTest, Busy503ThenAnAnswerBacksOffAndRecordsTheAttempts) {
  Serve(Fault::kHttp503Busy, 2);
  const CallResult r = Ask(3);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.completion.content, "Answer: C");
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"http_503/503", "http_503/503", "ok/200"}));
  EXPECT_EQ(clock_.sleeps(), (std::vector<double>{1, 2}));
}

TEST_F(CauseTest, Busy503ForeverStopsAtRetriesPlusOneAndIsAnOrdinaryFailure) {
  Serve(Fault::kHttp503Busy, -1);
  const CallResult r = Ask(2);
  EXPECT_EQ(r.status, CallStatus::kFailed) << "busy is not a server that went away";
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(server_->chat_requests(), 3);
}

TEST_F(CauseTest, ATooLongPromptIsNotRetriedAndRecordsItsKind) {
  Serve(Fault::kTooLong400, -1);
  const CallResult r = Ask(3);
  EXPECT_EQ(r.status, CallStatus::kTooLong);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"too_long/400"}));
  EXPECT_GT(r.too_long_prompt_tokens, 0);
  EXPECT_EQ(server_->chat_requests(), 1);
  EXPECT_TRUE(clock_.sleeps().empty());
}

TEST_F(CauseTest, ABadRequestIsNotRetriedAndRecordsItsKind) {
  Serve(Fault::kHttp400, -1);
  const CallResult r = Ask(3);
  EXPECT_EQ(r.status, CallStatus::kFailed);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"bad_request/400"}));
  EXPECT_EQ(server_->chat_requests(), 1);
}

TEST_F(CauseTest, ACutConnectionIsRetried) {
  Serve(Fault::kResetMidBody, 1);
  const CallResult r = Ask(3);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(Causes(r), (std::vector<std::string>{"connection_cut/0", "ok/200"}));
  EXPECT_EQ(clock_.sleeps(), (std::vector<double>{1}));
}

TEST(RetryRuleTest, TheBudgetHoldsWhateverTheCauses) {
  RetryRule rule(2);
  EXPECT_TRUE(rule.MayRetry(1, "http_503", "busy"));
  EXPECT_TRUE(rule.MayRetry(2, "connection_cut", ""));
  EXPECT_FALSE(rule.MayRetry(3, "http_503", "busy"));
  RetryRule fives(5);
  EXPECT_TRUE(fives.MayRetry(1, "http_500", "a"));
  EXPECT_TRUE(fives.MayRetry(2, "http_500", "b")) << "another 500 body: another chance";
  EXPECT_FALSE(fives.MayRetry(3, "http_500", "b")) << "the same 500 again";
  for (const char* final_cause : {"too_long", "bad_request", "http_4xx", "connect_refused", "capacity"})
    EXPECT_FALSE(RetryRule(5).MayRetry(1, final_cause, "")) << final_cause;
}

TEST(RetryCauseTest, StatusesAndTransportErrorsNameTheirCauses) {
  EXPECT_EQ(CauseOfStatus(500, "The model produced output that does not match the expected peg-native format", ""),
            "server_parse_error");
  EXPECT_EQ(CauseOfStatus(500, "Internal server error", ""), "http_500");
  EXPECT_EQ(CauseOfStatus(502, "bad gateway", ""), "http_5xx");
  EXPECT_EQ(CauseOfStatus(503, "no slot available", ""), "http_503");
  EXPECT_EQ(CauseOfStatus(404, "File Not Found", ""), "http_4xx");
  EXPECT_EQ(CauseOfStatus(400, "whatever", "too_long"), "too_long");
  EXPECT_EQ(CauseOfTransportError("could not connect (connection refused or host unreachable)", false),
            "connect_refused");
  EXPECT_EQ(CauseOfTransportError("connection closed or reset while reading the reply", false), "connection_cut");
  EXPECT_EQ(CauseOfTransportError("connection closed or reset while reading the reply", true), "timeout");
}

TEST(RawFallbackTest, TheRawReplySplitsReasoningAsAChatReplyWould) {
  Completion c;
  // The template opened the think block: the text starts inside it.
  ASSERT_TRUE(ParseRawCompletionReply(
                  R"({"content":"let me see</think>\n\nAnswer: B","stop_type":"eos","tokens_predicted":9,)"
                  R"("tokens_evaluated":40,"timings":{"prompt_n":40,"prompt_ms":12.5,"predicted_n":9}})",
                  "<|im_start|>assistant\n<think>\n", &c)
                  .ok());
  EXPECT_EQ(c.reasoning, "let me see");
  EXPECT_EQ(c.content, "Answer: B");
  EXPECT_EQ(c.finish_reason, "stop");
  EXPECT_EQ(c.prompt_tokens, 40);
  EXPECT_EQ(c.completion_tokens, 9);
  EXPECT_TRUE(c.timings.present);
  EXPECT_EQ(c.timings.prompt_ms, 12.5);
  // A closed empty think block in the prompt (thinking off): the text as it is.
  ASSERT_TRUE(ParseRawCompletionReply(R"({"content":"Answer: \ufffd A","stop_type":"limit"})",
                                      "<|im_start|>assistant\n<think>\n\n</think>\n\n", &c)
                  .ok());
  EXPECT_EQ(c.content, "Answer: \xEF\xBF\xBD A");
  EXPECT_EQ(c.finish_reason, "length");
  // Hostile replies are failures, never answers.
  for (const char* bad : {"not json", "[]", R"({"error":{"message":"x"}})", R"({"content":7})", "{}"})
    EXPECT_FALSE(ParseRawCompletionReply(bad, "", &c).ok()) << bad;
  std::string prompt;
  EXPECT_FALSE(ParseAppliedTemplate(R"({"prompt":null})", &prompt).ok());
  EXPECT_TRUE(ParseAppliedTemplate(R"({"prompt":"<|im_start|>user\nhi"})", &prompt).ok());
  EXPECT_EQ(prompt, "<|im_start|>user\nhi");
}

}  // namespace
}  // namespace evalrun::testing
