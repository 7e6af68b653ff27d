// Clients (evals/server/client.h) without a server, for the tests of what
// sits above the client (the request pool, the runner's parts):
//
//   FakeClient   answers from a script: a function of the prompt and the
//                call's number;
//   FlakyClient  wraps another client and, by a schedule, answers some
//                calls with the result OpenAiClient gives for a fault (a
//                busy 503, a restarting server, a reset, a read timeout, a
//                refused connection) instead of asking it: faults by
//                wrapping, after LevelDB's EnvWrapper, never `if (testing)`.
//
//   auto echo = std::make_unique<testing::FakeClient>(testing::FakeClient::Echo());
//   testing::FlakyClient flaky(std::move(echo), {Fault::kNone, Fault::kBusy503});
//   flaky.Complete(p);  // the echo
//   flaky.Complete(p);  // kCapacity, HTTP 503
//   flaky.Complete(p);  // the echo again (past the schedule's end)
//
// Both are used by one thread at a time, as a Client is; FakeClientFactory
// makes clients for several workers that share one script and one count.
// Tests only.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_CLIENT_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "evals/server/client.h"

namespace evalrun::testing {

class FakeClient : public Client {
 public:
  // `call` is 0-based: this client's calls, or with FakeClientFactory every
  // client's together. The script may be called from several threads at once
  // only when clients share it (FakeClientFactory).
  using Script = std::function<CallResult(const Prompt& prompt, int call)>;

  explicit FakeClient(Script script);
  FakeClient(Script script, std::shared_ptr<std::atomic<int>> shared_calls);

  CallResult Complete(const Prompt& prompt) override;

  // Calls counted so far (shared ones: by every client that shares them).
  int calls() const { return calls_->load(); }

  // Scripts: the last message's content as the answer.
  static Script Echo();

 private:
  Script script_;
  std::shared_ptr<std::atomic<int>> calls_;
};

// An answer: kOk, one attempt, `content` with finish_reason "stop".
CallResult Answer(const std::string& content);

// Clients for the pool's workers (one each), sharing `script` and the call
// count *calls (may be null).
ClientFactory FakeClientFactory(FakeClient::Script script,
                                std::shared_ptr<std::atomic<int>>* calls = nullptr);

// What a call ends with when the server misbehaves, as OpenAiClient reports
// it (see CallStatus):
enum class Fault {
  kNone,        // asks the wrapped client
  kBusy503,     // HTTP 503 other than loading (busy): retried like a 500, then kFailed
  kLoading503,  // HTTP 503 "Loading model" until the retries ran out: kUnreachable
  kReset,       // the connection broke on every attempt: kUnreachable
  kTimeout,     // no reply before the request's deadline: kFailed
  kRefused,     // nothing listens: kUnreachable at once
  kHttp500,     // HTTP 500 on every attempt: kFailed
};

// The CallResult OpenAiClient returns for `fault` (kNone: an empty kOk).
CallResult FaultResult(Fault fault);

class FlakyClient : public Client {
 public:
  // Call n (0-based) meets schedule(n).
  FlakyClient(std::unique_ptr<Client> inner, std::function<Fault(int call)> schedule);
  // Call n meets schedule[n]; calls past its end go through.
  FlakyClient(std::unique_ptr<Client> inner, std::vector<Fault> schedule);

  CallResult Complete(const Prompt& prompt) override;

  int calls() const { return calls_; }
  int faults() const { return faults_; }  // calls answered with a fault

 private:
  std::unique_ptr<Client> inner_;
  std::function<Fault(int)> schedule_;
  int calls_ = 0;
  int faults_ = 0;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_CLIENT_H_
