#include "evals/publish/table_text.h"

#include <cmath>
#include <cstdio>

#include "evals/base/json_fields.h"

namespace evalrun {

std::string FormatDouble(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

std::string FormatPoints(double fraction, const char* format) {
  double x = fraction * 100;
  if (std::fabs(x) < 0.005) x = 0;
  return FormatDouble(format, x);
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string MarkdownCell(std::string_view s, const MarkdownCellStyle& style) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '\n' || c == '\r' || (c == '\t' && style.tabs_as_spaces)) o += ' ';
    else o += c;
  }
  if (style.max_bytes > 0 && o.size() > style.max_bytes) o = o.substr(0, style.max_bytes - 3) + "...";
  return o;
}

std::string MarkdownNotes(const nlohmann::json& notes, const MarkdownCellStyle& style) {
  if (notes.empty()) return "";
  std::string o = "## Notes\n\n";
  for (const auto& n : notes) o += "- " + MarkdownCell(JsonText(n), style) + "\n";
  return o + "\n";
}

}  // namespace evalrun
