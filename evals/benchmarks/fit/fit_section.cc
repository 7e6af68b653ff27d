#include "evals/benchmarks/fit/fit_section.h"

#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/table_notes.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using json = nlohmann::json;

std::string Num(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

std::string YesNo(const json& v) { return v.is_boolean() ? (v.get<bool>() ? "yes" : "no") : "—"; }

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }

// One size tried, as its cells (the notes' numbers last).
std::vector<std::string> StepCells(const json& s, TableNotes* notes) {
  std::vector<std::string> marks;
  if (s.value("capped", false))
    marks.push_back("the server gave a slot " + Num(s["n_ctx_slot"], "%.0f") + " tokens, less than asked: the prompt " +
                    "was sized to it (effective context " + Num(s["effective_context"], "%.0f") + ")");
  marks.push_back(Text(s.value("error", json())));
  marks.push_back(Text(s.value("engine_exit", json())).empty() ? "" : "engine: " + Text(s["engine_exit"]));
  return {Num(s["context"], "%.0f"),          Num(s["n_ctx_slot"], "%.0f"),
          Num(s["prompt_tokens"], "%.0f"),    YesNo(s.value("loaded", json())),
          YesNo(s.value("answered", json())), YesNo(s.value("correct", json())),
          Num(s["prompt_per_second"], "%.1f"), Num(s["predicted_per_second"], "%.1f"),
          Num(s["gpu_mem_peak_mib"], "%.0f"), notes->Refs(marks)};
}

std::string Lead(const json& fit) {
  return "The engine (" + Text(fit["engine"]) + ") at each context, one prompt filling " +
         Num(fit["fill"].is_number() ? json(fit["fill"].get<double>() * 100) : json(), "%.0f") +
         " % of a slot with a number to find. Largest that loaded and answered: " + Num(fit["largest"], "%.0f") +
         " tokens; largest that found the number: " + Num(fit["largest_correct"], "%.0f") + ".";
}

const std::vector<std::string>& Head() {
  static const std::vector<std::string> h = {"context", "slot context", "prompt tokens", "loaded", "answered",
                                             "found", "prefill t/s", "decode t/s", "GPU peak MiB", "notes"};
  return h;
}

}  // namespace

std::string RenderFitMarkdown(const json& fit) {
  if (!fit.is_object()) return "";
  std::string o = "## How much context fits\n\n" + MarkdownCell(Lead(fit)) + "\n\n";
  TableNotes notes;
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : fit.value("steps", json::array())) rows.push_back(StepCells(s, &notes));
  for (auto& r : rows)
    for (auto& c : r) c = MarkdownCell(c);
  return o + MarkdownTable(Head(), "rrrlllrrrl", rows) + "\n" + notes.Markdown();
}

std::string RenderFitHtml(const json& fit) {
  if (!fit.is_object()) return "";
  std::string h = "<section id=\"fit\"><h2>How much context fits</h2><p>" + HtmlEscape(Lead(fit)) +
                  "</p><div class=\"wide\"><table><thead><tr>";
  const std::string align = "rrrlllrrrr";
  for (size_t i = 0; i < Head().size(); ++i)
    h += std::string(align[i] == 'r' ? "<th class=\"num\">" : "<th>") + HtmlEscape(Head()[i]) + "</th>";
  h += "</tr></thead><tbody>";
  TableNotes notes;
  for (const auto& s : fit.value("steps", json::array())) {
    const std::vector<std::string> cells = StepCells(s, &notes);
    h += "<tr>";
    for (size_t i = 0; i < cells.size(); ++i)
      h += std::string(align[i] == 'r' ? "<td class=\"num\">" : "<td>") + HtmlEscape(cells[i]) + "</td>";
    h += "</tr>";
  }
  return h + "</tbody></table></div>" + notes.Html() + "</section>\n";
}

PageSection FitPageSection() {
  PageSection s;
  s.part = "fit";
  s.order = 50;  // after the quality parts, before the speed part (100)
  s.model = [](const json& results) { return JsonAt(results, {"parts", "fit"}); };
  s.markdown = RenderFitMarkdown;
  s.html = RenderFitHtml;
  return s;
}

}  // namespace evalrun
