// Results as types: a verdict kind defined
// only in the test tree ("checks", a pass with per-check outcomes,
// tests/parts/checks_part.cc, built into evalrun-test-parts) runs through
// `run`, `report` and `compare` against the fake server. Adding that kind
// changed no file of evals/publish: the test cannot ask git, but the kind
// reaches report and compare only through the registries (evals/run/
// verdict_kind.h, evals/publish/kind_view.h), which is what it checks here:
// its own aggregate in results.json, its own table in the report, its own
// metrics (pass/fail per task with McNemar, then per check) in compare.
#include <string>

#include "evals/base/files.h"
#include "tests/support/markdown_tables.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

class E2eChecksKind : public E2eTest {
 protected:
  static std::string Binary() { return evalrun::testing::TestPartsBinary(); }
  BinaryResult RunJob(const std::string& card, const std::string& job) {
    return RunBinary({Binary(), "--card", card, "--job", job, "--out", dir_ + "/runs", "--data-dir", DatasetsDir()},
                     120);
  }
  std::string Job(const std::string& job) const { return dir_ + "/runs/" + job; }
};

// Run A passes every check; run B fails two of three checks (lower case,
// too long) on the even-numbered tasks (t02, t04, ...).
Responder Replies(bool break_odd) {
  return [break_odd](const nlohmann::json& req) {
    const std::string t = req["messages"][0]["content"].get<std::string>();
    const int n = std::stoi(t.substr(t.find("Task t") + 6, 2));
    FakeReply r;
    r.content = break_odd && n % 2 == 0 ? "ANSWER: no, and a sentence that runs past forty bytes" : "ANSWER: YES";
    return r;
  };
}

TEST_F(E2eChecksKind, ATestTreeKindRunsThroughRunReportAndCompare) {
  FakeServer server(FakeServerOptions{});
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.origin(), "2", R"({"checks": {}})");
  server.SetResponder(Replies(false));
  BinaryResult a = RunJob(card, "a");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  server.SetResponder(Replies(true));
  BinaryResult b = RunJob(card, "b");
  ASSERT_EQ(b.exit_code, 0) << b.err;

  // run: its codec's fields in samples.jsonl, its aggregate in results.json.
  const auto samples = Samples("b", "checks");
  ASSERT_EQ(samples.size(), 12u);
  EXPECT_EQ(samples[0]["checks"].size(), 3u);
  const nlohmann::json rb = Results("b")["parts"]["checks"];
  EXPECT_EQ(rb["kind"], "checks");
  EXPECT_EQ(rb["n"], 12);
  EXPECT_DOUBLE_EQ(rb["score"].get<double>(), 0.5);
  EXPECT_EQ(rb["checks"]["has_answer"]["passed"], 12);
  EXPECT_EQ(rb["checks"]["short"]["passed"], 6);
  EXPECT_DOUBLE_EQ(Results("a")["parts"]["checks"]["score"].get<double>(), 1.0);

  // report: the summary line and the kind's own table, in both renderings.
  BinaryResult rep = RunBinary({Binary(), "report", Job("b")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string md = UnpadTables(ReadFile(Job("b") + "/report.md"));
  EXPECT_NE(md.find("all checks passed"), std::string::npos) << md;
  EXPECT_NE(md.find("### Checks (test kind): pass rate by check"), std::string::npos) << md;
  EXPECT_NE(md.find("| upper_case | 12 | 6 | 50.0 |"), std::string::npos) << md;
  const std::string html = ReadFile(Job("b") + "/report.html");
  EXPECT_NE(html.find("Checks (test kind): pass rate by check"), std::string::npos);
  EXPECT_NE(html.find("check upper_case"), std::string::npos);  // the sample browser's rows

  // compare: pass/fail per task, 6 flips all to A: McNemar p = 2 / 2^6.
  BinaryResult c = RunBinary({Binary(), "compare", Job("a"), Job("b"), "--json"});
  EXPECT_EQ(c.exit_code, 4) << c.err;  // a significant regression
  const nlohmann::json doc = nlohmann::json::parse(c.out);
  ASSERT_EQ(doc["parts"].size(), 1u);
  const nlohmann::json& p = doc["parts"][0];
  EXPECT_EQ(p["kind"], "checks");
  EXPECT_EQ(p["scale"], "pass_fail");
  EXPECT_EQ(p["verdict"], "regression");
  ASSERT_EQ(p["metrics"].size(), 2u);
  EXPECT_EQ(p["metrics"][0]["name"], "all_checks");
  EXPECT_EQ(p["metrics"][0]["overall"]["a_better"], 6);
  EXPECT_NEAR(p["metrics"][0]["overall"]["p_value"].get<double>(), 0.03125, 1e-9);
  EXPECT_EQ(p["metrics"][1]["name"], "per_check");
  ASSERT_EQ(p["flipped"].size(), 6u);
  EXPECT_EQ(p["flipped"][0]["answer_a"], "all passed");  // what the kind's units show beside a flip
  EXPECT_EQ(p["flipped"][0]["answer_b"], "failed: upper_case, short");
  BinaryResult cm = RunBinary({Binary(), "compare", Job("a"), Job("b")});
  EXPECT_NE(cm.out.find("**Regression** in checks: all checks passed"), std::string::npos) << cm.out;
  EXPECT_NE(cm.out.find("### per check by check"), std::string::npos) << cm.out;
  EXPECT_NE(UnpadTables(cm.out).find("| upper_case | 12 | 100.00 | 50.00 |"), std::string::npos) << cm.out;
}

// The plain evalrun does not know the kind: report says so by name.
TEST_F(E2eChecksKind, AProgramWithoutTheKindNamesItInsteadOfGuessing) {
  FakeServer server(FakeServerOptions{});
  ASSERT_TRUE(server.Start());
  server.SetResponder(Replies(false));
  ASSERT_EQ(RunJob(WriteCard(server.origin(), "2", R"({"checks": {}})"), "a").exit_code, 0);
  BinaryResult rep = RunBinary({EvalrunBinary(), "report", Job("a")});
  EXPECT_NE(rep.exit_code, 0);
  EXPECT_NE(rep.err.find("checks"), std::string::npos) << rep.err;
}

}  // namespace
}  // namespace evalrun::testing
