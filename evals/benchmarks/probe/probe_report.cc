#include "evals/benchmarks/probe/probe_report.h"

#include <algorithm>
#include <cmath>

#include "evals/base/json_fields.h"
#include "evals/publish/bar_chart.h"
#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string NumOrDash(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

std::string E(const json& v) { return HtmlEscape(JsonText(v)); }

}  // namespace

json ProbeReportModel(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records) {
  int bins[10] = {0};
  json rows = json::array();
  for (const auto& s : records) {
    const auto& v = std::get<LogprobsVerdict>(s.verdict);
    if (v.top.empty()) continue;
    const double prob = std::exp(v.top[0].logprob);
    ++bins[std::min(9, static_cast<int>(prob * 10))];
    if (rows.size() < kProbeRowsShown)
      rows.push_back({{"position", s.Int("position", -1)}, {"token", v.top[0].token}, {"logprob", v.top[0].logprob},
                      {"p", prob}, {"excerpt", s.Text("excerpt")}, {"next_word", s.Text("next_word")}});
  }
  json hist = json::array();
  const double n = static_cast<double>(records.size());
  for (int b = 0; b < 10; ++b)
    hist.push_back({{"name", FormatDouble("%.1f", b / 10.0) + "–" + FormatDouble("%.1f", (b + 1) / 10.0)},
                    {"n", bins[b]}, {"score", n > 0 ? 100.0 * bins[b] / n : 0.0}});
  return {{"part", part.name},
          {"title", part.display_name},
          {"positions", records.size()},
          {"confident_pct", OptJson(ResultNumber(p, {"score"}))},
          {"top1_logprob", JsonAt(p, {"top1_logprob"})},
          {"prompt_tokens_mean", JsonAt(p, {"prompt_tokens_mean"})},
          {"top_logprobs", JsonAt(p, {"info", "top_logprobs"})},
          {"text", JsonAt(p, {"info", "text", "file"})},
          {"histogram", hist},
          {"rows", rows},
          {"rows_cut", records.size() > rows.size()}};
}

std::string ProbeReportMarkdown(const json& pr) {
  std::string o;
  auto line = [&](const std::string& s) { o += s + "\n"; };
  const json& t = pr["top1_logprob"];
  line("### " + MarkdownCell(JsonText(pr["title"])) + ": next-token distributions");
  line("");
  line(JsonText(pr["positions"]) + " positions, top " + JsonText(pr["top_logprobs"]) + " candidates; " +
       NumOrDash(pr["confident_pct"], "%.1f") + " % with a top token of p > 0.5.");
  line("");
  std::vector<std::string> row = {""};
  for (const char* k : {"mean", "min", "p05", "median", "p95", "max"})
    row.push_back(NumOrDash(t.is_object() && t.contains(k) ? t[k] : json(), "%.4f"));
  o += MarkdownTable({"top-1 logprob", "mean", "min", "p05", "median", "p95", "max"}, "lrrrrrr", {row});
  line("");
  return o;
}

std::string ProbeReportHtml(const json& pr) {
  std::string h;
  const json& t = pr["top1_logprob"];
  h += "<section id=\"probe\"><h2>" + E(pr["title"]) + ": next-token distributions</h2>";
  h += "<p>" + E(pr["positions"]) + " positions of " + E(pr["text"]) + ", top " + E(pr["top_logprobs"]) +
       " candidates each; " + NumOrDash(pr["confident_pct"], "%.1f") +
       " % of the positions have a top token with p &gt; 0.5. Prompts: " +
       NumOrDash(pr["prompt_tokens_mean"], "%.1f") + " tokens on average. Compare two probe runs with "
       "<code>evalrun compare</code> (KL divergence, top-1 agreement).</p>";
  h += "<div class=\"wide\"><table class=\"compact\"><thead><tr><th>top-1 logprob</th><th class=\"num\">mean</th>"
       "<th class=\"num\">min</th><th class=\"num\">p05</th><th class=\"num\">median</th>"
       "<th class=\"num\">p95</th><th class=\"num\">max</th></tr></thead><tbody><tr><td></td>";
  for (const char* k : {"mean", "min", "p05", "median", "p95", "max"})
    h += "<td class=\"num\">" + NumOrDash(t.is_object() && t.contains(k) ? t[k] : json(), "%.4f") + "</td>";
  h += "</tr></tbody></table></div><h3>share of positions by top-1 probability</h3>" + BarChart(pr["histogram"]);
  h += "<h3>positions</h3><div class=\"wide\"><table class=\"compact\"><thead><tr><th class=\"num\">position</th><th>text before it"
       "</th><th>next word</th><th>top token</th><th class=\"num\">logprob</th><th class=\"num\">p</th></tr>"
       "</thead><tbody>";
  for (const auto& r : pr["rows"])
    h += "<tr><td class=\"num\">" + E(r["position"]) + "</td><td>" + E(r["excerpt"]) + "</td><td>" +
         E(r["next_word"]) + "</td><td><code>" + E(r["token"]) + "</code></td><td class=\"num\">" +
         NumOrDash(r["logprob"], "%.5f") + "</td><td class=\"num\">" + NumOrDash(r["p"], "%.3f") + "</td></tr>";
  h += "</tbody></table></div>";
  if (pr["rows_cut"].get<bool>())
    h += "<p class=\"note\">The first " + std::to_string(kProbeRowsShown) + " positions; samples.jsonl has them all.</p>";
  h += "</section>\n";
  return h;
}

}  // namespace evalrun
