#include "tests/support/fake_client.h"

#include <utility>

namespace evalrun::testing {

FakeClient::FakeClient(Script script)
    : FakeClient(std::move(script), std::make_shared<std::atomic<int>>(0)) {}

FakeClient::FakeClient(Script script, std::shared_ptr<std::atomic<int>> shared_calls)
    : script_(std::move(script)), calls_(std::move(shared_calls)) {}

CallResult FakeClient::Complete(const Prompt& prompt) {
  const int call = calls_->fetch_add(1);
  return script_(prompt, call);
}

FakeClient::Script FakeClient::Echo() {
  return [](const Prompt& p, int) { return Answer(p.messages.empty() ? "" : p.messages.back().content); };
}

CallResult Answer(const std::string& content) {
  CallResult r;
  r.status = CallStatus::kOk;
  r.http_status = 200;
  r.attempts = 1;
  r.completion.content = content;
  r.completion.finish_reason = "stop";
  return r;
}

ClientFactory FakeClientFactory(FakeClient::Script script, std::shared_ptr<std::atomic<int>>* calls) {
  auto shared = std::make_shared<std::atomic<int>>(0);
  if (calls) *calls = shared;
  return [script = std::move(script), shared]() -> std::unique_ptr<Client> {
    return std::make_unique<FakeClient>(script, shared);
  };
}

CallResult FaultResult(Fault fault) {
  const std::string post = "POST /v1/chat/completions: ";
  CallResult r;
  r.attempts = 4;  // the first and RetryPolicy's 3 retries
  switch (fault) {
    case Fault::kNone:
      r.status = CallStatus::kOk;
      r.attempts = 1;
      break;
    case Fault::kBusy503:
      r.status = CallStatus::kFailed;
      r.http_status = 503;
      r.error = post + "HTTP 503: no slot available";
      break;
    case Fault::kLoading503:
      r.status = CallStatus::kUnreachable;
      r.http_status = 503;
      r.error = post + "HTTP 503: Loading model";
      break;
    case Fault::kReset:
      r.status = CallStatus::kUnreachable;
      r.error = post + "connection closed or reset while reading the reply (or read timeout)";
      break;
    case Fault::kTimeout:
      r.status = CallStatus::kFailed;
      r.error = post + "no reply within 120.0 s (read timeout: server.request_timeout_base_s + "
                       "max_tokens / server.min_decode_tps + the prompt at 50 tokens/s)";
      break;
    case Fault::kRefused:
      r.status = CallStatus::kUnreachable;
      r.attempts = 1;
      r.error = post + "could not connect (connection refused or host unreachable)";
      break;
    case Fault::kHttp500:
      r.status = CallStatus::kFailed;
      r.attempts = 2;  // the same 500 twice: not retried again (retry_cause.h)
      r.http_status = 500;
      r.error = post + "HTTP 500: Internal Server Error";
      break;
  }
  return r;
}

FlakyClient::FlakyClient(std::unique_ptr<Client> inner, std::function<Fault(int call)> schedule)
    : inner_(std::move(inner)), schedule_(std::move(schedule)) {}

FlakyClient::FlakyClient(std::unique_ptr<Client> inner, std::vector<Fault> schedule)
    : FlakyClient(std::move(inner), [schedule = std::move(schedule)](int call) {
        return call < static_cast<int>(schedule.size()) ? schedule[call] : Fault::kNone;
      }) {}

CallResult FlakyClient::Complete(const Prompt& prompt) {
  const Fault f = schedule_(calls_++);
  if (f == Fault::kNone) return inner_->Complete(prompt);
  ++faults_;
  return FaultResult(f);
}

}  // namespace evalrun::testing
