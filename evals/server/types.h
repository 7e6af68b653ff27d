// The core value types that travel between the parts, the client, the pool
// and the scorers. Plain data; no behaviour beyond trivial helpers.
//
// Thread-safety: plain values.
#ifndef EVALRUN_EVALS_SERVER_TYPES_H_
#define EVALRUN_EVALS_SERVER_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace evalrun {

struct Message {
  std::string role;     // "system", "user", "assistant"
  std::string content;
};

// Generation parameters of one request. Unset optionals are not sent.
struct GenParams {
  int max_tokens = 0;
  std::optional<double> temperature;
  std::optional<int> top_k;
  std::optional<double> top_p;
  std::optional<int64_t> seed;
  std::optional<bool> enable_thinking;  // chat_template_kwargs.enable_thinking
  // reasoning_budget_tokens: llama-server (b10470) ends the reasoning after
  // this many tokens (per request; -1 there is unlimited).
  std::optional<int> reasoning_budget;
  // llama-server's cache_prompt (its default is true: reuse the KV of an
  // earlier request's common prefix).
  std::optional<bool> cache_prompt;
  // Stop strings: the answer ends before the first of them (none: not sent).
  std::vector<std::string> stop;
};

// A raw completion asking for the next token's logprobs (a part that
// measures them): messages[0].content is the prompt text as it is
// (no chat template), one token is generated at temperature 0, and the
// server's top `top_logprobs` candidates of that token come back.
struct LogprobRequest {
  int top_logprobs = 0;
  // POST /completion with n_probs (llama-server's own endpoint) instead of
  // POST <base_url>/completions with logprobs (OpenAI's legacy endpoint,
  // which llama-server, vLLM and SGLang all serve).
  bool llama_completion = false;
};

struct Prompt {
  std::vector<Message> messages;
  GenParams params;
  std::optional<LogprobRequest> logprobs;  // unset: a chat completion
};

// One candidate of a generated token: the server's token id (-1 when the
// server does not say: vLLM's legacy logprobs), its text and its natural
// log-probability.
struct TokenLogprob {
  int64_t id = -1;
  std::string token;
  double logprob = 0;
};

// llama.cpp's own `timings` object (absent on other engines: present=false).
struct ServerTimings {
  bool present = false;
  double prompt_n = 0, prompt_ms = 0, prompt_per_second = 0;
  double predicted_n = 0, predicted_ms = 0, predicted_per_second = 0;
  double cache_n = 0;
};

// One answer as the server gave it, with reasoning kept apart.
struct Completion {
  std::string content;        // the answer (reasoning removed)
  std::string reasoning;      // reasoning_content or a leading <think> block
  std::string finish_reason;  // "stop", "length", ...
  std::string reply_id;       // the reply's "id" (OpenAI: one per reply); "" when absent
  bool unclosed_think = false;  // an opened <think> never closed: no answer
  int prompt_tokens = -1;       // usage; -1 when the server did not say
  int completion_tokens = -1;
  ServerTimings timings;
  // A LogprobRequest's answer: the first generated token's candidates, most
  // likely first (empty for a chat completion).
  std::vector<TokenLogprob> top_logprobs;
};

enum class CallStatus {
  kOk,            // an answer
  kFailed,        // still failing after the retries (error says why)
  kCancelled,     // the run was interrupted before an answer
  kTooLong,       // the prompt does not fit the context one request can have
                  // (HTTP 400 exceed_context_size_error); never retried
  kCapacity,      // the server had no room for it now (HTTP 500 "Context size
                  // has been exceeded": a shared KV cache overflowed); not an
                  // attempt: the pool asks again with fewer beside it
  kUnreachable,   // no server may be there (refused; or out of retries after
                  // resets or 503 loading): the pool checks, and if it is
                  // gone waits for it to come back and asks again
};

// One attempt at a request: why it ended (evals/server/retry_cause.h names
// the causes: "ok", "connect_refused", "connection_cut", "timeout",
// "http_503", "server_parse_error", ...) and its HTTP status (0: none came).
struct AttemptRecord {
  std::string cause;
  int http_status = 0;
};

struct CallResult {
  CallStatus status = CallStatus::kFailed;
  int http_status = 0;     // of the last attempt (0: no response)
  int attempts = 0;
  std::string error;       // last error, for every status but kOk
  double latency_ms = 0;   // of the successful attempt
  bool new_connection = false;  // the answer came over a connection opened
                                // after an earlier one (the server may have
                                // been restarted: check it before trusting)
  int endpoint = 0;        // which of the request pool's endpoints answered
  int too_long_prompt_tokens = -1;  // kTooLong: the server's n_prompt_tokens
  int too_long_n_ctx = -1;          // and its n_ctx, when it said them
  // Every attempt, in order, with its cause (the last one "ok" for an
  // answer); the raw fallback's request is one of them ("raw_fallback").
  std::vector<AttemptRecord> attempt_log;
  // The chat answer was lost to the server's output parser (HTTP 500 "...
  // does not match the expected ... format") and recovered as raw text
  // (evals/server/raw_fallback.h): `completion` is that text.
  bool raw_fallback = false;
  // The same 500 and nothing recovered it: status kOk with an empty
  // completion, scored and counted wrong (error says the server's message).
  bool server_parse_error = false;
  Completion completion;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_TYPES_H_
