#include "datasets/csv.h"

#include <algorithm>
#include <string>
#include <utility>

namespace evalrun {
namespace {

// True when text[i] starts a line break (LF, or CR followed by LF).
bool AtLineBreak(std::string_view text, size_t i) {
  return text[i] == '\n' || (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n');
}

// Length of the line break at text[i] (1 for LF, 2 for CRLF).
size_t LineBreakLength(std::string_view text, size_t i) { return text[i] == '\r' ? 2 : 1; }

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

Status ParseCsv(std::string_view text, std::vector<std::vector<std::string>>* rows,
                std::vector<size_t>* record_lines) {
  rows->clear();
  if (record_lines != nullptr) record_lines->clear();
  const size_t n = text.size();
  size_t i = 0;
  size_t line = 1;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;

  while (i < n) {
    if (AtLineBreak(text, i)) {  // empty line: skipped
      i += LineBreakLength(text, i);
      ++line;
      continue;
    }
    const size_t record_line = line;
    std::vector<std::string> record;
    while (true) {  // one field per iteration
      std::string field;
      if (i < n && text[i] == '"') {
        const size_t open_line = line;
        ++i;
        while (true) {
          size_t quote = text.find('"', i);
          if (quote == std::string_view::npos) {
            return Status::InvalidInput("line " + std::to_string(open_line) +
                                        ": quoted field is never closed (no matching '\"' before "
                                        "the end of the text)");
          }
          std::string_view piece = text.substr(i, quote - i);
          line += std::count(piece.begin(), piece.end(), '\n');
          field.append(piece);
          if (quote + 1 < n && text[quote + 1] == '"') {  // "" stands for one quote
            field.push_back('"');
            i = quote + 2;
            continue;
          }
          i = quote + 1;
          break;
        }
        if (i < n && text[i] != ',' && !AtLineBreak(text, i)) {
          return Status::InvalidInput("line " + std::to_string(line) + ": unexpected " +
                                      Quoted(text.substr(i, 1)) +
                                      " after the closing quote of a field (expected ',' or the "
                                      "end of the line)");
        }
      } else {
        size_t end = i;
        while (end < n && text[end] != ',' && !AtLineBreak(text, end)) ++end;
        field.assign(text.substr(i, end - i));
        i = end;
      }
      record.push_back(std::move(field));
      if (i >= n) break;
      if (text[i] == ',') {
        ++i;
        continue;
      }
      i += LineBreakLength(text, i);
      ++line;
      break;
    }
    rows->push_back(std::move(record));
    if (record_lines != nullptr) record_lines->push_back(record_line);
  }
  return Status::Ok();
}

Status CsvColumnIndices(const std::vector<std::string>& header,
                        const std::vector<std::string_view>& names, std::vector<size_t>* indices) {
  indices->clear();
  std::string missing;
  for (std::string_view name : names) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      missing += (missing.empty() ? "" : ", ") + Quoted(name);
      continue;
    }
    if (std::find(it + 1, header.end(), name) != header.end()) {
      return Status::InvalidInput("header: column " + Quoted(name) +
                                  " appears more than once (ambiguous)");
    }
    indices->push_back(static_cast<size_t>(it - header.begin()));
  }
  if (!missing.empty()) {
    return Status::InvalidInput("header: missing column(s) " + missing + " (the header has " +
                                std::to_string(header.size()) + " columns)");
  }
  return Status::Ok();
}

}  // namespace evalrun
