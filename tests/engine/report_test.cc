#include "evals/publish/report.h"
#include "evals/publish/html_text.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "evals/base/exit_codes.h"
#include "tests/support/markdown_tables.h"
#include "tests/support/capture_output.h"
#include "tests/support/chromium.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::Captured;
using testing::ReadFile;
using testing::TempDir;
using testing::CountOf;
using testing::WriteText;
using testing::UnpadTables;

const char* kNasty = "Answer: </script><b>bold</b> & \"quotes\" 'single' \xe2\x80\xa8 line sep";
const char* kCats[] = {"math", "law & <order>", "biology", "physics"};

// A run with mmlupro (80 questions, 57 right), ifeval (10 prompts) and
// ruler (2 lengths x 3 tasks x 4 samples), results.json as the runner
// writes it, a noise summary and speeds. Returns the number of samples.
int MakeRun(const std::string& dir) {
  json results = {{"schema", "evalrun.results/1"},
                  {"job", "qwen3-8b-q4"},
                  {"card", {{"name", "local"}, {"path", "cards/local.json"}, {"sha256", "5f3a9c0d11aa"}}},
                  {"model", {{"name", "Qwen3-8B"}, {"quant", "Q4_K_M"}}},
                  {"engine", {{"name", "llama.cpp"}, {"flags", "-fa on -ngl 99"}}},
                  {"hardware", {{"gpu", "RTX 4090"}, {"cpu", "Ryzen 9 7950X"}}},
                  {"sampling", {{"temperature", 0.0}, {"top_k", 1}, {"top_p", 1.0}, {"seed", 42}}},
                  {"thinking", false},
                  {"finished_utc", "2026-03-04T05:06:07Z"},
                  // The machine's load under its name before 2026-12 ("noise"):
                  // an old run still reports it.
                  {"noise",
                   {{"samples", 120},
                    {"threshold_pct", 25},
                    {"samples_above_threshold", 3},
                    {"max_foreign_cpu_pct", 61.5},
                    {"max_foreign", {{"pid", 4242}, {"comm", "chrome"}}},
                    {"warnings", json::array()},
                    {"gpu", {{"name", "NVIDIA GeForce RTX 4090"}, {"mem_total_mib", 24564}}},
                    {"text", "3 of 120 load samples above 25 % foreign CPU (busiest: chrome 61.5 %)"}}}};

  // mmlupro: 80 questions, 20 per category; right unless i % 7 in {0, 3}
  // (23 wrong -> 57 right).
  std::string body;
  int right = 0, cut = 0, none = 0;
  json cats = json::object();
  for (int i = 0; i < 80; ++i) {
    bool ok = i % 7 != 0 && i % 7 != 3;
    bool is_cut = i == 5 || i == 12;
    bool no_ans = i == 7;
    right += ok;
    cut += is_cut;
    none += no_ans;
    const char* cat = kCats[i % 4];
    json s = {{"id", "mp-" + std::to_string(i)},
              {"category", cat},
              {"prompt_sha256", "x"},
              {"max_tokens", 2048},
              {"response", i == 3 ? std::string(kNasty) : "Let me think. The answer is (B)."},
              {"reasoning", ""},
              {"finish_reason", is_cut ? "length" : "stop"},
              {"prompt_tokens", 700},
              {"completion_tokens", 120 + i},
              {"latency_ms", 900.5},
              {"attempts", 1},
              {"timings", nullptr},
              {"gold", ok ? "B" : "C"},
              {"extracted", no_ans ? json() : json("B")},
              {"correct", ok},
              {"cut_off", is_cut},
              {"no_answer", no_ans}};
    body += s.dump() + "\n";
    auto& c = cats[cat];
    if (c.is_null()) c = {{"n", 0}, {"correct", 0}};
    c["n"] = c["n"].get<int>() + 1;
    c["correct"] = c["correct"].get<int>() + (ok ? 1 : 0);
  }
  for (auto& [k, c] : cats.items()) c["score"] = std::round(1e6 * c["correct"].get<double>() / 20) / 1e6;
  WriteText(dir + "/mmlupro/samples.jsonl", body);
  double p = right / 80.0;
  results["parts"]["mmlupro"] = {
      {"score", p},
      {"n", 80},
      {"correct", right},
      {"cut_off", cut},
      {"no_answer", none},
      {"failed", 0},
      {"stderr", std::round(1e6 * std::sqrt(p * (1 - p) / 80)) / 1e6},
      {"categories", cats},
      {"speeds", {{"prompt_tokens_per_s", 1523.4}, {"decode_tokens_per_s", 48.2}, {"prompt_tokens", 56000},
                  {"completion_tokens", 12760}}},
      {"planned", 80},
      {"complete", true}};

  // ifeval: 10 prompts; strict: 7 follow all, 16 of 20 instructions;
  // loose: 8 and 17.
  body.clear();
  for (int i = 0; i < 10; ++i) {
    bool a = i < 7 || i == 9, b = i < 7 || i == 8;
    json s = {{"id", std::to_string(1000 + i)},
              {"category", ""},
              {"response", "A short answer without commas"},
              {"finish_reason", "stop"},
              {"prompt", "Write a haiku about the sea. Do not use commas."},
              {"instruction_id_list", {"punctuation:no_comma", "length_constraints:number_words"}},
              {"strict", {{"follow_all_instructions", a && b}, {"follow_instruction_list", {a, b}}}},
              {"loose", {{"follow_all_instructions", (a || i == 8) && b}, {"follow_instruction_list", {a || i == 8, b}}}},
              {"cut_off", false}};
    body += s.dump() + "\n";
  }
  WriteText(dir + "/ifeval/samples.jsonl", body);
  results["parts"]["ifeval"] = {{"prompt_strict", 0.7},   {"inst_strict", 0.8},  {"prompt_loose", 0.8},
                                {"inst_loose", 0.85},     {"n", 10},            {"cut_off", 0},
                                {"failed", 1},            {"instructions", json::object()},
                                {"speeds", {{"prompt_tokens_per_s", 1400.0}, {"decode_tokens_per_s", 50.1}}}};

  // ruler: per-sample scores 1, 1, 0.5, 0 in every cell except
  // niah_single_1 @ 16384 (1, 1, 1, 1).
  body.clear();
  json lengths = json::object();
  int n = 0;
  for (int length : {8192, 16384}) {
    json tasks = json::object();
    double mean = 0;
    for (const char* task : {"niah_single_1", "vt", "qa_1"}) {
      double sum = 0;
      for (int i = 0; i < 4; ++i) {
        double sc = (length == 16384 && std::string(task) == "niah_single_1") ? 1.0 : (i < 2 ? 1.0 : i == 2 ? 0.5 : 0.0);
        sum += sc;
        json s = {{"id", std::string(task) + "-" + std::to_string(length) + "-" + std::to_string(i)},
                  {"task", task},
                  {"length", length},
                  {"response", "The special magic number is 12345."},
                  {"finish_reason", "stop"},
                  {"gold", n == 0 ? json::array({"</script><b>bold</b>", "12345"}) : json::array({"12345"})},
                  {"score", sc},
                  {"cut_off", false}};
        body += s.dump() + "\n";
        ++n;
      }
      tasks[task] = {{"score", 100 * sum / 4}, {"n", 4}, {"nulls", 0}, {"cut_off", 0}};
      mean += 100 * sum / 4 / 3;
    }
    lengths[std::to_string(length)] = {{"score", std::round(mean * 100) / 100}, {"tasks", tasks}};
  }
  WriteText(dir + "/ruler/samples.jsonl", body);
  results["parts"]["ruler"] = {{"score", 68.75}, {"lengths", lengths}, {"n", n}, {"cut_off", 0}, {"failed", 0}};

  WriteText(dir + "/results.json", results.dump(2));
  json run = {{"card", {{"name", "local"}}},
              {"server", {{"build_info", "b5123-8f1d2e3"}, {"model_path", "/models/Qwen3-8B-Q4_K_M.gguf"},
                          {"n_ctx", 32768}}},
              {"slots", 4},
              {"host", {{"hostname", "bench1"}, {"kernel", "Linux 6.8.0 x86_64"}, {"cpus", 32}}},
              {"started_utc", "2026-03-04T04:00:00Z"},
              {"evalrun", {{"version", "0.1.0"}, {"git_sha", "2a479c7"}}}};
  WriteText(dir + "/run.json", run.dump(2));
  return 80 + 10 + n;
}

Captured RunReport(const ReportOptions& o) {
  return testing::Capture([&](FILE* out, FILE* err) { return ReportRun(o, out, err); });
}

TEST(ReportRun, WritesMarkdownWithThePublishedNumbers) {
  TempDir t("evalrun_report");
  const std::string dir = t.path() + "/run";
  MakeRun(dir);
  ReportOptions o;
  o.run_dir = dir;
  Captured c = RunReport(o);
  ASSERT_EQ(c.code, kExitOk) << c.err;
  EXPECT_EQ(c.out, "wrote " + dir + "/report.md\nwrote " + dir + "/report.html\n");
  const std::string md = UnpadTables(ReadFile(dir + "/report.md"));
  // 57 / 80 = 71.25 %, stderr sqrt(.7125 * .2875 / 80) = 5.06 points.
  EXPECT_NE(md.find("| mmlupro | accuracy | 71.25 | ± 5.06 | 80 | 2 | 1 | 0 | 1523.4 | 48.2 |"), std::string::npos)
      << md;
  // 0.7 of 10: stderr sqrt(.7 * .3 / 10) = 14.49.
  EXPECT_NE(md.find("| ifeval | prompt-level strict | 70.00 | ± 14.49 | 10 | 0 | — | 1 | 1400.0 | 50.1 |"),
            std::string::npos)
      << md;
  // RULER: 24 samples, mean .6875, sample sd 0.4121 -> stderr 8.41 (Python statistics.stdev).
  EXPECT_NE(md.find("| ruler | mean score | 68.75 | ± 8.41 | 24 | 0 | — | 0 | — | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("| prompt | 70.00 | 80.00 |"), std::string::npos);
  EXPECT_NE(md.find("| instruction | 80.00 | 85.00 |"), std::string::npos);
  EXPECT_NE(md.find("| length | mean | niah_single_1 | qa_1 | vt |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 8192 | 62.50 | 62.50 | 62.50 | 62.50 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 16384 | 75.00 | 100.00 | 62.50 | 62.50 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| law & &lt;order&gt; | 20 | 14 | 70.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| punctuation:no_comma | 10 | 8 | 80.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| model | name: Qwen3-8B · quant: Q4_K_M |"), std::string::npos) << md;
  EXPECT_NE(md.find("| engine build | b5123-8f1d2e3 |"), std::string::npos);
  EXPECT_NE(md.find("| hardware | cpu: Ryzen 9 7950X · gpu: RTX 4090 |"), std::string::npos);
  EXPECT_NE(md.find("| GPU seen | NVIDIA GeForce RTX 4090 (24564 MiB) |"), std::string::npos);
  EXPECT_NE(md.find("| slots | 4 |"), std::string::npos);
  EXPECT_NE(md.find("| sampling | temperature 0.0 · top_k 1 · top_p 1.0 · seed 42 |"), std::string::npos) << md;
  EXPECT_NE(md.find("3 of 120 load samples above 25 % foreign CPU (busiest: chrome 61.5 %)"), std::string::npos);
  EXPECT_NE(md.find("- busiest foreign process: 61.5 % CPU (chrome, pid 4242)"), std::string::npos);
}

// The text between the data block's tags, parsed as JSON.
json EmbeddedSamples(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"samples-data\">";
  size_t a = html.find(open);
  if (a == std::string::npos) return json();
  a += open.size();
  size_t b = html.find("</script>", a);
  return json::parse(html.substr(a, b - a));
}

TEST(ReportRun, HtmlIsSelfContainedAndEscaped) {
  TempDir t("evalrun_report");
  const std::string dir = t.path() + "/run";
  const int samples = MakeRun(dir);
  ReportOptions o;
  o.run_dir = dir;
  ASSERT_EQ(RunReport(o).code, kExitOk);
  const std::string html = ReadFile(dir + "/report.html");
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src=\""), std::string::npos);  // no <script src>, no <img src>
  // The nasty response never closes the block or becomes markup.
  EXPECT_EQ(html.find("</script><b>"), std::string::npos);
  EXPECT_EQ(html.find("<b>bold"), std::string::npos);
  EXPECT_EQ(CountOf(html, "</script>"), 2u);
  EXPECT_NE(html.find("\\u003c/script\\u003e\\u003cb\\u003ebold"), std::string::npos);
  // The category with markup is escaped in tables and charts.
  EXPECT_EQ(html.find("<order>"), std::string::npos);
  EXPECT_NE(html.find("law &amp; &lt;order&gt;"), std::string::npos);
  // The published numbers.
  EXPECT_NE(html.find(">71.25</td>"), std::string::npos);
  EXPECT_NE(html.find(">± 5.06</td>"), std::string::npos);
  EXPECT_NE(html.find(">68.75</td>"), std::string::npos);
  // Charts: bars for mmlupro categories and IFEval instructions, RULER lines.
  EXPECT_EQ(CountOf(html, "<svg class=\"chart\""), 3u);
  EXPECT_EQ(CountOf(html, "class=\"bar\""), 4u + 2u);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  // The block parses back to the samples, the nasty text intact.
  json data = EmbeddedSamples(html);
  ASSERT_TRUE(data.is_array());
  EXPECT_EQ(data.size(), static_cast<size_t>(samples));
  EXPECT_EQ(data[3]["id"], "mp-3");
  EXPECT_EQ(data[3]["response"], kNasty);
  EXPECT_EQ(data[3]["verdict"], "wrong");
  EXPECT_EQ(data[0]["verdict"], "wrong");  // i % 7 == 0
  EXPECT_EQ(data[1]["verdict"], "right");
}

TEST(ReportRun, BadInputExitsOne) {
  TempDir t("evalrun_report");
  ReportOptions o;
  o.run_dir = t.path() + "/missing";
  Captured c = RunReport(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find(t.path() + "/missing: no such folder"), std::string::npos) << c.err;

  fs::create_directories(t.path() + "/empty");
  o.run_dir = t.path() + "/empty";
  c = RunReport(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("not an evalrun run folder"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(t.path() + "/empty/report.md"));

  MakeRun(t.path() + "/bad");
  WriteText(t.path() + "/bad/ruler/samples.jsonl", "{\"id\": 1}\n[oops\n{\"id\": 2}\n");
  o.run_dir = t.path() + "/bad";
  c = RunReport(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find(t.path() + "/bad/ruler/samples.jsonl:2: not a JSON line"), std::string::npos) << c.err;
}

TEST(ReportRun, MissingSamplesAreNotedNotFatal) {
  TempDir t("evalrun_report");
  const std::string dir = t.path() + "/run";
  MakeRun(dir);
  fs::remove(dir + "/ifeval/samples.jsonl");
  std::string md, html;
  ReportOptions o;
  o.run_dir = dir;
  ASSERT_TRUE(BuildReport(o, &md, &html).ok());
  EXPECT_NE(md.find("- ifeval: " + dir + "/ifeval/samples.jsonl not found; reported from results.json alone"),
            std::string::npos)
      << md;
  EXPECT_NE(UnpadTables(md).find("| ifeval | prompt-level strict | 70.00 |"), std::string::npos);
}

TEST(ReportHelpers, EscapingAndCutting) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  json j = {{"t", "</script><!-- & \xe2\x80\xa8"}};
  std::string s = JsonForScriptBlock(j);
  EXPECT_EQ(s, "{\"t\":\"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\"}");
  EXPECT_EQ(json::parse(s), j);
  bool cut = false;
  EXPECT_EQ(Utf8Prefix("h\xc3\xa9llo", 2, &cut), "h");  // never half of é
  EXPECT_TRUE(cut);
  EXPECT_EQ(Utf8Prefix("h\xc3\xa9llo", 3, &cut), "h\xc3\xa9");
  EXPECT_EQ(Utf8Prefix("abc", 3, &cut), "abc");
  EXPECT_FALSE(cut);
  // Shortened: the same prefix, "…" after it only when something was cut.
  EXPECT_EQ(Utf8Shortened("abc", 3), "abc");
  EXPECT_EQ(Utf8Shortened("abcd", 3), "abc…");
  EXPECT_EQ(Utf8Shortened("h\xc3\xa9llo", 2), "h…");  // é is not split
}

// ---- Rendering in a real browser ----

TEST(ReportHtml, RendersInHeadlessChromium) {
  ASSERT_TRUE(fs::exists(testing::ChromiumPath()))
      << testing::ChromiumPath() << " not found: the screenshot test needs Chromium (apt-get install chromium)";
  TempDir t("evalrun_report");
  const std::string dir = t.path() + "/run";
  const int samples = MakeRun(dir);
  ReportOptions o;
  o.run_dir = dir;
  ASSERT_EQ(RunReport(o).code, kExitOk);
  const std::string url = "file://" + dir + "/report.html";

  const std::string png = t.path() + "/report.png";
  std::string ignored;
  int rc = testing::RunChromium(t.path() + "/profile1",
                                "--hide-scrollbars --screenshot='" + png + "' --window-size=1280,2000", url, &ignored);
  ASSERT_EQ(rc, 0) << ReadFile(t.path() + "/profile1.stderr");
  ASSERT_TRUE(fs::exists(png)) << ReadFile(t.path() + "/profile1.stderr");
  const std::string bytes = ReadFile(png);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_GT(bytes.size(), 20u * 1024) << "a blank page? " << bytes.size() << " bytes";
  uint32_t width = 0, height = 0;
  ASSERT_TRUE(testing::PngSize(bytes, &width, &height)) << "not a PNG";
  EXPECT_EQ(width, 1280u);
  EXPECT_EQ(height, 2000u);
  if (const char* keep = std::getenv("EVALRUN_KEEP_SCREENSHOT"); keep && *keep) fs::copy_file(png, keep,
                                                                                             fs::copy_options::overwrite_existing);

  // The script ran: every sample is a row of the browser, and the nasty
  // response is text, not markup.
  std::string dom;
  rc = testing::RunChromium(t.path() + "/profile2", "--dump-dom", url, &dom);
  ASSERT_EQ(rc, 0) << ReadFile(t.path() + "/profile2.stderr");
  EXPECT_EQ(CountOf(dom, "<tr class=\"srow\">"), static_cast<size_t>(samples)) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("showing " + std::to_string(samples) + " of " + std::to_string(samples) + " matching"),
            std::string::npos);
  EXPECT_EQ(dom.find("<b>bold</b>"), std::string::npos);
  // The first RULER sample's gold is shown as text in its row.
  EXPECT_NE(dom.find("&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt; | 12345</td>"), std::string::npos);
}

}  // namespace
}  // namespace evalrun
