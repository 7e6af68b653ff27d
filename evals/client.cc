#include "evals/client.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "evals/openai_wire.h"

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
                           RetryPolicy retry, CancelToken* cancel)
    : transport_(std::move(transport)), server_(server), retry_(retry), cancel_(cancel) {}

CallResult OpenAiClient::Complete(const Prompt& prompt) {
  CallResult r;
  const std::string body = ChatRequestBody(prompt, server_.model);
  const std::string path = server_.PathPrefix() + "/chat/completions";
  const double timeout = RequestTimeoutSeconds(server_, prompt);
  double backoff = retry_.backoff_initial_s;
  for (int attempt = 0; attempt <= retry_.retries; ++attempt) {
    if (cancel_ && cancel_->cancelled()) {
      r.status = CallStatus::kCancelled;
      return r;
    }
    if (attempt > 0) {
      if (cancel_ ? !cancel_->SleepFor(backoff)
                  : (std::this_thread::sleep_for(std::chrono::duration<double>(backoff)), false)) {
        r.status = CallStatus::kCancelled;
        return r;
      }
      backoff = std::min(backoff * 2, retry_.backoff_max_s);
    }
    ++r.attempts;
    auto t0 = std::chrono::steady_clock::now();
    HttpResponse resp = transport_->Post(path, body, timeout);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.http_status = resp.status;
    if (!resp.transport_ok()) {
      // The transport cannot tell a read timeout from a reset; the clock can.
      if (ms + 50 >= timeout * 1000) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "no reply within %.1f s (read timeout: server.request_timeout_base_s + "
                      "max_tokens / server.min_decode_tps + the prompt at 50 tokens/s)", timeout);
        r.error = "POST " + path + ": " + buf;
      } else {
        r.error = "POST " + path + ": " + resp.error;
      }
      continue;
    }
    if (resp.status == 200) {
      Completion c;
      Status st = ParseChatReply(resp.body, &c);
      if (st.ok()) {
        r.status = CallStatus::kOk;
        r.completion = std::move(c);
        r.latency_ms = ms;
        r.error.clear();
        return r;
      }
      r.error = "POST " + path + ": HTTP 200 but " + st.message();
      continue;
    }
    r.error = "POST " + path + ": HTTP " + std::to_string(resp.status) + ": " + ErrorMessageOf(resp.body);
    bool retryable = resp.status >= 500 || resp.status == 429 || resp.status == 408;
    if (!retryable) break;
  }
  r.status = CallStatus::kFailed;
  return r;
}

}  // namespace evalrun
