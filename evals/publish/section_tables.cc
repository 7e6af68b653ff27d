#include "evals/publish/section_tables.h"

#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"

namespace evalrun {

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
    h += "<h3>" + HtmlEscape(t.title) + "</h3><div class=\"wide\"><table><thead><tr>";
    for (const auto& c : t.columns) h += "<th>" + HtmlEscape(c) + "</th>";
    h += "</tr></thead><tbody>";
    for (const auto& row : t.rows) {
      h += "<tr>";
      for (size_t i = 0; i < t.columns.size(); ++i) h += "<td>" + HtmlEscape(i < row.size() ? row[i] : "") + "</td>";
      h += "</tr>";
    }
    h += "</tbody></table></div>";
    if (!t.note.empty()) h += "<p class=\"note\">" + HtmlEscape(t.note) + "</p>";
  }
  return h;
}

}  // namespace evalrun
