#include "evals/publish/section_tables.h"

#include <cstring>
#include <vector>

#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

// A figure: digits with at most a sign, separators, a unit sign or an
// interval's dash ("61.2", "-0.5", "12 / 40", "3.1 %", "—"), shown right-aligned.
bool IsFigure(const std::string& cell) {
  if (cell.empty() || cell == "—") return true;
  bool digit = false;
  for (unsigned char c : cell) {
    if (c >= '0' && c <= '9') digit = true;
    else if (c >= 0x80) continue;  // the dashes and ± of UTF-8 figures
    else if (!std::strchr("+-.,/% ()e", c)) return false;
  }
  return digit;
}

// Per column: whether every cell of it is a figure.
std::vector<bool> FigureColumns(const SectionTable& t) {
  std::vector<bool> num(t.columns.size(), !t.rows.empty());
  for (const auto& row : t.rows)
    for (size_t i = 0; i < t.columns.size(); ++i) num[i] = num[i] && IsFigure(i < row.size() ? row[i] : "");
  if (!num.empty()) num[0] = false;  // the first column names the row
  return num;
}

}  // namespace

std::string SectionTablesMarkdown(const nlohmann::json& tables) {
  std::string o;
  if (!tables.is_array()) return o;
  for (const auto& j : tables) {
    SectionTable t;
    if (!SectionTable::FromJson(j, &t) || t.columns.empty()) continue;
    o += "### " + MarkdownCell(t.title) + "\n\n";
    std::vector<std::string> head;
    for (const auto& c : t.columns) head.push_back(MarkdownCell(c));
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : t.rows) {
      std::vector<std::string> cells;
      for (size_t i = 0; i < t.columns.size(); ++i) cells.push_back(MarkdownCell(i < row.size() ? row[i] : ""));
      rows.push_back(std::move(cells));
    }
    o += MarkdownTable(head, "", rows) + "\n";
    if (!t.note.empty()) o += MarkdownCell(t.note) + "\n\n";
  }
  return o;
}

std::string SectionTablesHtml(const nlohmann::json& tables) {
  std::string h;
  if (!tables.is_array()) return h;
  for (const auto& j : tables) {
    SectionTable t;
    if (!SectionTable::FromJson(j, &t) || t.columns.empty()) continue;
    const std::vector<bool> num = FigureColumns(t);
    h += "<h3>" + HtmlEscape(t.title) + "</h3><div class=\"wide\"><table><thead><tr>";
    for (size_t i = 0; i < t.columns.size(); ++i)
      h += std::string(num[i] ? "<th class=\"num\">" : "<th>") + HtmlEscape(t.columns[i]) + "</th>";
    h += "</tr></thead><tbody>";
    for (const auto& row : t.rows) {
      h += "<tr>";
      for (size_t i = 0; i < t.columns.size(); ++i)
        h += std::string(num[i] ? "<td class=\"num\">" : "<td>") + HtmlEscape(i < row.size() ? row[i] : "") + "</td>";
      h += "</tr>";
    }
    h += "</tbody></table></div>";
    if (!t.note.empty()) h += "<p class=\"note\">" + HtmlEscape(t.note) + "</p>";
  }
  return h;
}

}  // namespace evalrun
