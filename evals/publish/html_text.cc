#include "evals/publish/html_text.h"

namespace evalrun {

using nlohmann::json;

std::string HtmlEscape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string JsonForScriptBlock(const json& j) {
  const std::string raw = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string o;
  o.reserve(raw.size() + raw.size() / 16);
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    // '<', '>' and '&' can only occur inside JSON strings, where \u escapes
    // mean the same characters.
    if (c == '<') o += "\\u003c";
    else if (c == '>') o += "\\u003e";
    else if (c == '&') o += "\\u0026";
    else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < raw.size() &&
             static_cast<unsigned char>(raw[i + 1]) == 0x80 &&
             (static_cast<unsigned char>(raw[i + 2]) == 0xA8 || static_cast<unsigned char>(raw[i + 2]) == 0xA9)) {
      o += static_cast<unsigned char>(raw[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      o += c;
    }
  }
  return o;
}

std::string Utf8Prefix(std::string_view s, size_t max_bytes, bool* cut) {
  if (s.size() <= max_bytes) {
    *cut = false;
    return std::string(s);
  }
  *cut = true;
  size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to a sequence start.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end));
}

std::string Utf8Shortened(std::string_view s, size_t max_bytes) {
  bool cut = false;
  std::string p = Utf8Prefix(s, max_bytes, &cut);
  return cut ? p + "…" : p;
}

}  // namespace evalrun
