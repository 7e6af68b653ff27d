// The page of `evalrun compare --html` (evals/publish/compare_html.h): what
// it shows for accuracy parts with and without a noise floor, for probe
// parts (the per-position KLD chart), that run text is escaped, that a page
// that cannot be written fails after the document is printed, and that
// Chromium renders it.
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "evals/base/exit_codes.h"
#include "evals/publish/compare.h"
#include "evals/publish/compare_html.h"
#include "evals/publish/html_text.h"
#include "tests/engine/compare_runs_fixture.h"
#include "tests/support/capture_output.h"
#include "tests/support/chromium.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

// The text of <section id="id">...</section>.
std::string Section(const std::string& page, const std::string& id) {
  const size_t at = page.find("<section id=\"" + id + "\">");
  if (at == std::string::npos) return "";
  return page.substr(at, page.find("</section>", at) - at);
}

// A: 400 right; A2: 6 of them flipped; B: 10 wrong (-2.5 pp, beyond the
// floor of 1.72 pp), as tests/engine/compare_noise_test.cc.
class CompareHtml : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeRun(t_.path() + "/a", "base", {{"mmlupro", AllRight(400)}});
    MakeRun(t_.path() + "/a2", "base-again", {{"mmlupro", Wrong(AllRight(400), {100, 101, 102, 103, 104, 105})}});
    MakeRun(t_.path() + "/b", "new", {{"mmlupro", Wrong(AllRight(400), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  }
  CompareOptions Opts(bool noise) const {
    CompareOptions o;
    o.run_a = t_.path() + "/a";
    o.run_b = t_.path() + "/b";
    o.html_path = t_.path() + "/compare.html";
    if (noise) {
      o.noise_a = t_.path() + "/a";
      o.noise_a2 = t_.path() + "/a2";
    }
    return o;
  }
  Captured Compare(const CompareOptions& o) const {
    return Capture([&](FILE* out, FILE* err) { return CompareRuns(o, out, err); });
  }
  TempDir t_{"evalrun_compare_html"};
};

TEST_F(CompareHtml, AccuracyPageShowsTheVerdictTheDeltasTheFlipsAndTheNoiseFloor) {
  const CompareOptions o = Opts(true);
  const Captured c = Compare(o);
  ASSERT_EQ(c.code, kExitRegression) << c.err;
  // stdout is the Markdown as ever; the page is said on stderr.
  EXPECT_EQ(c.out.rfind("# evalrun compare: A = base, B = new", 0), 0u) << c.out.substr(0, 200);
  EXPECT_NE(c.err.find("wrote " + o.html_path), std::string::npos) << c.err;
  const std::string page = ReadFile(o.html_path);

  // Rendered from the document alone.
  nlohmann::json doc;
  ASSERT_TRUE(BuildComparison(o, &doc).ok());
  EXPECT_EQ(page, ComparisonHtml(doc));

  const std::string verdict = Section(page, "verdict");
  EXPECT_NE(verdict.find("<div class=\"banner bad\">Significant regression</div>"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("accuracy 100.00 % → 97.50 % (Δ -2.50 pp"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("beyond noise"), std::string::npos);
  // No part of a kind that adds to the sentence (the probe's, below).
  EXPECT_NE(verdict.find("Only each part's headline metric decides it."), std::string::npos) << verdict;

  // The summary chart: one row per part's headline.
  const std::string summary = Section(page, "summary");
  EXPECT_EQ(CountOf(summary, "<circle "), 1u) << summary;
  EXPECT_NE(summary.find("<title>mmlupro · accuracy: -2.50 pp ["), std::string::npos) << summary;

  // The noise floor: flips, the detectable difference, the label.
  const std::string noise = Section(page, "noise-floor");
  EXPECT_NE(noise.find("<td class=\"num\">6 / 400</td><td class=\"num\">1.50 %</td><td class=\"num\">400</td>"
                       "<td class=\"num\">1.72</td><td class=\"num\">-2.50</td>"),
            std::string::npos)
      << noise;
  EXPECT_NE(noise.find("MDE = (z_{1-alpha/2} + z_{power}) * sqrt(d / n)"), std::string::npos);
  EXPECT_NE(noise.find("labelled within noise (the labels do not change"), std::string::npos) << noise;

  // The part: a delta per category, shaded by the floor, and its ten flips
  // with what each run answered.
  const std::string part = Section(page, "part-mmlupro");
  ASSERT_FALSE(part.empty()) << page.substr(0, 3000);
  EXPECT_NE(part.find("<h3>accuracy by category</h3>"), std::string::npos) << part;
  EXPECT_EQ(CountOf(part, "<circle "), 2u) << "law and math";
  EXPECT_EQ(CountOf(part, "class=\"band\""), 1u);
  EXPECT_NE(part.find("within noise: |Δ| below 1.72 pp"), std::string::npos);
  EXPECT_EQ(CountOf(part, "<tr class=\"flip\">"), 10u);
  EXPECT_NE(part.find("<tr class=\"flip\"><td><code>q0</code></td><td>math</td><td><span class=\"badge b-right\">right"
                      "</span></td><td><span class=\"mono\">A</span></td><td><span class=\"badge b-wrong\">wrong</span>"
                      "</td><td><span class=\"mono\">B</span></td></tr>"),
            std::string::npos)
      << part;
  EXPECT_NE(part.find("flipped (accuracy): 10 A✓ B✗, 0 A✗ B✓"), std::string::npos);
  // What differs and the footer.
  EXPECT_NE(page.find("<section id=\"setup\"><h2>What differs between the runs</h2>"), std::string::npos);
  EXPECT_NE(page.find("schema evalrun.compare/1"), std::string::npos);
}

TEST_F(CompareHtml, WithoutANoisePairItSaysNoneWasMeasuredAndShadesNothing) {
  const Captured c = Compare(Opts(false));
  ASSERT_EQ(c.code, kExitRegression) << c.err;
  const std::string page = ReadFile(Opts(false).html_path);
  EXPECT_NE(Section(page, "noise-floor").find("Not measured: no noise floor was measured: give --noise A A2"),
            std::string::npos)
      << Section(page, "noise-floor");
  EXPECT_EQ(CountOf(page, "class=\"band\""), 0u);
  EXPECT_EQ(page.find("within noise"), std::string::npos);
}

TEST_F(CompareHtml, TextFromTheRunsIsEscaped) {
  auto b = Wrong(AllRight(40), {0, 2});
  auto a = AllRight(40);
  for (auto* v : {&a, &b})
    for (auto& s : *v) s["category"] = "<img src=x onerror=alert(1)>";
  b[0]["extracted"] = "<";
  MakeRun(t_.path() + "/ea", "<script>alert(1)</script>", {{"mmlupro", a}});
  MakeRun(t_.path() + "/eb", "b&b", {{"mmlupro", b}});
  CompareOptions o;
  o.run_a = t_.path() + "/ea";
  o.run_b = t_.path() + "/eb";
  o.html_path = t_.path() + "/escaped.html";
  const Captured c = Compare(o);
  ASSERT_NE(c.code, kExitBadInput) << c.err;
  const std::string page = ReadFile(o.html_path);
  EXPECT_EQ(page.find("<img src=x"), std::string::npos);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("b&amp;b"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos) << "the comparison page has no script at all";
}

TEST_F(CompareHtml, APageThatCannotBeWrittenFailsAfterTheDocumentIsPrinted) {
  CompareOptions o = Opts(true);
  o.html_path = t_.path() + "/no/such/folder/compare.html";
  o.json = true;
  const Captured c = Compare(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_EQ(nlohmann::json::parse(c.out)["exit_code"], kExitRegression) << "the document is all there";
  EXPECT_NE(c.err.find("evalrun compare: --html: "), std::string::npos) << c.err;
  EXPECT_NE(c.err.find(o.html_path), std::string::npos) << c.err;
}

TEST_F(CompareHtml, RendersInHeadlessChromium) {
  ASSERT_TRUE(std::filesystem::exists(ChromiumPath()))
      << ChromiumPath() << " not found: the page test needs Chromium (apt-get install chromium)";
  const CompareOptions o = Opts(true);
  ASSERT_EQ(Compare(o).code, kExitRegression);
  const std::string url = "file://" + o.html_path;
  const std::string png = t_.path() + "/compare.png";
  std::string ignored;
  ASSERT_EQ(RunChromium(t_.path() + "/profile1", "--hide-scrollbars --screenshot='" + png + "' --window-size=1280,1800",
                        url, &ignored),
            0)
      << ReadFile(t_.path() + "/profile1.stderr");
  const std::string bytes = ReadFile(png);
  uint32_t w = 0, h = 0;
  ASSERT_TRUE(PngSize(bytes, &w, &h)) << "not a PNG: " << bytes.size() << " bytes";
  EXPECT_EQ(w, 1280u);
  EXPECT_EQ(h, 1800u);
  EXPECT_GT(bytes.size(), 20u * 1024) << "a blank page? " << bytes.size() << " bytes";
  std::string dom, error;
  ASSERT_TRUE(DumpDom(t_.path() + "/profile2", url, &dom, &error)) << error;
  for (const char* id : {"verdict", "summary", "noise-floor", "part-mmlupro", "setup"})
    EXPECT_NE(dom.find("<section id=\"" + std::string(id) + "\">"), std::string::npos) << id;
  EXPECT_EQ(CountOf(dom, "<svg class=\"chart"), 2u) << "the summary and the categories";
  EXPECT_EQ(CountOf(dom, "<tr class=\"flip\">"), 10u);
}

// Probe parts: the per-position KLD distribution.
class CompareHtmlProbe : public E2eTest {
 protected:
  FakeServer reference_;
  FakeServer shifted_{LogprobShifted(0.05)};  // an engine bug that moves every distribution a little
  void ProbeRun(const std::string& base_url, const std::string& job) {
    const std::string card =
        WriteCard(base_url, "4", R"({"probe": {"positions": 40, "top_logprobs": 5, "context_words": 12}})");
    const BinaryResult r = Run({"--card", card, "--job", job});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The counts of the chart's bars, from their <title>s.
  static std::vector<int> BarCounts(const std::string& page) {
    std::vector<int> counts;
    static const std::regex kBar(R"(<title>([^<]*): (\d+) positions</title>)");
    for (auto it = std::sregex_iterator(page.begin(), page.end(), kBar); it != std::sregex_iterator(); ++it)
      counts.push_back(std::stoi((*it)[2]));
    return counts;
  }
};

TEST_F(CompareHtmlProbe, AShiftedServerShowsItsKldDistributionThresholdAndWorstPositions) {
  FakeServer& a = reference_;
  FakeServer& b = shifted_;
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  ProbeRun(a.base_url(), "a");
  ProbeRun(b.base_url(), "b");
  const std::string html = dir_ + "/probe.html";
  BinaryResult r = RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/a", dir_ + "/runs/b", "--max-kld-mean",
                              "1e-9", "--json", "--html", html},
                             60);
  ASSERT_EQ(r.exit_code, kExitRegression) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& p = doc["parts"][0];
  const std::string page = ReadFile(html);
  const std::string part = Section(page, "part-probe");
  ASSERT_FALSE(part.empty()) << page.substr(0, 2000);
  EXPECT_NE(part.find("<h3>distribution of per-position KLD</h3>"), std::string::npos);
  // Every paired position is in one bar, none of them at 0.
  int sum = 0;
  for (int n : BarCounts(part)) sum += n;
  EXPECT_EQ(sum, p["paired"].get<int>());
  EXPECT_NE(part.find("<title>KLD exactly 0 (identical candidates): 0 positions</title>"), std::string::npos) << part;
  // The document's histogram is what the bars show.
  int listed = 0;
  for (const auto& bin : p["kld_histogram"]["bins"]) listed += bin["count"].get<int>();
  EXPECT_EQ(listed, p["paired"].get<int>());
  // The threshold is marked on the axis and shown exceeded.
  EXPECT_NE(part.find("class=\"limit-text\" text-anchor=\"start\">max_kld_mean 1e-09</text>"), std::string::npos)
      << part;
  EXPECT_NE(part.find("<span class=\"badge b-bad\">exceeded</span>"), std::string::npos);
  EXPECT_NE(Section(page, "verdict").find("<div class=\"banner bad\">Significant regression</div>"),
            std::string::npos);
  // The worst positions, as many as the document lists, with their text.
  const size_t worst = part.find("<h3>worst positions by KLD</h3>");
  ASSERT_NE(worst, std::string::npos);
  EXPECT_EQ(CountOf(part.substr(worst), "<tr><td class=\"num\">"), p["worst"].size());
  const std::string excerpt = p["worst"][0]["excerpt"];
  EXPECT_NE(part.find(HtmlEscape(excerpt)), std::string::npos) << excerpt;
  const int64_t changed = p["paired"].get<int64_t>() - p["top1_same"].get<int64_t>();
  EXPECT_EQ(p["top1_changed_total"].get<int64_t>(), changed);
  EXPECT_NE(part.find("<h3>top token changed (" + std::to_string(changed) + " positions)</h3>"), std::string::npos);
}

TEST_F(CompareHtmlProbe, TopTokenChangesAreListedInJsonMarkdownAndThePage) {
  FakeServer b(LogprobShifted(4.0));  // large enough to reorder the candidates at some positions
  ASSERT_TRUE(reference_.Start());
  ASSERT_TRUE(b.Start());
  ProbeRun(reference_.base_url(), "a");
  ProbeRun(b.base_url(), "b");
  const std::string html = dir_ + "/changed.html";
  BinaryResult r =
      RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/a", dir_ + "/runs/b", "--json", "--html", html}, 60);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const auto p = nlohmann::json::parse(r.out)["parts"][0];
  const int64_t changed = p["paired"].get<int64_t>() - p["top1_same"].get<int64_t>();
  ASSERT_GT(changed, 0) << "the fixture should move some top tokens";
  ASSERT_EQ(p["top1_changed"].size(), static_cast<size_t>(changed));
  int64_t last = -1;
  for (const auto& c : p["top1_changed"]) {
    EXPECT_EQ(c["same_top"], false);
    EXPECT_NE(c["a_top"]["token"], c["b_top"]["token"]);
    EXPECT_GT(c["position"].get<int64_t>(), last) << "by position";
    last = c["position"].get<int64_t>();
  }
  const std::string part = Section(ReadFile(html), "part-probe");
  const size_t at = part.find("<h3>top token changed (" + std::to_string(changed) + " positions)</h3><div class=\"wide\"><table>");
  ASSERT_NE(at, std::string::npos) << part;
  const std::string table = part.substr(at, part.find("</table>", at) - at);
  EXPECT_EQ(CountOf(table, "<tr><td class=\"num\">"), static_cast<size_t>(changed));
  r = RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/a", dir_ + "/runs/b"}, 60);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("### Top token changed (" + std::to_string(changed) + " positions"), std::string::npos)
      << r.out;
}

TEST_F(CompareHtmlProbe, TheSameServerTwiceHasEveryPositionInTheZeroBar) {
  FakeServer a;
  ASSERT_TRUE(a.Start());
  ProbeRun(a.base_url(), "a");
  ProbeRun(a.base_url(), "a2");
  const std::string html = dir_ + "/same.html";
  const BinaryResult r =
      RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/a", dir_ + "/runs/a2", "--html", html}, 60);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  const std::string part = Section(ReadFile(html), "part-probe");
  EXPECT_NE(part.find("<title>KLD exactly 0 (identical candidates): 40 positions</title>"), std::string::npos)
      << part;
  EXPECT_EQ(BarCounts(part).size(), 1u) << "no decade holds a position";
  EXPECT_NE(part.find("<h3>top token changed (0 positions)</h3><p>At every paired position"), std::string::npos);
  EXPECT_NE(part.find("<span class=\"badge b-info\">measured</span>"), std::string::npos);
}

TEST_F(CompareHtmlProbe, ANoisePairGivesTheProbeItsFloorInJsonMarkdownAndThePage) {
  FakeServer& a = reference_;
  FakeServer& b = shifted_;
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  ProbeRun(a.base_url(), "a");
  ProbeRun(a.base_url(), "a2");
  ProbeRun(b.base_url(), "b");
  const std::string runs = dir_ + "/runs/";
  const std::string html = dir_ + "/noise.html";
  BinaryResult r = RunBinary({EvalrunBinary(), "compare", runs + "a", runs + "b", "--noise", runs + "a", runs + "a2",
                              "--json", "--html", html},
                             60);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;  // no thresholds: measured, and the label never decides
  const auto doc = nlohmann::json::parse(r.out);
  const auto& p = doc["parts"][0];
  const auto& n = p["noise"];
  ASSERT_TRUE(n.is_object()) << p.dump(2).substr(0, 2000);
  EXPECT_EQ(n["paired"], 40);
  EXPECT_EQ(n["kld"]["max"].get<double>(), 0.0) << "the fake server answers the same twice";
  EXPECT_EQ(n["kld_histogram"]["zero"], 40);
  EXPECT_EQ(n["top1_agreement"].get<double>(), 1.0);
  EXPECT_TRUE(n["mean_ratio"].is_null());
  EXPECT_EQ(n["within_noise"], false);
  EXPECT_EQ(p["within_noise"], false);
  EXPECT_NE(n["text"].get<std::string>().find("is above the A/A pair's largest per-position KLD: beyond noise"),
            std::string::npos)
      << n["text"];
  // The page: the probe's clauses in the shared sentences (its view's),
  // both pairs in the chart, the floor's sentence.
  const std::string page = ReadFile(html);
  EXPECT_NE(Section(page, "verdict").find("Only each part's headline metric (and a probe's thresholds) decides it."),
            std::string::npos);
  EXPECT_NE(Section(page, "noise-floor")
                .find("labelled within noise; a probe is within noise when its mean KLD is not above the A/A pair's "
                      "largest per-position KLD (the labels"),
            std::string::npos);
  const std::string part = Section(page, "part-probe");
  EXPECT_NE(part.find("<title>A/A, KLD exactly 0 (identical candidates): 40 positions</title>"), std::string::npos)
      << part;
  EXPECT_NE(part.find("<title>A/B, KLD exactly 0 (identical candidates): 0 positions</title>"), std::string::npos);
  EXPECT_NE(part.find(">A/A (the noise pair)</text>"), std::string::npos);
  EXPECT_NE(part.find("<p>Noise floor: A/A pair (the same build probed twice): KLD mean 0,"), std::string::npos);
  EXPECT_NE(part.find("beyond noise</span>"), std::string::npos);
  // Markdown: the sentence under the noise floor and in the part, no empty accuracy table.
  r = RunBinary({EvalrunBinary(), "compare", runs + "a", runs + "b", "--noise", runs + "a", runs + "a2"}, 60);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("- probe: A/A pair (the same build probed twice): KLD mean 0, p99 0, max 0"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("| part | A/A flips |"), std::string::npos) << r.out;

  // The same server against its own repeat: within noise.
  r = RunBinary({EvalrunBinary(), "compare", runs + "a", runs + "a2", "--noise", runs + "a", runs + "a2", "--json"},
                60);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["parts"][0]["noise"]["label"], "within noise");
}

TEST_F(CompareHtmlProbe, ANoisePairOfOtherPositionsIsRefused) {
  FakeServer a;
  ASSERT_TRUE(a.Start());
  ProbeRun(a.base_url(), "a");
  ProbeRun(a.base_url(), "b");
  const std::string card = WriteCard(a.base_url(), "4",
                                     R"({"probe": {"positions": 40, "top_logprobs": 5, "context_words": 12, "seed": 7}})");
  ASSERT_EQ(Run({"--card", card, "--job", "other"}).exit_code, 0);
  const std::string runs = dir_ + "/runs/";
  const BinaryResult r =
      RunBinary({EvalrunBinary(), "compare", runs + "a", runs + "b", "--noise", runs + "other", runs + "a"}, 60);
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--noise: part probe: the noise pair does not probe what A/B does: positions: entry 0"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace evalrun::testing
