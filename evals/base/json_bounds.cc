#include "evals/base/json_bounds.h"

#include <cstring>

namespace evalrun {

Status CheckJsonBounds(std::string_view text, const std::string& source, size_t max_bytes, int max_depth) {
  if (text.size() > max_bytes)
    return Status::InvalidInput(source + ": " + std::to_string(text.size()) + " bytes of JSON, more than evalrun reads (" +
                                std::to_string(max_bytes >> 20) + " MiB)");
  int depth = 0;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char c = *p++;
    if (c == '"') {
      // Skip the string: to the next quote that is not escaped.
      while (p < end) {
        const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
        if (q == nullptr) return Status::Ok();  // unterminated: the parser says so
        size_t backslashes = 0;
        for (const char* b = q; b > p && b[-1] == '\\'; --b) ++backslashes;
        p = q + 1;
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return Status::InvalidInput(source + ": JSON nested deeper than " + std::to_string(max_depth) +
                                    " levels (at byte " + std::to_string(p - text.data()) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::Ok();
}

Status ParseJsonBounded(std::string_view text, const std::string& source, nlohmann::json* out, size_t max_bytes) {
  EVALRUN_RETURN_IF_ERROR(CheckJsonBounds(text, source, max_bytes));
  *out = nlohmann::json::parse(text, nullptr, false);
  if (out->is_discarded()) return Status::InvalidInput(source + ": not valid JSON");
  return Status::Ok();
}

nlohmann::json ParseJsonOrDiscarded(std::string_view text, size_t max_bytes) {
  if (!CheckJsonBounds(text, "", max_bytes).ok()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

nlohmann::json BoundedCopy(const nlohmann::json& v, const std::string& what, size_t max_bytes) {
  const std::string dump = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (dump.size() <= max_bytes) return v;
  return "(left out: " + std::to_string(dump.size()) + " bytes of JSON, over evalrun's " + std::to_string(max_bytes) +
         " byte bound for " + what + ")";
}

std::string BoundedString(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

}  // namespace evalrun
