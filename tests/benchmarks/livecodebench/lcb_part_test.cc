// The LiveCodeBench part's pieces without a server or a sandbox: the rows
// (evals/benchmarks/livecodebench/lcb_data.h: the window scanned once without private tests,
// then only the picked rows' lines read again at their offsets, their tests
// decoded, spooled and read back as the one-pass reader gives them), and the verdicts and results
// (evals/benchmarks/livecodebench/lcb_results.h: the headline profile, the other profile where
// it differs, pass@1 by group and per profile).
#include <gtest/gtest.h>

#include <map>

#include "evals/benchmarks/livecodebench/lcb_data.h"
#include "evals/benchmarks/livecodebench/lcb_results.h"
#include "tests/support/run_binary.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun::testing {
namespace {

const std::string kFix = LcbFixtureDir();

LcbSource FixtureSource() {
  LcbSource s;
  s.label = "release_v2";
  s.names = {"test.jsonl", "test2.jsonl"};
  s.paths = {kFix + "test.jsonl", kFix + "test2.jsonl"};
  s.sha256 = {"a", "b"};
  return s;
}

TEST(LcbData, TheSecondPassSpoolsThePickedTestsAsTheOnePassReaderDecodesThem) {
  LcbSource source = FixtureSource();
  std::vector<LcbRow> rows;
  ASSERT_TRUE(ScanLcbWindow(&source, {}, &rows).ok());
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(source.rows, (std::vector<long long>{3, 2}));
  EXPECT_EQ(rows[3].question_id, "3950");
  EXPECT_EQ(rows[3].file, 1u);
  EXPECT_EQ(rows[3].contest_month, "2024-09");
  // Pick two, one in each file.
  std::vector<LcbRow*> picked = {&rows[0], &rows[3]};
  PromptSpool spool;
  ASSERT_TRUE(spool.Open().ok());
  ASSERT_TRUE(SpoolLcbTests(source, {}, picked, &spool).ok());
  EXPECT_FALSE(rows[1].tests.valid());  // not picked: never decoded
  std::map<std::string, LcbProblem> whole;
  for (size_t f = 0; f < 2; ++f)
    ASSERT_TRUE(ReadLcbFile(source.paths[f], source.names[f], {}, [&](LcbProblem&& p) {
                  whole[p.question_id] = std::move(p);
                  return Status::Ok();
                }).ok());
  for (const LcbRow* r : picked) {
    LcbTestCases t;
    ASSERT_TRUE(LoadLcbTests(spool, *r, &t).ok());
    const LcbProblem& p = whole.at(r->question_id);
    ASSERT_EQ(t.inputs.size(), p.public_tests.size() + p.private_tests.size());
    EXPECT_EQ(r->test_count, static_cast<int>(t.inputs.size()));
    EXPECT_EQ(t.inputs.front(), p.public_tests.front().input);
    EXPECT_EQ(t.outputs.back(), p.private_tests.back().output);
    EXPECT_EQ(t.fn_name, p.func_name);
  }
  const nlohmann::json info = LcbDatasetInfo(source);
  EXPECT_EQ(info["files"][1]["rows"], 2);
  EXPECT_EQ(info["sha256"].get<std::string>().size(), 64u);
}

// The picked rows' lines are read again at the offsets the one pass kept,
// in any order of picking; a file whose rows moved in between is named.
TEST(LcbData, PickedRowsAreReadAgainAtTheirOffsetsAndAChangedFileIsNamed) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/rows.jsonl";
  const std::string text = ReadFile(kFix + "test.jsonl");
  WriteFile(path, text);
  LcbSource source;
  source.label = "data_file";
  source.names = {"rows.jsonl"};
  source.paths = {path};
  source.sha256 = {"a"};
  std::vector<LcbRow> rows;
  ASSERT_TRUE(ScanLcbWindow(&source, {}, &rows).ok());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].offset, 0);
  EXPECT_EQ(rows[1].offset, static_cast<long long>(text.find('\n') + 1));
  EXPECT_EQ(rows[2].where, "rows.jsonl:3");
  PromptSpool spool;
  ASSERT_TRUE(spool.Open().ok());
  ASSERT_TRUE(SpoolLcbTests(source, {}, {&rows[2], &rows[0]}, &spool).ok());
  LcbTestCases t;
  ASSERT_TRUE(LoadLcbTests(spool, rows[2], &t).ok());
  EXPECT_EQ(t.fn_name, "pairSum");  // 3900, a LeetCode problem
  EXPECT_EQ(rows[2].test_count, static_cast<int>(t.inputs.size()));
  EXPECT_GT(rows[2].test_count, 0);
  // Another question where 1900A was (the same length: the lines stay put).
  std::string changed = text;
  const size_t at = changed.find("\"1900A\"");
  ASSERT_NE(at, std::string::npos);
  changed.replace(at, 7, "\"1900B\"");
  WriteFile(path, changed);
  Status st = SpoolLcbTests(source, {}, {&rows[1]}, &spool);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("rows.jsonl:2: question_id \"1900A\" is not there on the second read"),
            std::string::npos)
      << st.message();
  RemoveTree(dir);
}

TEST(LcbData, AWindowKeepsItsDatesAndADuplicateIdIsNamed) {
  LcbSource source = FixtureSource();
  LcbReadOptions window;
  ASSERT_TRUE(ParseLcbDate("2024-01-01", "start", &*(window.start = LcbDateTime())).ok());
  std::vector<LcbRow> rows;
  ASSERT_TRUE(ScanLcbWindow(&source, window, &rows).ok());
  ASSERT_EQ(rows.size(), 3u);  // 3900 (2024-03-24), 3950, abc950_d
  EXPECT_EQ(rows[0].question_id, "3900");
  LcbSource twice = FixtureSource();
  twice.names = {"test.jsonl", "again.jsonl"};
  twice.paths = {kFix + "test.jsonl", kFix + "test.jsonl"};
  rows.clear();
  Status st = ScanLcbWindow(&twice, {}, &rows);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("again.jsonl:1: question_id \"abc900_a\" is also at test.jsonl:1"), std::string::npos)
      << st.message();
}

LcbGrade Grade(std::vector<int> results, int code, const char* message) {
  LcbGrade g;
  g.results = std::move(results);
  g.error_code = code;
  g.error_message = message;
  g.stage = code ? "tests" : "done";
  return g;
}

TEST(LcbResults, TheHeadlineProfileAndTheOtherWhereItDiffers) {
  const LcbGrade wrong = Grade({1, -2}, -2, "Wrong Answer"), pass = Grade({1, 1}, 0, "");
  EXPECT_TRUE(FixedMayDiffer(wrong));
  EXPECT_FALSE(FixedMayDiffer(pass));
  EXPECT_FALSE(FixedMayDiffer(Grade({1, -3}, -3, "Time Limit Exceeded")));
  CodeVerdict o = MakeCodeVerdict("print(1)", false, wrong, &pass, LcbProfile::kOfficial);
  EXPECT_FALSE(o.passed);
  EXPECT_EQ(o.failure, "wrong_answer");
  EXPECT_EQ(o.failed_test, 1);
  ASSERT_TRUE(o.other.has_value());
  EXPECT_EQ(o.other->profile, "fixed");
  EXPECT_TRUE(o.other->passed);
  CodeVerdict f = MakeCodeVerdict("print(1)", true, wrong, &pass, LcbProfile::kFixed);
  EXPECT_TRUE(f.passed);  // cut off, but its code passed: it counts
  EXPECT_TRUE(f.cut_off);
  EXPECT_EQ(f.other->failure, "cut_off");  // the official failed it, and it was cut
  CodeVerdict same = MakeCodeVerdict("print(1)", false, wrong, nullptr, LcbProfile::kFixed);
  EXPECT_FALSE(same.other.has_value());
  EXPECT_EQ(same.profile, "fixed");
}

SampleRecord Record(const std::string& id, const std::string& difficulty, CodeVerdict v) {
  SampleRecord r;
  r.id = id;
  r.fields = {{"difficulty", difficulty}, {"platform", "atcoder"}, {"contest_month", "2024-09"}};
  r.verdict = std::move(v);
  return r;
}

TEST(LcbResults, PassAt1ByGroupAndProfile) {
  CodeVerdict pass;
  pass.passed = true;
  CodeVerdict fn;  // an official false negative
  fn.failure = "runtime_error";
  fn.other = CodeOutcome{"fixed", true, "none"};
  CodeVerdict nocode;
  nocode.failure = "no_code";
  const nlohmann::json info = {{"profile", "official"}, {"window", {{"text", "w"}}}, {"sandbox", {{"level", "x"}}}};
  const nlohmann::json r = AggregateLcb({Record("a", "easy", pass), Record("b", "easy", fn), Record("c", "hard", nocode)},
                                        1, info);
  EXPECT_NEAR(r["pass_at_1"].get<double>(), 1.0 / 3, 1e-6);
  EXPECT_NEAR(r["profiles"]["fixed"]["pass_at_1"].get<double>(), 2.0 / 3, 1e-6);
  EXPECT_EQ(r["by_difficulty"]["easy"]["passed"], 1);
  EXPECT_EQ(r["failures"], (nlohmann::json{{"no_code", 1}, {"runtime_error", 1}}));
  EXPECT_EQ(r["no_answer"], 1);
  EXPECT_EQ(r["failed"], 1);
  EXPECT_EQ(r["profiles_differ"], nlohmann::json{"b"});
  EXPECT_EQ(r["window"]["text"], "w");
  EXPECT_EQ(r["sandbox"]["level"], "x");
}

}  // namespace
}  // namespace evalrun::testing
