// The request pool's attempt budget per question (PoolOptions::max_attempts):
// a question the pool asks again after an outage gets only what its earlier
// asks left (Client::CompleteWithin), one with nothing left
// fails without a request, attempts that could not connect are not
// counted, and the result carries every ask's attempts and causes. Were each
// ask given the client's whole budget again, a busy server would get 18
// attempts for 3 questions at retries 2.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "evals/run/request_pool.h"

namespace evalrun {
namespace {

// What one ask of the scripted client does: its attempts' causes and the
// status it ends with.
struct Ask {
  std::vector<std::string> causes;
  CallStatus status = CallStatus::kOk;
};

// Plays script[k] on the k-th ask of each prompt (the last one again after
// that), cut to the attempts the pool allows; records what it was allowed.
class ScriptedClient : public Client {
 public:
  struct Shared {
    std::vector<Ask> script;
    std::mutex mu;
    std::map<std::string, std::vector<int>> allowed;  // per prompt, each ask's max_attempts
  };
  explicit ScriptedClient(Shared* s) : s_(s) {}
  CallResult Complete(const Prompt& p) override { return CompleteWithin(p, 1000); }
  CallResult CompleteWithin(const Prompt& p, int max_attempts) override {
    size_t k;
    {
      std::lock_guard<std::mutex> l(s_->mu);
      auto& v = s_->allowed[p.messages[0].content];
      v.push_back(max_attempts);
      k = std::min(v.size() - 1, s_->script.size() - 1);
    }
    const Ask& a = s_->script[k];
    CallResult r;
    for (const std::string& c : a.causes) {
      if (r.attempts == max_attempts) break;
      ++r.attempts;
      r.attempt_log.push_back({c, c == "http_503" ? 503 : c == "ok" ? 200 : 0});
    }
    const bool answered = !r.attempt_log.empty() && r.attempt_log.back().cause == "ok";
    r.status = answered ? CallStatus::kOk : a.status;
    r.error = answered ? "" : "scripted failure";
    return r;
  }

 private:
  Shared* s_;
};

// The server was down every time a worker asks: the pool asks again.
class DownWatch : public ServerWatch {
 public:
  Status AwaitRecovery(CancelToken*, bool* was_down) override {
    *was_down = true;
    return Status::Ok();
  }
  Status CheckSame() override { return Status::Ok(); }
};

std::vector<Prompt> Prompts(int n) {
  std::vector<Prompt> v(n);
  for (int i = 0; i < n; ++i) v[i].messages = {{"user", "q" + std::to_string(i)}};
  return v;
}

std::vector<CallResult> RunPool(ScriptedClient::Shared* shared, int max_attempts, int n, DownWatch* watch) {
  PoolOptions o;
  o.max_attempts = max_attempts;
  o.watch = watch;
  RequestPool pool(4, [shared] { return std::make_unique<ScriptedClient>(shared); }, o);
  std::vector<size_t> order;
  for (int i = 0; i < n; ++i) order.push_back(i);
  return pool.Run(Prompts(n), order, nullptr, nullptr);
}

TEST(RequestPoolAttempts, AQuestionAskedAgainGetsOnlyWhatItsEarlierAsksLeft) {
  ScriptedClient::Shared s;
  s.script = {{{"http_503", "http_503", "http_503"}, CallStatus::kUnreachable}};
  DownWatch watch;
  const auto results = RunPool(&s, 3, 3, &watch);
  int client_attempts = 0;
  for (const auto& [prompt, allowed] : s.allowed) {
    EXPECT_EQ(allowed, std::vector<int>{3}) << prompt << ": asked again with attempts left";
    client_attempts += 3;
  }
  EXPECT_EQ(client_attempts, 9) << "retries: 2 and 3 questions: 9 attempts at most, not 18";
  ASSERT_EQ(results.size(), 3u);
  for (const CallResult& r : results) {
    EXPECT_EQ(r.status, CallStatus::kFailed);
    EXPECT_EQ(r.attempts, 3);
    EXPECT_EQ(r.attempt_log.size(), 3u);
    EXPECT_NE(r.error.find("no attempt left"), std::string::npos) << r.error;
  }
}

TEST(RequestPoolAttempts, AServerFoundDownSpendsNoBudgetAndTheResultCarriesBothAsks) {
  ScriptedClient::Shared s;
  s.script = {{{"connection_cut"}, CallStatus::kUnreachable}, {{"ok"}, CallStatus::kOk}};
  DownWatch watch;
  const auto results = RunPool(&s, 4, 2, &watch);
  for (const auto& [prompt, allowed] : s.allowed)
    EXPECT_EQ(allowed, (std::vector<int>{4, 4})) << prompt << ": a cut connection of a server found down is not counted";
  for (const CallResult& r : results) {
    ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
    EXPECT_EQ(r.attempts, 2);
    ASSERT_EQ(r.attempt_log.size(), 2u);
    EXPECT_EQ(r.attempt_log[0].cause, "connection_cut");
    EXPECT_EQ(r.attempt_log[1].cause, "ok");
  }
}

TEST(RequestPoolAttempts, AttemptsThatCouldNotConnectAreNotCounted) {
  ScriptedClient::Shared s;
  s.script = {{{"connect_refused"}, CallStatus::kUnreachable}, {{"ok"}, CallStatus::kOk}};
  DownWatch watch;
  const auto results = RunPool(&s, 2, 1, &watch);
  EXPECT_EQ(s.allowed["q0"], (std::vector<int>{2, 2})) << "nothing was sent: the budget is whole";
  ASSERT_EQ(results[0].status, CallStatus::kOk) << results[0].error;
  EXPECT_EQ(results[0].attempts, 2);
}

}  // namespace
}  // namespace evalrun
