// Every table of a run's page fits its box, measured in a real browser: the
// page of each fixture run (tests/fixtures/runs/: among them a run with
// every part, the speed part's raw-route marks included, and an H100-shaped
// run of speed, MMLU-Pro and IFEval) is opened by headless Chromium at a
// 1280-px window and at a phone's 390 px, with a script added at its end
// that measures, then writes its findings into the DOM for --dump-dom:
//   - at 1280 px every table is as wide as its box or narrower (nothing to
//     scroll), at 390 px it may be wider but scrolls inside its own box;
//   - at both widths the page itself is never wider than the window;
//   - no word of a table cell is broken over two lines (a break after a
//     hyphen is not a broken word).
// The compare page (`evalrun compare --html`) is measured the same way.
// Chromium runs under `timeout` (tests/support/chromium.h) and is waited for.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/publish/compare.h"
#include "evals/publish/compare_html.h"
#include "evals/publish/report.h"
#include "tests/support/chromium.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

// Measures the page and posts {vw, page, tables: [{where, box, table,
// boxed, right}], broken: [word]}, URI-encoded, to the frame around it.
constexpr const char* kMeasure = R"JS(<script>
(function () {
  'use strict';
  var out = {vw: window.innerWidth, page: document.documentElement.scrollWidth, tables: [], broken: []};
  var tables = document.querySelectorAll('table');
  for (var i = 0; i < tables.length; i++) {
    var t = tables[i], box = t.parentElement, sec = t.closest('section');
    var heading = sec && sec.querySelector('h2') ? sec.querySelector('h2').textContent : '(no section)';
    out.tables.push({where: heading + ' #' + i, boxed: box.classList.contains('wide'),
                     table: t.getBoundingClientRect().width, box: box.clientWidth,
                     right: box.getBoundingClientRect().right});
    var cells = t.querySelectorAll('th, td');
    for (var c = 0; c < cells.length && out.broken.length < 20; c++) {
      var walk = document.createTreeWalker(cells[c], NodeFilter.SHOW_TEXT);
      for (var n = walk.nextNode(); n; n = walk.nextNode()) {
        var re = /[^\s-]+-?/g, m;  // a hyphen is a place to break, as in print
        while ((m = re.exec(n.data)) !== null) {
          var r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          var rects = r.getClientRects(), tops = {};
          for (var k = 0; k < rects.length; k++) if (rects[k].width > 0) tops[Math.round(rects[k].top)] = 1;
          if (Object.keys(tops).length > 1) out.broken.push(heading + ': ' + m[0]);
        }
      }
    }
  }
  parent.postMessage(encodeURIComponent(JSON.stringify(out)), '*');
})();
</script>)JS";

std::string PercentDecoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The page of the run folder `fixture` (copied into `tmp`), with kMeasure added.
std::string MeasuredPage(const std::string& fixture, const std::string& tmp) {
  const std::string run = tmp + "/run";
  fs::copy(fixture, run, fs::copy_options::recursive);
  ReportOptions o;
  o.run_dir = run;
  std::string md, html;
  const Status st = BuildReport(o, &md, &html);
  EXPECT_TRUE(st.ok()) << fixture << ": " << st.ToString();
  const size_t end = html.rfind("</body>");
  EXPECT_NE(end, std::string::npos);
  html.insert(end, kMeasure);
  WriteText(tmp + "/page.html", html);
  return tmp + "/page.html";
}

// Chromium's measurement of `page` in a frame `width` px wide (headless
// Chromium keeps its window at least 500 px wide, so a phone's width is a
// frame's): the frame's page posts what it measured, the harness around it
// writes that into <pre id="page-measure">, and --dump-dom prints it once
// the virtual time budget has let the message through.
nlohmann::json Measure(const std::string& page, int width, const std::string& profile) {
  const std::string w = std::to_string(width);
  const std::string harness = profile + "-harness.html";
  WriteText(harness, "<!DOCTYPE html><html><body style=\"margin:0\"><pre id=\"page-measure\"></pre><script>"
                     "window.addEventListener('message', function (e) {"
                     " document.getElementById('page-measure').textContent = e.data; });</script>"
                     "<iframe src=\"file://" + page + "\" style=\"width:" + w + "px;height:844px;border:0\"></iframe>"
                     "</body></html>\n");
  std::string dom;
  const int rc = RunChromium(profile, "--window-size=" + std::to_string(width + 40) +
                                          ",1000 --virtual-time-budget=5000 --allow-file-access-from-files --dump-dom",
                             "file://" + harness, &dom);
  EXPECT_EQ(rc, 0) << ReadFile(profile + ".stderr");
  const std::string open = "<pre id=\"page-measure\">";
  const size_t at = dom.find(open);
  if (at == std::string::npos || dom.compare(at + open.size(), 6, "</pre>") == 0) {
    ADD_FAILURE() << "the measuring script wrote nothing at " << width << " px: " << ReadFile(profile + ".stderr");
    return nlohmann::json();
  }
  const size_t from = at + open.size();
  return nlohmann::json::parse(PercentDecoded(dom.substr(from, dom.find("</pre>", from) - from)), nullptr, false);
}

std::vector<std::string> FixtureRuns() {
  std::vector<std::string> runs;
  for (const auto& e : fs::directory_iterator(FixturePath("runs")))
    if (fs::exists(e.path() / "results.json")) runs.push_back(e.path().string());
  std::sort(runs.begin(), runs.end());
  return runs;
}

void ExpectFits(const nlohmann::json& m, int width, const std::string& run) {
  ASSERT_TRUE(m.is_object()) << run << " at " << width << " px: no measurement";
  EXPECT_EQ(m["vw"], width) << run << ": the window is not " << width << " px wide";
  EXPECT_LE(m["page"].get<double>(), width) << run << " at " << width << " px: the page itself scrolls sideways";
  EXPECT_GT(m["tables"].size(), 0u) << run;
  for (const auto& t : m["tables"]) {
    const std::string where = run + " at " + std::to_string(width) + " px, " + t["where"].get<std::string>();
    EXPECT_TRUE(t["boxed"].get<bool>()) << where << ": a table outside a scrolling box";
    EXPECT_LE(t["right"].get<double>(), width + 0.5) << where << ": the table's box runs off the window";
    if (width >= 1280) {
      EXPECT_LE(t["table"].get<double>(), t["box"].get<double>() + 0.5)
          << where << ": " << t["table"] << " px wide in a box of " << t["box"] << " px";
    }
  }
  for (const auto& w : m["broken"]) ADD_FAILURE() << run << " at " << width << " px: a word broken over two lines: " << w;
}

TEST(PageFit, EveryTableOfEveryFixturePageFitsItsBoxAt1280AndScrollsInItsBoxAt390) {
  if (!fs::exists(ChromiumPath())) GTEST_SKIP() << ChromiumPath() << " not found: this test needs Chromium (apt-get install chromium)";
  const std::vector<std::string> runs = FixtureRuns();
  ASSERT_GE(runs.size(), 3u) << "the fixture runs are missing";
  for (const std::string& run : runs) {
    TempDir t("evalrun-page-fit");
    const std::string page = MeasuredPage(run, t.path());
    const std::string name = fs::path(run).filename().string();
    ExpectFits(Measure(page, 1280, t.path() + "/p1280"), 1280, name);
    ExpectFits(Measure(page, 390, t.path() + "/p390"), 390, name);
  }
}

// The page of `evalrun compare A B --html` for the fixture run `a` against
// `b` (copied into `tmp`; with `noise`, A against itself as its noise
// floor), with kMeasure added.
std::string MeasuredComparePage(const std::string& a, const std::string& b, bool noise, const std::string& tmp) {
  fs::copy(a, tmp + "/a", fs::copy_options::recursive);
  fs::copy(b, tmp + "/b", fs::copy_options::recursive);
  CompareOptions o;
  o.run_a = tmp + "/a";
  o.run_b = tmp + "/b";
  if (noise) o.noise_a = o.noise_a2 = tmp + "/a";
  nlohmann::json cmp;
  const Status st = BuildComparison(o, &cmp);
  EXPECT_TRUE(st.ok()) << a << " against " << b << ": " << st.ToString();
  std::string html = ComparisonHtml(cmp);
  html.insert(html.rfind("</body>"), kMeasure);
  WriteText(tmp + "/compare.html", html);
  return tmp + "/compare.html";
}

// The compare page holds to the same rules: every part of the fixtures
// paired with itself (each kind's own section, the noise floor), and runs of
// different setups, whose "what differs" rows carry long values (sha256s,
// request settings as JSON, model paths).
TEST(PageFit, EveryTableOfTheComparePageFitsItsBoxAt1280AndScrollsInItsBoxAt390) {
  if (!fs::exists(ChromiumPath())) GTEST_SKIP() << ChromiumPath() << " not found: this test needs Chromium (apt-get install chromium)";
  const std::string every = FixturePath("runs/every-part"), h100 = FixturePath("runs/h100-speed"),
                    old = FixturePath("runs/main-8e75a03");
  struct Pair {
    std::string a, b;
    bool noise;
  };
  for (const Pair& p : {Pair{every, every, true}, Pair{every, h100, false}, Pair{old, every, false}}) {
    TempDir t("evalrun-page-fit");
    const std::string page = MeasuredComparePage(p.a, p.b, p.noise, t.path());
    const std::string name = "compare " + fs::path(p.a).filename().string() + " " + fs::path(p.b).filename().string();
    ExpectFits(Measure(page, 1280, t.path() + "/p1280"), 1280, name);
    ExpectFits(Measure(page, 390, t.path() + "/p390"), 390, name);
  }
}

// The fixtures hold what the page must lay out: every part between them,
// and the speed part's raw-route marks.
TEST(PageFit, TheFixtureRunsHoldEveryPart) {
  std::set<std::string> parts;
  bool raw_route_marks = false;
  for (const std::string& run : FixtureRuns()) {
    const nlohmann::json r = nlohmann::json::parse(ReadFile(run + "/results.json"));
    for (const auto& [name, p] : r["parts"].items()) parts.insert(name);
    if (r["parts"].contains("speed"))
      raw_route_marks |= r["parts"]["speed"].dump().find("sent over /completion") != std::string::npos;
  }
  for (const char* p : {"mmlupro", "ifeval", "ruler", "livecodebench", "probe", "thinking", "fit", "speed"})
    EXPECT_TRUE(parts.count(p)) << "no fixture run has the part " << p;
  EXPECT_TRUE(raw_route_marks) << "no fixture run's speed part has the raw route's marks";
}

}  // namespace
}  // namespace evalrun::testing
