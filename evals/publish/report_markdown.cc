#include "evals/publish/report_markdown.h"

#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/failed_requests.h"
#include "evals/publish/page_section.h"
#include "evals/publish/section_tables.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string NumCell(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

constexpr const char* kNoScoresWhere = "The procedures' figures follow in their own sections.";

// Whether any part counted answers of this field (raw_fallback,
// server_parse_error): its column is shown only then.
bool AnyCounted(const json& summary, const char* key) {
  for (const auto& r : summary)
    if (r.contains(key) && r[key].is_number() && r[key].get<double>() > 0) return true;
  return false;
}

// The score table of every part.
void ResultsTable(const json& m, std::string* o) {
  if (m["summary"].empty()) {  // only procedures: no scores, never an empty table
    *o += "## Results\n\nNo question part in this run: nothing scored. " + std::string(kNoScoresWhere) + "\n\n";
    return;
  }
  const bool fallback = AnyCounted(m["summary"], "raw_fallback");
  const bool parse_errors = AnyCounted(m["summary"], "server_parse_error");
  std::vector<std::string> head = {"part", "metric", "score (%)", "± stderr", "n", "cut-off", "no answer", "failed"};
  if (fallback) head.push_back("raw fallback");
  if (parse_errors) head.push_back("parser errors");
  head.insert(head.end(), {"prompt tok/s", "decode tok/s"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : m["summary"]) {
    std::vector<std::string> row = {
        MarkdownCell(JsonText(r["part"])), MarkdownCell(JsonText(r["metric"])), NumCell(r["score"], "%.2f"),
        r["stderr"].is_number() ? "± " + FormatDouble("%.2f", r["stderr"].get<double>()) : "—",
        NumCell(r["n"], "%.0f"), NumCell(r["cut_off"], "%.0f"), NumCell(r["no_answer"], "%.0f"),
        NumCell(r["failed"], "%.0f")};
    if (fallback) row.push_back(NumCell(r.value("raw_fallback", json(0)), "%.0f"));
    if (parse_errors) row.push_back(NumCell(r.value("server_parse_error", json(0)), "%.0f"));
    row.push_back(NumCell(r["prompt_tps"], "%.1f"));
    row.push_back(NumCell(r["decode_tps"], "%.1f"));
    rows.push_back(std::move(row));
  }
  *o += "## Results\n\n" + MarkdownTable(head, std::string("llrrrrrr") + (fallback ? "r" : "") +
                                                      (parse_errors ? "r" : "") + "rr", rows);
  *o += "\nScores in percent. ± stderr: the binomial standard error sqrt(p (1 - p) / n) for accuracies";
  for (const auto& n : m.value("stderr_notes", json::array()))
    *o += "; for " + MarkdownCell(JsonText(n["parts"])) + ", " + MarkdownCell(JsonText(n["meaning"]));
  *o += ". cut-off: answers that hit max_tokens; no answer: no choice could be read; failed: requests that failed "
        "after retries, not scored (listed in the part's failed.jsonl). ";
  if (fallback)
    *o += "raw fallback: answers the server's output parser could not parse (HTTP 500), recovered from its raw "
          "text and scored as usual. ";
  if (parse_errors)
    *o += "parser errors: answers lost to the server's output parser (HTTP 500) with nothing to recover, counted "
          "wrong. ";
  *o += "Speeds: the server's own timings, token-weighted over the part.\n\n";
}

// The fraction kind's scores by context length and task.
void ByLengthTable(const json& m, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  if (!m["by_length"].is_object()) return;
  const json& r = m["by_length"];
  line("### " + MarkdownCell(JsonText(r["title"])) + " by length");
  line("");
  std::vector<std::string> head = {"length", "mean"};
  for (const auto& t : r["tasks"]) head.push_back(MarkdownCell(JsonText(t)));
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : r["lengths"]) {
    std::vector<std::string> row = {MarkdownCell(JsonText(l["length"])), NumCell(l["score"], "%.2f")};
    for (const auto& t : r["tasks"]) {
      const json& v = l["tasks"].contains(JsonText(t)) ? l["tasks"][JsonText(t)] : json();
      row.push_back(NumCell(v, "%.2f"));
    }
    rows.push_back(std::move(row));
  }
  *o += MarkdownTable(head, "l" + std::string(head.size() - 1, 'r'), rows);
  line("");
}

// A table per category dimension.
void CategoryTables(const json& m, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  for (const auto& c : m["categories"]) {
    line("### " + MarkdownCell(JsonText(c["title"])));
    line("");
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : c["rows"])
      rows.push_back({MarkdownCell(JsonText(r["name"])), NumCell(r["n"], "%.0f"), NumCell(r["correct"], "%.0f"),
                      NumCell(r["score"], "%.2f")});
    *o += MarkdownTable({MarkdownCell(JsonText(c["dimension"])), "n", "correct", "score (%)"}, "lrrr", rows);
    line("");
  }
}

// Run-to-run noise (--repeat 2).
void RepeatSection(const json& m, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  if (!m.value("repeats", json()).is_array()) return;
  line("## Run-to-run noise (--repeat 2)");
  line("");
  line("Every part was run twice (the second in `repeat-2/`). " +
       (JsonText(m["repeat_formula"]).empty() ? std::string()
                                              : MarkdownCell(JsonText(m["repeat_formula"])) + "; alpha 0.05, power 0.8. ") +
       "A difference from another run below the detectable difference is within noise" +
       JsonText(m.value("repeat_clauses", json(""))) + ".");
  line("");
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : m["repeats"]) {
    std::string mde = r["mde"].is_number()         ? NumCell(r["mde"], "%.2f")
                      : r["mde_below"].is_number() ? "< " + NumCell(r["mde_below"], "%.2f") + " (no flips)"
                      : r["kld_mean"].is_number()  ? "KLD mean " + NumCell(r["kld_mean"], "%.3g") + ", max " +
                                                        NumCell(r["kld_max"], "%.3g")
                                                   : "";
    rows.push_back({MarkdownCell(JsonText(r["part"])), NumCell(r["flips"], "%.0f") + " / " + NumCell(r["pairs"], "%.0f"),
                    NumCell(r["flip_rate"], "%.2f"), mde});
  }
  *o += MarkdownTable({"part", "flips", "flip rate (%)", "detectable difference (pp)"}, "lrrr", rows);
  line("");
  for (const auto& r : m["repeats"])
    line("- " + MarkdownCell(JsonText(r["part"])) + ": " + MarkdownCell(JsonText(r["text"])));
  line("");
}

// The words before the engine's command, by where it came from.
std::string CommandLead(const std::string& source) {
  return source == "server.command" ? "The engine's command as evalrun ran it (the card's server.command):"
                                    : "The command the server was started with (the card's server.launch):";
}

// The setup and the load on the machine.
void SetupSection(const json& m, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  line("## Setup");
  line("");
  std::vector<std::vector<std::string>> rows;
  for (const auto& kv : m["setup"]) rows.push_back({MarkdownCell(JsonText(kv[0])), MarkdownCell(JsonText(kv[1]))});
  *o += MarkdownTable({"", ""}, "ll", rows);
  line("");
  if (const json& c = m.value("setup_command", json()); c.is_object()) {
    line(CommandLead(JsonText(c["source"])));
    line("");
    line("    " + JsonText(c["line"]));
    line("");
  }
  line("## Machine load");
  line("");
  if (m["load"].is_object()) {
    if (!JsonText(m["load"]["text"]).empty()) line(MarkdownCell(JsonText(m["load"]["text"])));
    line("");
    for (const auto& d : m["load"]["details"]) line("- " + MarkdownCell(JsonText(d)));
  } else {
    line("No busy-process summary was recorded for this run.");
  }
  line("");
}

}  // namespace

std::string RenderReportMarkdown(const json& m) {
  std::string o;
  o += "# " + JsonText(m["title"]) + "\n\n";
  if (!JsonText(m["subtitle"]).empty()) o += MarkdownCell(JsonText(m["subtitle"])) + "\n\n";
  ResultsTable(m, &o);
  o += FailedRequestsMarkdown(m.value("failures", json::array()));  // evals/publish/failed_requests.h
  for (const auto& f : m.value("under_the_table", json::array())) o += JsonText(f["markdown"]);
  // The sections a kind renders itself with the results (kind_view.h).
  for (const auto& f : m.value("with_the_results", json::array())) o += JsonText(f["markdown"]);
  o += RenderPageSectionsMarkdown(m.value("page_sections", json()), PagePlace::kWithTheResults);
  ByLengthTable(m, &o);
  CategoryTables(m, &o);
  // The tables a kind's or a part's section brings (kind_view.h).
  o += SectionTablesMarkdown(m.value("tables", json::array()));
  for (const auto& f : m.value("fragments", json::array())) o += JsonText(f["markdown"]);
  RepeatSection(m, &o);
  o += RenderPageSectionsMarkdown(m.value("page_sections", json()), PagePlace::kAfterTheRepeat);  // evals/publish/page_section.h
  SetupSection(m, &o);
  o += MarkdownNotes(m["notes"]);
  return o;
}

}  // namespace evalrun
