#include "evals/benchmarks/speed/speed_section.h"

#include <vector>

#include "evals/publish/html_text.h"
#include "evals/publish/page_section.h"
#include "evals/publish/table_notes.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using json = nlohmann::json;

struct Row {
  std::string step, what, client, server, gap, ttft, queue, attempts;
  std::vector<std::string> marks;  // shown as numbered notes under the table
};

std::string Num(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

// "62.6 (61.9–63.1, n 2)"
std::string Spread(const json& s, const char* f = "%.1f") {
  if (!s.is_object() || !s["median"].is_number()) return "—";
  return Num(s["median"], f) + " (" + Num(s["min"], f) + "–" + Num(s["max"], f) + ", n " + Num(s["n"], "%.0f") + ")";
}

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }

std::vector<std::string> Marks(const json& step) {
  std::vector<std::string> m;
  for (const auto& x : step.value("marks", json::array())) m.push_back(Text(x));
  if (step["note"].is_string()) m.push_back(Text(step["note"]));
  if (step["refused"].is_string()) m.push_back(Text(step["refused"]));
  return m;
}

// One row per measured figure of a step (ctx has decode and prefill).
void StepRows(const json& s, std::vector<Row>* rows) {
  const json& r = s["result"];
  const std::string kind = Text(s["kind"]);
  const std::string attempts = std::to_string(s.value("attempts", json::array()).size());
  auto add = [&](const std::string& what, const json& client, const json& server, const json& gap) {
    rows->push_back({Text(s["name"]), what, Spread(client), Spread(server), Num(gap, "%+.1f"),
                     r.is_object() ? Spread(r["ttft_s"], "%.3f") : "—",
                     r.is_object() && r.contains("queue_s") ? Spread(r["queue_s"], "%.3f") : "—", attempts, Marks(s)});
  };
  if (!r.is_object()) {
    rows->push_back({Text(s["name"]), kind, "—", "—", "—", "—", "—", attempts, Marks(s)});
    return;
  }
  if (kind == "conc") {
    add("total t/s", r["total_tps"], json(), json());
    add("per request t/s", r["per_request_tps"], r["decode_server_tps"], json());
    return;
  }
  if (kind != "prefill") add("decode t/s", r["decode_client_tps"], r["decode_server_tps"], r["decode_gap_pct"]);
  if (kind != "decode") add("prefill t/s", r["prefill_client_tps"], r["prefill_server_tps"], r["prefill_gap_pct"]);
}

std::vector<Row> Rows(const json& speed) {
  std::vector<Row> rows;
  const json& c = speed["cold"];
  if (c.is_object()) {
    std::vector<std::string> marks;
    if (!c["cold"].get<bool>()) marks.push_back("not cold: " + Text(c["why_not_cold"]));
    if (c["decode_cold_to_warm"].is_number())
      marks.push_back("cold/warm decode " + Num(c["decode_cold_to_warm"], "%.2f") + ", TTFT " +
                      Num(c["ttft_cold_to_warm"], "%.2f"));
    rows.push_back({"cold", "first request, decode t/s", Num(c["decode_client_tps"], "%.1f"),
                    Num(c["decode_server_tps"], "%.1f"), "—", Num(c["ttft_s"], "%.3f"), "—", "1", marks});
  }
  for (const auto& s : speed.value("steps", json::array())) StepRows(s, &rows);
  return rows;
}

std::string EngineLine(const json& speed) {
  const json& e = speed["engine"];
  if (!e.is_object()) return "";
  return std::string(e.value("managed", false) ? "managed engine" : "running server") + ", build " +
         Text(e["build_info"]) + ", " + Num(e["n_ctx_slot"], "%.0f") + " tokens a slot, " + Num(e["slots"], "%.0f") +
         " slots; every prompt exactly its target by the server's count, cache_prompt off, ignore_eos.";
}

constexpr const char* kLead =
    "Client figures are on evalrun's clock (decode: tokens after the first / time after the first token; prefill: "
    "prompt tokens / time to first token), server figures are llama-server's own timings; each is the median "
    "(min–max, n) of the step's requests (of its rounds for a conc total). Gap = (client − server) / server. "
    "Queue = TTFT − the server's own prompt time (timings.prompt_ms): the wait before the server began the "
    "prompt, which grows when more requests are sent than it has slots. Attempts > 1: the load guard saw another "
    "process busy and repeated the step.";

}  // namespace

json SpeedSectionModel(const json& results) {
  if (!results.is_object() || !results.contains("parts") || !results["parts"].contains("speed")) return nullptr;
  return results["parts"]["speed"];
}

std::string RenderSpeedMarkdown(const json& speed) {
  if (!speed.is_object()) return "";
  std::string o = "## How fast it runs\n\n" + MarkdownCell(EngineLine(speed)) + " " + kLead + "\n\n";
  std::vector<std::vector<std::string>> rows;
  TableNotes notes;
  for (const Row& r : Rows(speed))
    rows.push_back({MarkdownCell(r.step), MarkdownCell(r.what), r.client, r.server, r.gap, r.ttft, r.queue, r.attempts,
                    notes.Refs(r.marks)});
  o += MarkdownTable({"step", "figure", "client (median, min–max, n)", "server", "gap (%)", "TTFT s", "queue s",
                      "attempts", "notes"},
                     "llrrrrrrl", rows) + "\n" + notes.Markdown();
  if (speed["error"].is_string()) o += "- stopped: " + MarkdownCell(Text(speed["error"])) + "\n";
  return o + "\n";
}

// A figure "62.6 (61.9–63.1, n 2)" as the median over its spread in small
// type, the spread free to wrap before its n, so the column is about as
// wide as the longer of the two.
std::string FigureCell(const std::string& figure) {
  const size_t cut = figure.find(" (");
  if (cut == std::string::npos) return "<td class=\"num\">" + HtmlEscape(figure) + "</td>";
  const std::string spread = figure.substr(cut + 1);
  const size_t n = spread.rfind(" n ");
  const std::string parts = n == std::string::npos ? "<span>" + HtmlEscape(spread) + "</span>"
                                                   : "<span>" + HtmlEscape(spread.substr(0, n)) + "</span> <span>" +
                                                         HtmlEscape(spread.substr(n + 1)) + "</span>";
  return "<td class=\"num\">" + HtmlEscape(figure.substr(0, cut)) + "<br><span class=\"spread\">" + parts +
         "</span></td>";
}

std::string RenderSpeedHtml(const json& speed) {
  if (!speed.is_object()) return "";
  std::string h = "<section id=\"speed\"><h2>How fast it runs</h2><p>" + HtmlEscape(EngineLine(speed)) + " " +
                  HtmlEscape(kLead) + "</p><div class=\"wide\"><table><thead><tr><th>step</th><th>figure</th>"
                  "<th class=\"num\">client</th><th class=\"num\">server</th><th class=\"num\">gap (%)</th>"
                  "<th class=\"num\">TTFT s</th><th class=\"num\">queue s</th><th class=\"num\">attempts</th>"
                  "<th>notes</th></tr></thead><tbody>";
  TableNotes notes;
  for (const Row& r : Rows(speed))
    h += "<tr><td class=\"name\">" + HtmlEscape(r.step) + "</td><td>" + HtmlEscape(r.what) + "</td>" +
         FigureCell(r.client) + FigureCell(r.server) + "<td class=\"num\">" + HtmlEscape(r.gap) + "</td>" +
         FigureCell(r.ttft) + FigureCell(r.queue) + "<td class=\"num\">" + HtmlEscape(r.attempts) +
         "</td><td class=\"num\">" + HtmlEscape(notes.Refs(r.marks)) + "</td></tr>";
  h += "</tbody></table></div>" + notes.Html();
  if (speed["error"].is_string()) h += "<p>stopped: " + HtmlEscape(Text(speed["error"])) + "</p>";
  return h + "</section>";
}

PageSection SpeedPageSection() {
  PageSection s;
  s.part = "speed";
  s.order = 100;  // after the shared sections, before the setup
  s.model = SpeedSectionModel;
  s.markdown = RenderSpeedMarkdown;
  s.html = RenderSpeedHtml;
  return s;
}

}  // namespace evalrun
