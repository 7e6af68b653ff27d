// The report's view of a probe run (evals/benchmarks/probe/probe_report.h):
// a real probe run against the fake server, `evalrun report`, and the page
// rendered by headless Chromium (as tests/engine/report_test.cc does) showing the
// distribution facts and the positions.
#include <filesystem>

#include "tests/support/chromium.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/temp_dir.h"

namespace evalrun::testing {
namespace {

class ReportProbe : public E2eTest {};

TEST_F(ReportProbe, ShowsTheDistributionAndThePositions) {
  ASSERT_TRUE(std::filesystem::exists(ChromiumPath()))
      << ChromiumPath() << " not found: the page test needs Chromium (apt-get install chromium)";
  FakeServer server;
  ASSERT_TRUE(server.Start());
  const std::string card =
      WriteCard(server.base_url(), "4", R"({"probe": {"positions": 30, "top_logprobs": 4, "context_words": 10}})");
  BinaryResult r = Run({"--card", card, "--job", "p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string run = dir_ + "/runs/p";
  r = RunBinary({EvalrunBinary(), "report", run}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const std::string md = ReadFile(run + "/report.md");
  EXPECT_NE(md.find("Logprob probe: next-token distributions"), std::string::npos) << md;
  EXPECT_NE(md.find("30 positions, top 4 candidates"), std::string::npos) << md;

  std::string dom, error;
  ASSERT_TRUE(DumpDom(dir_ + "/profile", "file://" + run + "/report.html", &dom, &error)) << error;

  const size_t at = dom.find("<section id=\"probe\">");
  ASSERT_NE(at, std::string::npos) << dom.substr(0, 3000);
  const std::string section = dom.substr(at, dom.find("</section>", at) - at);
  EXPECT_NE(section.find("Logprob probe: next-token distributions"), std::string::npos);
  EXPECT_NE(section.find("30 positions of ruler/PaulGrahamEssays.json, top 4 candidates"), std::string::npos)
      << section.substr(0, 1000);
  EXPECT_NE(section.find("share of positions by top-1 probability"), std::string::npos);
  EXPECT_EQ(CountOf(section, "class=\"track\""), 10u) << "one bar per tenth of probability";
  // One row per position, each with its excerpt and top token.
  size_t rows = 0;
  for (const auto& s : Samples("p", "probe")) {
    rows += section.find("<td class=\"num\">" + std::to_string(s["position"].get<int64_t>()) + "</td>") !=
            std::string::npos;
  }
  EXPECT_EQ(rows, 30u);
  // The sample browser lists them too.
  EXPECT_EQ(CountOf(dom, "<tr class=\"srow\">"), 30u);
}

}  // namespace
}  // namespace evalrun::testing
