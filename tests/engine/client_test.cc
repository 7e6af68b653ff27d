// The OpenAI client's retries, backoff and refusals (evals/server/client.h),
// against a scripted transport and a fake clock: what each fault becomes,
// how long the backoff waits (1, 2, 4, ... s, capped) and that a Ctrl-C
// stops it, with no real second slept.
#include "evals/server/client.h"
#include "evals/base/redact.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/fake_client.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_transport.h"

namespace evalrun {
namespace {

using testing::ChatReplyBody;
using testing::Fault;
using testing::FakeClock;
using testing::FakeRequest;
using testing::FakeTransport;
using testing::HttpBroken;
using testing::HttpStatus;

const char kBroken[] = "connection closed or reset while reading the reply (or read timeout)";
const char kRefused[] = "could not connect (connection refused or host unreachable)";

ServerConfig Server() {
  ServerConfig s;
  s.base_url = "http://127.0.0.1:8080/v1";
  return s;
}

Prompt Question() {
  Prompt p;
  p.messages.push_back({"user", "What is 2 + 2?"});
  p.params.max_tokens = 16;
  return p;
}

// Runs the script and returns the result with the sleeps.
struct Outcome {
  CallResult result;
  std::vector<double> sleeps;
  int posts = 0;
};

Outcome CompleteOnce(const std::function<HttpResponse(int n, FakeClock* clock)>& script, RetryPolicy retry = {},
            CancelToken* cancel = nullptr) {
  FakeClock clock;
  int posts = 0;
  auto t = std::make_unique<FakeTransport>([&](const FakeRequest& r) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/v1/chat/completions");
    ++posts;
    return script(r.n, &clock);
  });
  OpenAiClient client(std::move(t), Server(), retry, cancel, &clock);
  Outcome o;
  o.result = client.Complete(Question());
  o.sleeps = clock.sleeps();
  o.posts = posts;
  return o;
}

TEST(ClientRetryTest, TwoBusyFailuresThenAnAnswerBackOffOneThenTwoSeconds) {
  Outcome o = CompleteOnce([](int n, FakeClock*) {
    return n < 2 ? HttpStatus(503, R"({"error":{"message":"no slot available"}})") : HttpStatus(200, ChatReplyBody("4"));
  });
  EXPECT_EQ(o.result.status, CallStatus::kOk) << o.result.error;
  EXPECT_EQ(o.result.completion.content, "4");
  EXPECT_EQ(o.result.attempts, 3);
  EXPECT_EQ(o.result.error, "");
  EXPECT_EQ(o.sleeps, (std::vector<double>{1, 2}));
}

TEST(ClientRetryTest, BackoffDoublesUpToItsCap) {
  RetryPolicy retry;
  retry.retries = 6;
  retry.backoff_initial_s = 1;
  retry.backoff_max_s = 5;
  Outcome o = CompleteOnce([](int, FakeClock*) { return HttpStatus(429, "slow down"); }, retry);
  EXPECT_EQ(o.result.status, CallStatus::kFailed);
  EXPECT_EQ(o.result.http_status, 429);
  EXPECT_EQ(o.result.attempts, 7);
  EXPECT_EQ(o.result.error, "POST /v1/chat/completions: HTTP 429: slow down");
  EXPECT_EQ(o.sleeps, (std::vector<double>{1, 2, 4, 5, 5, 5}));
}

// a 503 that is not "Loading model" (a JSON "busy", a proxy's
// HTML page) was handed back to the pool at once, 9 times in half a
// second, ignoring `retries`, the backoff and Retry-After.
TEST(ClientRetryTest, A503ThatIsNotLoadingObeysRetriesAndTheBackoff) {
  for (const std::string& body : {std::string(R"({"error":{"message":"busy","type":"server_busy"}})"),
                                  std::string("<html><body><h1>503 Service Temporarily Unavailable</h1>"
                                              "<hr><center>nginx</center></body></html>")}) {
    RetryPolicy retry;
    retry.retries = 2;
    Outcome o = CompleteOnce([&](int, FakeClock*) { return HttpStatus(503, body); }, retry);
    EXPECT_EQ(o.result.status, CallStatus::kFailed) << body;
    EXPECT_EQ(o.result.http_status, 503);
    EXPECT_EQ(o.result.attempts, 3);
    EXPECT_EQ(o.posts, 3);
    EXPECT_EQ(o.sleeps, (std::vector<double>{1, 2}));
  }
  Outcome then_ok = CompleteOnce([](int n, FakeClock*) {
    return n < 2 ? HttpStatus(503, R"({"error":{"message":"busy"}})") : HttpStatus(200, ChatReplyBody("4"));
  });
  EXPECT_EQ(then_ok.result.status, CallStatus::kOk);
  EXPECT_EQ(then_ok.result.attempts, 3);
}

TEST(ClientRetryTest, RetryAfterIsHonouredAndCapped) {
  auto busy = [](const std::string& after) {
    HttpResponse r = HttpStatus(503, R"({"error":{"message":"busy"}})");
    r.retry_after = after;
    return r;
  };
  Outcome o = CompleteOnce([&](int n, FakeClock*) { return n == 0 ? busy("7") : HttpStatus(200, ChatReplyBody("4")); });
  EXPECT_EQ(o.result.status, CallStatus::kOk);
  EXPECT_EQ(o.sleeps, (std::vector<double>{7}));
  // Longer than the cap: the cap. Shorter than the backoff, or a date: the backoff.
  o = CompleteOnce([&](int n, FakeClock*) { return n == 0 ? busy("86400") : HttpStatus(200, ChatReplyBody("4")); });
  EXPECT_EQ(o.sleeps, (std::vector<double>{kRetryAfterMaxS}));
  o = CompleteOnce([&](int n, FakeClock*) {
    if (n == 0) return busy("0");
    if (n == 1) return busy("Wed, 21 Oct 2015 07:28:00 GMT");
    return HttpStatus(200, ChatReplyBody("4"));
  });
  EXPECT_EQ(o.sleeps, (std::vector<double>{1, 2}));
  // 429 too.
  o = CompleteOnce([&](int n, FakeClock*) {
    HttpResponse r = HttpStatus(429, "slow down");
    r.retry_after = "5";
    return n == 0 ? r : HttpStatus(200, ChatReplyBody("4"));
  });
  EXPECT_EQ(o.sleeps, (std::vector<double>{5}));
}

TEST(ClientRetryTest, AnErrorQuotingTheKeyIsRedacted) {
  RegisterSecret("sk-client-test-secret");
  Outcome o = CompleteOnce([](int, FakeClock*) {
    return HttpStatus(401, R"({"error":{"message":"bad key: Authorization: Bearer sk-client-test-secret"}})");
  });
  EXPECT_EQ(o.result.error.find("sk-client-test-secret"), std::string::npos) << o.result.error;
  EXPECT_NE(o.result.error.find("[redacted]"), std::string::npos) << o.result.error;
}

TEST(ClientRetryTest, UnusableRepliesWith200AreRetried) {
  for (const std::string& body : {std::string("not json"), std::string(R"({"choices":[]})"),
                                  std::string(R"({"error":{"message":"oops"}})")}) {
    Outcome o = CompleteOnce([&](int n, FakeClock*) { return HttpStatus(200, n == 0 ? body : ChatReplyBody("4")); });
    EXPECT_EQ(o.result.status, CallStatus::kOk) << body;
    EXPECT_EQ(o.result.attempts, 2) << body;
    EXPECT_EQ(o.sleeps, std::vector<double>{1}) << body;
  }
  Outcome o = CompleteOnce([](int, FakeClock*) { return HttpStatus(200, R"({"choices":[]})"); });
  EXPECT_EQ(o.result.status, CallStatus::kFailed);
  EXPECT_EQ(o.result.error, "POST /v1/chat/completions: HTTP 200 but reply has no choices");
}

TEST(ClientRetryTest, OtherClientErrorsAreNotRetried) {
  Outcome o = CompleteOnce([](int, FakeClock*) { return HttpStatus(404, R"({"error":{"message":"no such model"}})"); });
  EXPECT_EQ(o.result.status, CallStatus::kFailed);
  EXPECT_EQ(o.result.attempts, 1);
  EXPECT_EQ(o.result.error, "POST /v1/chat/completions: HTTP 404: no such model");
  EXPECT_TRUE(o.sleeps.empty());
}

TEST(ClientRetryTest, ATooLongPromptIsFinalAndNamesTheSizes) {
  Outcome o = CompleteOnce([](int, FakeClock*) {
    return HttpStatus(400, R"({"error":{"code":400,"message":"the request exceeds the available context size",)"
                           R"("type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}})");
  });
  EXPECT_EQ(o.result.status, CallStatus::kTooLong);
  EXPECT_EQ(o.result.attempts, 1);
  EXPECT_EQ(o.result.too_long_prompt_tokens, 9000);
  EXPECT_EQ(o.result.too_long_n_ctx, 8192);
  EXPECT_TRUE(o.sleeps.empty());
}

TEST(ClientRetryTest, AReplyPastTheDeadlineIsAReadTimeoutNotAReset) {
  const double timeout = RequestTimeoutSeconds(Server(), Question());
  Outcome o = CompleteOnce([&](int n, FakeClock* clock) {
    if (n > 0) return HttpStatus(200, ChatReplyBody("4"));
    clock->Advance(timeout);  // the transport gave up at its deadline
    return HttpBroken(kBroken);
  });
  EXPECT_EQ(o.result.status, CallStatus::kOk);
  Outcome all = CompleteOnce([&](int, FakeClock* clock) {
    clock->Advance(timeout);
    return HttpBroken(kBroken);
  });
  EXPECT_EQ(all.result.status, CallStatus::kFailed);  // the server is slow, not gone
  char expected[64];
  std::snprintf(expected, sizeof expected, "no reply within %.1f s (read timeout", timeout);
  EXPECT_NE(all.result.error.find(expected), std::string::npos) << all.result.error;
}

TEST(ClientRetryTest, AnAnswerRecordsItsLatencyAndANewConnection) {
  FakeClock clock;
  FakeTransport* raw = nullptr;
  auto t = std::make_unique<FakeTransport>([&](const FakeRequest&) {
    clock.Advance(0.25);
    raw->set_connections_opened(2);  // the server had closed the first one
    return HttpStatus(200, ChatReplyBody("4"));
  });
  raw = t.get();
  OpenAiClient client(std::move(t), Server(), RetryPolicy{}, nullptr, &clock);
  CallResult r = client.Complete(Question());
  EXPECT_EQ(r.status, CallStatus::kOk);
  EXPECT_DOUBLE_EQ(r.latency_ms, 250);
  EXPECT_TRUE(r.new_connection);
}

TEST(ClientRetryTest, CancelDuringTheBackoffStopsAtOnce) {
  CancelToken cancel;
  FakeClock clock;
  clock.set_sleep_hook([&](double) { cancel.Cancel(); });  // Ctrl-C while it waits
  int posts = 0;
  auto t = std::make_unique<FakeTransport>([&](const FakeRequest&) {
    ++posts;
    return HttpStatus(503, R"({"error":{"message":"Loading model"}})");
  });
  OpenAiClient client(std::move(t), Server(), RetryPolicy{}, &cancel, &clock);
  CallResult r = client.Complete(Question());
  EXPECT_EQ(r.status, CallStatus::kCancelled);
  EXPECT_EQ(posts, 1);
  EXPECT_EQ(clock.sleeps(), std::vector<double>{1});
  // Cancelled before it starts: nothing is sent.
  CallResult again = client.Complete(Question());
  EXPECT_EQ(again.status, CallStatus::kCancelled);
  EXPECT_EQ(posts, 1);
}

// testing::FaultResult stands for these in the tests above the client: the
// fakes must say what the real client says.
TEST(ClientRetryTest, EachFaultEndsAsTheFlakyClientReportsIt) {
  const std::vector<std::pair<Fault, HttpResponse>> faults = {
      {Fault::kBusy503, HttpStatus(503, R"({"error":{"message":"no slot available"}})")},
      {Fault::kLoading503, HttpStatus(503, R"({"error":{"message":"Loading model"}})")},
      {Fault::kReset, HttpBroken(kBroken)},
      {Fault::kRefused, HttpBroken(kRefused)},
      {Fault::kHttp500, HttpStatus(500, R"({"error":{"message":"Internal Server Error"}})")},
  };
  for (const auto& [fault, reply] : faults) {
    Outcome o = CompleteOnce([&](int, FakeClock*) { return reply; });
    const CallResult want = testing::FaultResult(fault);
    EXPECT_EQ(o.result.status, want.status) << static_cast<int>(fault);
    EXPECT_EQ(o.result.http_status, want.http_status) << static_cast<int>(fault);
    EXPECT_EQ(o.result.attempts, want.attempts) << static_cast<int>(fault);
    EXPECT_EQ(o.result.error, want.error) << static_cast<int>(fault);
  }
  const double timeout = RequestTimeoutSeconds(Server(), Question());
  Outcome o = CompleteOnce([&](int, FakeClock* clock) {
    clock->Advance(timeout);
    return HttpBroken(kBroken);
  });
  const CallResult want = testing::FaultResult(Fault::kTimeout);
  EXPECT_EQ(o.result.status, want.status);
  EXPECT_EQ(o.result.attempts, want.attempts);
}

}  // namespace
}  // namespace evalrun
