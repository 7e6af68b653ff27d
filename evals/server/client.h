// The model client: one request in, one CallResult out.
//
// Thread-safety: a client belongs to one worker thread (it owns one
// connection); make one per thread.
#ifndef EVALRUN_EVALS_SERVER_CLIENT_H_
#define EVALRUN_EVALS_SERVER_CLIENT_H_

#include <functional>
#include <deque>
#include <memory>
#include <string>

#include "evals/base/cancel.h"
#include "evals/base/clock.h"
#include "evals/server/server_config.h"
#include "evals/server/http.h"
#include "evals/server/types.h"

namespace evalrun {

// Never throws: every failure is a CallResult status. One instance per
// worker thread (it owns one connection); not thread-safe itself.
class Client {
 public:
  virtual ~Client() = default;
  virtual CallResult Complete(const Prompt& prompt) = 0;
  // As Complete, but with at most `max_attempts` (>= 1) attempts: what the
  // request pool has left of a question's budget after asking it before
  // (request_pool.h, PoolOptions::max_attempts). By default the client's
  // own bound holds.
  virtual CallResult CompleteWithin(const Prompt& prompt, int max_attempts) {
    (void)max_attempts;
    return Complete(prompt);
  }
};

using ClientFactory = std::function<std::unique_ptr<Client>()>;

// The longest a Retry-After header (429, 503) makes a retry wait.
inline constexpr double kRetryAfterMaxS = 60;

struct RetryPolicy {
  int retries = 3;              // further attempts after the first
  double backoff_initial_s = 1;  // doubled after each failed attempt
  double backoff_max_s = 30;
};

// What an HTTP error reply means for the caller (see CallStatus and
// OpenAiClient below): kTooLong (with the server's n_prompt_tokens and
// n_ctx, -1 when it did not say them), kCapacity, kUnreachable (503
// "Loading model"), else kFailed.
struct Refusal {
  CallStatus status = CallStatus::kFailed;
  int n_prompt_tokens = -1, n_ctx = -1;
};
Refusal ClassifyRefusal(int http_status, const std::string& body);

// Per-request timeout derived from the work asked: a base for the prompt and
// queueing, plus the answer limit at a slow decode rate, plus the prompt at
// a slow prefill rate. Never a flat timeout that kills long answers.
double RequestTimeoutSeconds(const ServerConfig& server, const Prompt& prompt);

// Speaks POST {base_url}/chat/completions, or for a prompt with a
// LogprobRequest the raw completion of evals/server/completion_wire.h
// (POST {base_url}/completions or llama-server's /completion).
// Retries by cause (evals/server/retry_cause.h has the table): a broken or
// cut connection, a timeout, 503 (loading, busy), 429, 408 and unusable 200
// replies (not JSON, error object, no choices, a stale duplicate) are
// retried with backoff; a 5xx is retried, but one whose body repeats the
// previous 5xx's exactly is not retried again; other 4xx never. At most
// `retries` + 1 attempts in all, whatever the causes. A retry waits the
// backoff or the failed reply's Retry-After (delta-seconds, capped at
// kRetryAfterMaxS), whichever is longer. Every attempt is counted
// (attempts) and logged with its cause (attempt_log). Cancellation stops
// retries and backoff sleeps at once. The backoff sleeps and the timing of
// each attempt (latency_ms, and telling a read timeout from a reset) are on
// `clock` (not owned; the real one unless a test gives its own).
// The server's output parser (llama-server's HTTP 500 "... does not match
// the expected <format> format", IsServerParseError): with
// server.raw_fallback (the default) and an attempt left, the next attempt
// is the raw route of evals/server/raw_fallback.h, and its text is the
// answer (raw_fallback). When that is off, fails, or no attempt is left,
// the answer is empty and kOk with server_parse_error set: it is scored and
// counted wrong, never a failed request.
// Refusals that are not about this answer are handed to the pool at once,
// without retries (see CallStatus):
//   kTooLong      HTTP 400 exceed_context_size_error (llama-server, with its
//                 n_prompt_tokens and n_ctx), or vLLM's "maximum context length";
//   kCapacity     HTTP 500 "Context size has been exceeded" (a shared KV
//                 cache overflowed). Any other 503 (busy) is an ordinary
//                 retried failure;
//   kUnreachable  nothing listens (connection refused: at once, no retries),
//                 or the retries ran out and the last failure was a broken
//                 connection or HTTP 503 "Loading model" (a restart): the
//                 pool then asks the server's /health whether it is gone.
// An answer records whether it came over a new connection (new_connection).
// Errors recorded (CallResult::error) pass through Redact (redact.h): a
// server quoting the request's Authorization header back leaks nothing.
class OpenAiClient : public Client {
 public:
  OpenAiClient(std::unique_ptr<HttpTransport> transport, const ServerConfig& server,
               RetryPolicy retry, CancelToken* cancel, Clock* clock = RealClock::Default());
  CallResult Complete(const Prompt& prompt) override;
  CallResult CompleteWithin(const Prompt& prompt, int max_attempts) override;
  // False when `id` was taken before (a stale duplicate); else remembers it.
  bool TakeReplyId(const std::string& id);

 private:
  CallResult RawFallback(const Prompt& prompt, double timeout, CallResult r);
  static CallResult ParseErrorAnswer(CallResult r);

  std::unique_ptr<HttpTransport> transport_;
  ServerConfig server_;
  RetryPolicy retry_;
  CancelToken* cancel_;
  Clock* clock_;
  // The ids of the replies this client took, the newest last (a few
  // dozen): a reply that repeats one is a stale duplicate left on the
  // connection (a proxy's or server's extra reply), never this request's.
  std::deque<std::string> seen_reply_ids_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_CLIENT_H_
