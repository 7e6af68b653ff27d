#include "evals/publish/table_text.h"

#include <algorithm>
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

size_t TextWidth(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string MarkdownTable(const std::vector<std::string>& header, const std::string& align,
                          const std::vector<std::vector<std::string>>& rows) {
  const size_t cols = header.size();
  std::vector<size_t> width(cols, 3);  // "---" is the shortest rule
  auto cell = [&](const std::vector<std::string>& row, size_t i) -> std::string_view {
    return i < row.size() ? std::string_view(row[i]) : std::string_view();
  };
  for (size_t i = 0; i < cols; ++i) {
    width[i] = std::max(width[i], TextWidth(header[i]));
    for (const auto& row : rows) width[i] = std::max(width[i], TextWidth(cell(row, i)));
  }
  auto right = [&](size_t i) { return i < align.size() && align[i] == 'r'; };
  auto line = [&](const std::vector<std::string>& row) {
    std::string o = "|";
    for (size_t i = 0; i < cols; ++i) {
      const std::string_view c = cell(row, i);
      const std::string pad(width[i] - TextWidth(c), ' ');
      o += " ";
      o += right(i) ? pad + std::string(c) : std::string(c) + pad;
      o += " |";
    }
    return o + "\n";
  };
  std::string o = line(header) + "|";
  for (size_t i = 0; i < cols; ++i) o += right(i) ? std::string(width[i] + 1, '-') + ":|" : std::string(width[i] + 2, '-') + "|";
  o += "\n";
  for (const auto& row : rows) o += line(row);
  return o;
}

std::string MarkdownNotes(const nlohmann::json& notes, const MarkdownCellStyle& style) {
  if (notes.empty()) return "";
  std::string o = "## Notes\n\n";
  for (const auto& n : notes) o += "- " + MarkdownCell(JsonText(n), style) + "\n";
  return o + "\n";
}

}  // namespace evalrun
