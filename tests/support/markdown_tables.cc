#include "tests/support/markdown_tables.h"

#include <sstream>

namespace evalrun::testing {
namespace {

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

std::vector<std::string> TableCells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {  // past the leading '|'
    if (line[i] == '|' && line[i - 1] != '\\') {
      cells.push_back(cur);
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return cells;
}

std::string UnpadTables(const std::string& markdown) {
  std::string out;
  for (const std::string& line : Lines(markdown)) {
    if (line.empty() || line[0] != '|') {
      out += line + "\n";
      continue;
    }
    std::string row = "|";
    for (const std::string& c : TableCells(line)) {
      const std::string t = Trim(c);
      // A rule cell ("-----:") is written as its shortest form.
      const bool rule = !t.empty() && t.find_first_not_of("-:") == std::string::npos;
      row += rule ? (t.back() == ':' ? "--:|" : "---|") : " " + t + " |";
    }
    out += row + "\n";
  }
  if (!markdown.empty() && markdown.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

bool TablesAligned(const std::string& markdown, std::string* why) {
  std::vector<size_t> widths;  // the current table's
  int n = 0;
  for (const std::string& line : Lines(markdown)) {
    ++n;
    if (line.empty() || line[0] != '|') {
      widths.clear();
      continue;
    }
    std::vector<size_t> w;
    for (const std::string& c : TableCells(line)) w.push_back(CodePoints(c));
    if (widths.empty()) {
      widths = w;
    } else if (w != widths) {
      *why = "line " + std::to_string(n) + " has cells of other widths than the table's first line: " + line;
      return false;
    }
  }
  return true;
}

}  // namespace evalrun::testing
