// The report's tables at any figure width: every Markdown table
// sized to its widest cells (table_text.h MarkdownTable), the speed table with
// its queue-time column and wide figures, the HTML tables in a scrolling box;
// the parser counts (raw_fallback, server_parse_error) shown when a part has
// them and not when it has none (an old run); a part with failed requests
// shows its scored samples and the failures, never an empty table.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "evals/publish/report.h"
#include "evals/benchmarks/speed/speed_section.h"
#include "evals/publish/table_text.h"
#include "tests/support/markdown_tables.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun::testing {
namespace {

using nlohmann::json;

TEST(MarkdownTable, EveryColumnIsAsWideAsItsWidestCell) {
  const std::string md = MarkdownTable({"step", "client t/s", "marks"}, "lrl",
                                       {{"decode/code", "123456.7 (123400.1–123500.9, n 3)", ""},
                                        {"c", "1.2", "a\\|b — long"}});
  std::string why;
  EXPECT_TRUE(TablesAligned(md, &why)) << why << "\n" << md;
  EXPECT_NE(md.find("|                               1.2 |"), std::string::npos) << md;  // right-aligned
  EXPECT_NE(md.find("| c           |"), std::string::npos) << md;                            // left-aligned
  EXPECT_NE(md.find("|-------------|----------------------------------:|"), std::string::npos) << md;
  EXPECT_EQ(TextWidth("—–x"), 3u);
  // A short row gets empty cells; the table is still aligned.
  const std::string short_row = MarkdownTable({"a", "b"}, "", {{"only a"}});
  EXPECT_TRUE(TablesAligned(short_row, &why)) << why << "\n" << short_row;
}

json WideSpeed() {
  return json::parse(R"({"parts": {"speed": {
    "engine": {"managed": false, "build_info": "b10470", "n_ctx_slot": 131072, "slots": 4},
    "cold": null,
    "steps": [
      {"name": "prefill/2048", "kind": "prefill", "attempts": [{}], "note": null, "refused": null, "marks": [],
       "result": {"prefill_client_tps": {"median": 123456.7, "min": 120001.2, "max": 129999.9, "n": 3},
                  "prefill_server_tps": {"median": 130001.5, "min": 129000.0, "max": 131000.0, "n": 3},
                  "prefill_gap_pct": -5.03, "ttft_s": {"median": 0.017, "min": 0.016, "max": 0.018, "n": 3},
                  "queue_s": {"median": 0.001, "min": 0.0005, "max": 0.002, "n": 3}}},
      {"name": "conc/C8", "kind": "conc", "attempts": [{}], "refused": null, "marks": [],
       "note": "8 requests at once on 4 slots: the 4 beyond the slots queue in the server",
       "result": {"total_tps": {"median": 812.5, "min": 800.1, "max": 825.0, "n": 2},
                  "per_request_tps": {"median": 101.2, "min": 60.0, "max": 199.0, "n": 16},
                  "decode_server_tps": {"median": 203.1, "min": 200.0, "max": 205.0, "n": 16},
                  "ttft_s": {"median": 1.31, "min": 0.05, "max": 2.62, "n": 16},
                  "queue_s": {"median": 1.27, "min": 0.01, "max": 2.58, "n": 16}}}],
    "refused": [], "error": null}}})");
}

TEST(SpeedTable, WideFiguresKeepTheTableAlignedAndQueueTimeHasItsColumn) {
  const json speed = SpeedSectionModel(WideSpeed());
  const std::string md = RenderSpeedMarkdown(speed);
  std::string why;
  EXPECT_TRUE(TablesAligned(md, &why)) << why << "\n" << md;
  const std::string flat = UnpadTables(md);
  EXPECT_NE(flat.find("| step | figure | client (median, min–max, n) | server | gap (%) | TTFT s | queue s | attempts |"),
            std::string::npos)
      << md;
  EXPECT_NE(flat.find("| prefill/2048 | prefill t/s | 123456.7 (120001.2–129999.9, n 3) | 130001.5 (129000.0–131000.0, "
                      "n 3) | -5.0 | 0.017 (0.016–0.018, n 3) | 0.001 (0.001–0.002, n 3) | 1 |"),
            std::string::npos)
      << md;
  // The step's note is numbered under the table, the row carries its number.
  EXPECT_NE(flat.find("| 1.270 (0.010–2.580, n 16) | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(flat.find("\n1. 8 requests at once on 4 slots"), std::string::npos) << md;
  const std::string html = RenderSpeedHtml(speed);
  EXPECT_NE(html.find("<div class=\"wide\"><table><thead><tr><th>step</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<th class=\"num\">queue s</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("1.270<br><span class=\"spread\"><span>(0.010–2.580,</span> <span>n 16)</span></span>"),
            std::string::npos)
      << html;
}

// A run folder of one MMLU-Pro part: `n` answers in samples.jsonl (the first
// `right` right), `failed` requests in failed.jsonl, and results.json as the
// runner writes it, with `extra` merged into parts.mmlupro.
void MakeChoiceRun(const std::string& dir, int n, int right, int failed, const json& extra) {
  std::string samples;
  for (int i = 0; i < n; ++i) {
    const bool ok = i < right;
    samples += json{{"id", "mp-" + std::to_string(i)}, {"category", "math"}, {"prompt_sha256", "x"},
                    {"max_tokens", 64}, {"response", ok ? "B" : "C"}, {"reasoning", ""},
                    {"finish_reason", "stop"}, {"prompt_tokens", 100}, {"completion_tokens", 3},
                    {"attempts", 1}, {"timings", nullptr}, {"gold", "B"}, {"extracted", ok ? "B" : "C"},
                    {"correct", ok}, {"cut_off", false}, {"no_answer", false}}
                   .dump() +
               "\n";
  }
  WriteText(dir + "/mmlupro/samples.jsonl", samples);
  // A request that failed once and was answered on a resume ("mp-0") is still in failed.jsonl.
  std::string failures =
      failed ? json{{"id", "mp-0"}, {"error", "timeout"}, {"http_status", 0}, {"attempts", 2}}.dump() + "\n" : "";
  for (int i = 0; i < failed; ++i)
    failures += json{{"id", "mp-f" + std::to_string(i)},
                     {"error", i % 4 == 3 ? "POST /v1/chat/completions: HTTP 503: Loading model"
                                          : "POST /v1/chat/completions: HTTP 500: The model produced output that "
                                            "does not match the expected peg-native format"},
                     {"http_status", i % 4 == 3 ? 503 : 500},
                     {"attempts", 2}}
                    .dump() +
                "\n";
  WriteText(dir + "/mmlupro/failed.jsonl", failures);
  const double score = n ? static_cast<double>(right) / n : 0.0;
  json part = {{"kind", "choice"}, {"score", score}, {"stderr", n ? std::sqrt(score * (1 - score) / n) : 0.0}, {"n", n},
               {"correct", right}, {"cut_off", 0}, {"no_answer", 0}, {"failed", failed},
               {"planned", n + failed}, {"complete", failed == 0}};
  for (const auto& [k, v] : extra.items()) part[k] = v;
  const json results = {{"schema", "evalrun.results/1"}, {"job", "lane"}, {"card", {{"name", "gpu-lane"}}},
                        {"parts", {{"mmlupro", part}}}};
  WriteText(dir + "/results.json", results.dump(2));
}

std::string ReportMarkdown(const std::string& dir, std::string* html = nullptr) {
  ReportOptions o;
  o.run_dir = dir;
  std::string md, h;
  const Status st = BuildReport(o, &md, &h);
  EXPECT_TRUE(st.ok()) << st.message();
  if (html) *html = h;
  return md;
}

TEST(ReportResults, APartWithFailedRequestsShowsItsRowsAndTheFailures) {
  TempDir t("evalrun_report_tables");
  const std::string dir = t.path() + "/run";
  MakeChoiceRun(dir, 44, 30, 16, json::object());
  std::string html;
  const std::string md = ReportMarkdown(dir, &html);
  std::string why;
  EXPECT_TRUE(TablesAligned(md, &why)) << why << "\n" << md;
  const std::string flat = UnpadTables(md);
  // 30 / 44 = 68.18 %; 16 failed, not scored.
  EXPECT_NE(flat.find("| mmlupro | accuracy | 68.18 | ± 7.02 | 44 | 0 | 0 | 16 |"), std::string::npos) << md;
  EXPECT_NE(md.find("mmlupro: incomplete: 44 of 60 planned answered"), std::string::npos) << md;
  EXPECT_NE(html.find("<td class=\"num\">16</td>"), std::string::npos);
  // The sample browser holds the 44 scored answers.
  EXPECT_EQ(CountOf(html, "\"part\":\"mmlupro\""), 44) << html.size();
  // The failures, grouped by error (12 + 4 = 16; the one answered since is not listed).
  EXPECT_NE(flat.find("## Failed requests"), std::string::npos) << md;
  EXPECT_NE(flat.find("| mmlupro | 12 | 500 | POST /v1/chat/completions: HTTP 500: The model produced output that does "
                      "not match the expected peg-native format | mp-f0, mp-f1, mp-f2, mp-f4, mp-f5, ... |"),
            std::string::npos)
      << md;
  EXPECT_NE(flat.find("| mmlupro | 4 | 503 | POST /v1/chat/completions: HTTP 503: Loading model | mp-f3, mp-f7, mp-f11, "
                      "mp-f15 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(flat.find("timeout"), std::string::npos) << md;
  EXPECT_NE(html.find("<section id=\"failed\"><h2>Failed requests</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">12</td><td class=\"num\">500</td>"), std::string::npos);
}

TEST(ReportResults, ParserCountsAreShownWhenAPartHasThemAndNotInOldRuns) {
  TempDir t("evalrun_report_tables");
  const std::string dir = t.path() + "/run";
  MakeChoiceRun(dir, 60, 12, 0, {{"raw_fallback", 37}, {"server_parse_error", 2}});
  std::string html;
  std::string md = ReportMarkdown(dir, &html);
  std::string why;
  EXPECT_TRUE(TablesAligned(md, &why)) << why << "\n" << md;
  EXPECT_NE(UnpadTables(md).find("| part | metric | score (%) | ± stderr | n | cut-off | no answer | failed | raw "
                                 "fallback | parser errors | prompt tok/s | decode tok/s |"),
            std::string::npos)
      << md;
  EXPECT_NE(UnpadTables(md).find("| mmlupro | accuracy | 20.00 | ± 5.16 | 60 | 0 | 0 | 0 | 37 | 2 | — | — |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("raw fallback: answers the server's output parser could not parse"), std::string::npos);
  EXPECT_NE(html.find("<th class=\"num\">raw fallback</th><th class=\"num\">parser errors</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">37</td><td class=\"num\">2</td>"), std::string::npos);

  // Only the fallback counted: its column alone.
  MakeChoiceRun(dir, 60, 12, 0, {{"raw_fallback", 5}, {"server_parse_error", 0}});
  md = ReportMarkdown(dir, &html);
  EXPECT_NE(md.find("raw fallback"), std::string::npos);
  EXPECT_EQ(md.find("parser errors"), std::string::npos) << md;

  // A run from before the fields (absent): no such columns.
  MakeChoiceRun(dir, 60, 12, 0, json::object());
  md = ReportMarkdown(dir, &html);
  EXPECT_EQ(md.find("raw fallback"), std::string::npos) << md;
  EXPECT_EQ(html.find("parser errors"), std::string::npos);
  EXPECT_NE(UnpadTables(md).find("| mmlupro | accuracy | 20.00 | ± 5.16 | 60 | 0 | 0 | 0 | — | — |"), std::string::npos)
      << md;
}

TEST(ReportResults, ASpeedOnlyRunSaysSoInsteadOfAnEmptyTable) {
  TempDir t("evalrun_report_tables");
  const std::string dir = t.path() + "/run";
  json results = WideSpeed();
  results["schema"] = "evalrun.results/1";
  results["job"] = "speed-only";
  WriteText(dir + "/results.json", results.dump(2));
  std::string html;
  const std::string md = ReportMarkdown(dir, &html);
  EXPECT_NE(md.find("## Results\n\nNo question part in this run: nothing scored."), std::string::npos) << md;
  EXPECT_EQ(md.find("| part "), std::string::npos) << md;
  EXPECT_NE(md.find("## How fast it runs"), std::string::npos) << md;
  std::string why;
  EXPECT_TRUE(TablesAligned(md, &why)) << why << "\n" << md;
  EXPECT_NE(html.find("No question part in this run"), std::string::npos);
  EXPECT_EQ(html.find("<th>metric</th>"), std::string::npos);
}

}  // namespace
}  // namespace evalrun::testing
