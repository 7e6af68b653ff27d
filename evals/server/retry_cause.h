// Retry by cause: what one attempt at a request ended in, and whether
// another attempt may follow (OpenAiClient, client.h).
//
//   cause                 retried?
//   ok                    no (the answer)
//   connect_refused       no: nothing listens; the pool waits for the server
//   connection_cut        yes, with backoff (reset, closed, cut short)
//   timeout               yes, with backoff
//   http_503, http_429,   yes, with backoff (loading, busy; Retry-After)
//   http_408
//   bad_reply             yes, with backoff (a 200 that is not a usable
//                         reply, a reply that is not exactly one reply)
//   http_500, http_5xx,   yes, but a 500 whose body repeats the previous
//   server_parse_error    500's body exactly is not retried again (a greedy
//                         request gets the same 500 every time)
//   too_long              no: HTTP 400 exceed_context_size_error
//   capacity              no: the pool asks again with fewer beside it
//   bad_request, http_4xx no: 400 (other than too long), 401, 403, 404, ...
//   raw_fallback          the raw-text request after a server_parse_error
//                         (raw_fallback.h); not a retry of the chat
//
// Every cause retried counts against RetryPolicy::retries: a question gets
// at most retries + 1 chat attempts whatever the causes.
//
// Thread-safety: pure functions; a RetryRule belongs to one request.
#ifndef EVALRUN_EVALS_SERVER_RETRY_CAUSE_H_
#define EVALRUN_EVALS_SERVER_RETRY_CAUSE_H_

#include <string>
#include <string_view>

namespace evalrun {

// llama-server's output parser refused the answer (common/chat.cpp, b10470):
// HTTP 500 "The model produced output that does not match the expected
// <format> format". `message` is the error's message (ErrorMessageOf).
bool IsServerParseError(int http_status, std::string_view message);

// The cause of an HTTP error reply (status >= 300): "too_long" and
// "capacity" are decided by the caller (ClassifyRefusal, client.h) and
// passed in as `refusal_cause` when they apply ("" otherwise).
std::string CauseOfStatus(int http_status, std::string_view message, const std::string& refusal_cause);

// The cause of an attempt that got no reply: "connect_refused",
// "timeout" (`timed_out`) or "connection_cut".
std::string CauseOfTransportError(const std::string& transport_error, bool timed_out);

// Decides, attempt by attempt, whether a request may be sent again.
class RetryRule {
 public:
  explicit RetryRule(int retries) : retries_(retries) {}
  // After a failed attempt (the `attempts`-th, from 1) that ended in
  // `cause` with `body` (the reply's body for HTTP errors): whether one
  // more may follow. False when the budget is spent, the cause is never
  // retried, or a 5xx repeats the previous 5xx's body.
  bool MayRetry(int attempts, const std::string& cause, const std::string& body);

 private:
  int retries_;
  bool seen_5xx_ = false;
  std::string last_5xx_body_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_RETRY_CAUSE_H_
