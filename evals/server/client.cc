#include "evals/server/client.h"
#include "evals/base/redact.h"
#include "evals/base/json_bounds.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "evals/server/completion_wire.h"
#include "evals/server/openai_wire.h"
#include "evals/server/raw_fallback.h"
#include "evals/server/retry_cause.h"

namespace evalrun {

double RequestTimeoutSeconds(const ServerConfig& server, const Prompt& prompt) {
  size_t prompt_bytes = 0;
  for (const auto& m : prompt.messages) prompt_bytes += m.content.size();
  // ~4 bytes a token; 50 tokens/s is a slow prefill on a loaded machine.
  double prefill_s = static_cast<double>(prompt_bytes) / 4.0 / 50.0;
  double decode_s = std::max(1, prompt.params.max_tokens) / server.min_decode_tps;
  return server.request_timeout_base_s + prefill_s + decode_s;
}

OpenAiClient::OpenAiClient(std::unique_ptr<HttpTransport> transport, const ServerConfig& server,
                           RetryPolicy retry, CancelToken* cancel, Clock* clock)
    : transport_(std::move(transport)), server_(server), retry_(retry), cancel_(cancel), clock_(clock) {}

Refusal ClassifyRefusal(int http_status, const std::string& body) {
  Refusal r;
  auto j = ParseJsonOrDiscarded(body);
  const nlohmann::json* e = nullptr;
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_object()) e = &j["error"];
  const std::string type = e && e->contains("type") && (*e)["type"].is_string() ? (*e)["type"].get<std::string>() : "";
  const std::string message = ErrorMessageOf(body);
  if (http_status == 400 &&
      (type == "exceed_context_size_error" || message.find("exceeds the available context size") != std::string::npos ||
       message.find("maximum context length") != std::string::npos)) {
    // llama-server: exceed_context_size_error with n_prompt_tokens, n_ctx;
    // vLLM: "This model's maximum context length is N tokens ...".
    r.status = CallStatus::kTooLong;
    if (e && e->contains("n_prompt_tokens") && (*e)["n_prompt_tokens"].is_number_integer())
      r.n_prompt_tokens = (*e)["n_prompt_tokens"].get<int>();
    if (e && e->contains("n_ctx") && (*e)["n_ctx"].is_number_integer()) r.n_ctx = (*e)["n_ctx"].get<int>();
    return r;
  }
  // llama-server with a unified KV cache: every running request fails at
  // once when together they outgrow it.
  if (http_status == 500 && message.find("Context size has been exceeded") != std::string::npos) {
    r.status = CallStatus::kCapacity;
    return r;
  }
  // "Loading model": the server is (re)starting. Any other 503 (a JSON
  // "busy", llama-server's "no slot available" (an unavailable_error too),
  // a proxy's HTML page) is an ordinary failure: retried under `retries`
  // with the backoff and its Retry-After, never a capacity signal, and
  // never a reason for the pool to ask the question again.
  const bool busy = message.find("no slot available") != std::string::npos;
  if (http_status == 503 && !busy && (message.find("Loading model") != std::string::npos || type == "unavailable_error"))
    r.status = CallStatus::kUnreachable;
  return r;
}

namespace {

// Retry-After in seconds (delta-seconds only; an HTTP date or garbage: 0),
// at most kRetryAfterMaxS.
double RetryAfterSeconds(const std::string& value) {
  if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::min(std::stod(value), kRetryAfterMaxS);
}

// What follows one attempt, and its cause (retry_cause.h).
enum class Next { kRetry, kDone };
struct Outcome {
  Next next = Next::kRetry;
  std::string cause;
};

// The attempt got no reply: *r's error (and status when it is final) set.
Outcome AfterTransportError(const HttpResponse& resp, const std::string& path, double ms, double timeout,
                            CallResult* r, bool* server_may_be_gone) {
  // The transport cannot tell a read timeout from a reset; the clock can
  // (a reply still trickling in when the deadline passed says so itself).
  const bool trickling = resp.error.find("still arriving") != std::string::npos;
  if (ms + 50 >= timeout * 1000 && !trickling) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "no reply within %.1f s (read timeout: server.request_timeout_base_s + "
                  "max_tokens / server.min_decode_tps + the prompt at 50 tokens/s)", timeout);
    r->error = "POST " + path + ": " + buf;
    return {Next::kRetry, "timeout"};
  }
  r->error = Redact("POST " + path + ": " + resp.error);
  if (trickling) return {Next::kRetry, "timeout"};
  if (resp.error.rfind("could not connect", 0) == 0) {
    // Nothing listens: the server is gone (or restarting). No retries:
    // the pool waits for it (CallStatus::kUnreachable).
    r->status = CallStatus::kUnreachable;
    return {Next::kDone, "connect_refused"};
  }
  *server_may_be_gone = resp.error.find("evalrun's limit") == std::string::npos;
  return {Next::kRetry, CauseOfTransportError(resp.error, false)};
}

// The attempt got a reply: an answer or a final refusal (kDone, *r's
// status set), or a failure whose cause says whether to try again.
Outcome AfterReply(const HttpResponse& resp, const std::string& path, bool raw, double ms, CallResult* r,
                   bool* server_may_be_gone) {
  if (resp.status == 200) {
    Completion c;
    Status st = raw ? ParseCompletionReply(resp.body, &c) : ParseChatReply(resp.body, &c);
    if (!st.ok()) {
      r->error = Redact("POST " + path + ": HTTP 200 but " + st.message());
      return {Next::kRetry, "bad_reply"};
    }
    r->status = CallStatus::kOk;
    r->completion = std::move(c);
    r->latency_ms = ms;
    r->error.clear();
    return {Next::kDone, "ok"};
  }
  const std::string message = ErrorMessageOf(resp.body);
  r->error = Redact("POST " + path + ": HTTP " + std::to_string(resp.status) + ": " + message);
  const Refusal refusal = ClassifyRefusal(resp.status, resp.body);
  if (refusal.status == CallStatus::kTooLong || refusal.status == CallStatus::kCapacity) {
    r->status = refusal.status;
    r->too_long_prompt_tokens = refusal.n_prompt_tokens;
    r->too_long_n_ctx = refusal.n_ctx;
    // Capacity is not an attempt at an answer (the pool asks again); too
    // long was asked once, and that is final.
    if (refusal.status == CallStatus::kCapacity) --r->attempts;
    return {Next::kDone, refusal.status == CallStatus::kTooLong ? "too_long" : "capacity"};
  }
  *server_may_be_gone = refusal.status == CallStatus::kUnreachable;  // 503 loading: retried, then the pool's
  return {Next::kRetry, CauseOfStatus(resp.status, message, "")};
}

}  // namespace

bool OpenAiClient::TakeReplyId(const std::string& id) {
  if (id.empty()) return true;
  if (std::find(seen_reply_ids_.begin(), seen_reply_ids_.end(), id) != seen_reply_ids_.end()) return false;
  seen_reply_ids_.push_back(id);
  if (seen_reply_ids_.size() > 64) seen_reply_ids_.pop_front();
  return true;
}

CallResult OpenAiClient::Complete(const Prompt& prompt) { return CompleteWithin(prompt, retry_.retries + 1); }

CallResult OpenAiClient::CompleteWithin(const Prompt& prompt, int max_attempts) {
  CallResult r;
  // A chat completion, or a raw one with next-token logprobs (a measurement).
  const bool raw = prompt.logprobs.has_value();
  const std::string body = raw ? CompletionRequestBody(prompt, server_.model) : ChatRequestBody(prompt, server_.model);
  const std::string path =
      raw ? CompletionPath(*prompt.logprobs, server_.PathPrefix()) : server_.PathPrefix() + "/chat/completions";
  const double timeout = RequestTimeoutSeconds(server_, prompt);
  const int connections_before = transport_->connections_opened();
  double backoff = retry_.backoff_initial_s;
  bool server_may_be_gone = false;  // the last failure: no connection, or a restarting server
  double retry_after = 0;           // the last reply's Retry-After, capped
  const int retries = std::clamp(max_attempts - 1, 0, retry_.retries);
  RetryRule rule(retries);
  std::string cause;
  for (int attempt = 0;; ++attempt) {
    const bool slept = attempt == 0 || clock_->SleepFor(std::max(backoff, retry_after), cancel_);
    if (!slept || (cancel_ && cancel_->cancelled())) {
      r.status = CallStatus::kCancelled;
      return r;
    }
    if (attempt > 0) backoff = std::min(backoff * 2, retry_.backoff_max_s);
    ++r.attempts;
    const Stopwatch attempt_time(clock_);
    HttpResponse resp = transport_->Post(path, body, timeout);
    const double ms = attempt_time.Seconds() * 1000.0;
    r.http_status = resp.status;
    retry_after = RetryAfterSeconds(resp.retry_after);
    server_may_be_gone = false;
    Outcome out = resp.transport_ok() ? AfterReply(resp, path, raw, ms, &r, &server_may_be_gone)
                                      : AfterTransportError(resp, path, ms, timeout, &r, &server_may_be_gone);
    if (out.next == Next::kDone && r.status == CallStatus::kOk && !TakeReplyId(r.completion.reply_id)) {
      // An earlier reply again: what answers this request may still be on
      // its way on this connection, so the connection goes too.
      transport_->DropConnection();
      r.status = CallStatus::kFailed;
      r.error = "POST " + path + ": the reply repeats an earlier reply (id " + r.completion.reply_id +
                "), not this request's; the connection was closed";
      r.completion = Completion();
      out = {Next::kRetry, "bad_reply"};
    }
    cause = out.cause;
    if (out.cause != "capacity") r.attempt_log.push_back({out.cause, resp.status});
    if (out.next == Next::kDone) {
      if (r.status == CallStatus::kOk) r.new_connection = transport_->connections_opened() > connections_before;
      return r;
    }
    if (cause == "server_parse_error" && !raw && server_.raw_fallback && r.attempts <= retries) {
      r = RawFallback(prompt, timeout, std::move(r));
      r.new_connection = transport_->connections_opened() > connections_before;
      return r;
    }
    if (!rule.MayRetry(r.attempts, cause, resp.body)) break;
  }
  if (cause == "server_parse_error") return ParseErrorAnswer(std::move(r));
  // Out of retries. If the last failure says the server may be gone, the
  // pool finds out: a server that answers /health at once makes this an
  // ordinary failure, one that is down is waited for.
  r.status = server_may_be_gone ? CallStatus::kUnreachable : CallStatus::kFailed;
  return r;
}

// The chat answer was refused by the server's parser: the same question on
// the raw route (raw_fallback.h), one more attempt.
CallResult OpenAiClient::RawFallback(const Prompt& prompt, double timeout, CallResult r) {
  ++r.attempts;
  const Stopwatch time(clock_);
  RawFallbackResult raw = AskRawText(transport_.get(), prompt, server_.model, timeout);
  r.attempt_log.push_back({raw.ok ? "raw_fallback" : "raw_fallback_failed", raw.http_status});
  if (!raw.ok) {
    r.error += "; " + raw.error;
    return ParseErrorAnswer(std::move(r));
  }
  r.status = CallStatus::kOk;
  r.http_status = raw.http_status;
  r.raw_fallback = true;
  r.latency_ms = time.Seconds() * 1000.0;
  r.completion = std::move(raw.completion);
  r.error.clear();
  return r;
}

// Nothing recovered the answer the server's parser refused: an empty
// answer, scored (and counted wrong) with the cause, never a failure.
CallResult OpenAiClient::ParseErrorAnswer(CallResult r) {
  r.status = CallStatus::kOk;
  r.server_parse_error = true;
  r.completion = Completion();
  r.completion.finish_reason = "server_parse_error";
  return r;
}

}  // namespace evalrun
