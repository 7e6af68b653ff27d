#include "evals/server/retry_cause.h"

namespace evalrun {

bool IsServerParseError(int http_status, std::string_view message) {
  return http_status == 500 && message.find("does not match the expected") != std::string_view::npos &&
         message.find("format") != std::string_view::npos;
}

std::string CauseOfStatus(int http_status, std::string_view message, const std::string& refusal_cause) {
  if (!refusal_cause.empty()) return refusal_cause;
  if (IsServerParseError(http_status, message)) return "server_parse_error";
  switch (http_status) {
    case 400: return "bad_request";
    case 408: return "http_408";
    case 429: return "http_429";
    case 500: return "http_500";
    case 503: return "http_503";
    default: break;
  }
  if (http_status >= 500) return "http_5xx";
  if (http_status >= 400) return "http_4xx";
  return "bad_reply";  // a 1xx/3xx where a reply was due
}

std::string CauseOfTransportError(const std::string& transport_error, bool timed_out) {
  if (transport_error.rfind("could not connect", 0) == 0) return "connect_refused";
  return timed_out ? "timeout" : "connection_cut";
}

bool RetryRule::MayRetry(int attempts, const std::string& cause, const std::string& body) {
  if (attempts > retries_) return false;
  if (cause == "ok" || cause == "connect_refused" || cause == "too_long" || cause == "capacity" ||
      cause == "bad_request" || cause == "http_4xx")
    return false;
  const bool is_5xx = cause == "http_500" || cause == "http_5xx" || cause == "server_parse_error";
  if (!is_5xx) return true;
  const bool repeated = seen_5xx_ && body == last_5xx_body_;
  seen_5xx_ = true;
  last_5xx_body_ = body;
  return !repeated;
}

}  // namespace evalrun
