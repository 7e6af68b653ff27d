// scorers/livecodebench/lcb_verdict.h: failure kinds from official result codes, pass@1 and
// its groups.
#include "scorers/livecodebench/lcb_verdict.h"

#include <gtest/gtest.h>

#include "evals/base/sha256.h"

namespace evalrun {
namespace {

LcbGrade Grade(std::vector<int> results, int code, std::string stage = "tests", std::string exception = "") {
  LcbGrade g;
  g.results = std::move(results);
  g.error_code = code;
  g.stage = std::move(stage);
  g.exception = std::move(exception);
  return g;
}

TEST(LcbVerdictTest, KindsOfTheFirstFailure) {
  EXPECT_TRUE(MakeLcbVerdict(Grade({1, 1}, 0, "done"), "print(1)", false).passed);
  EXPECT_EQ(MakeLcbVerdict(Grade({1, 1}, 0, "done"), "print(1)", true).failure, LcbFailure::kNone);
  LcbVerdict wa = MakeLcbVerdict(Grade({1, 0}, -2), "x", false);
  EXPECT_EQ(wa.failure, LcbFailure::kWrongAnswer);
  EXPECT_EQ(wa.failed_test, 1);
  EXPECT_EQ(wa.code_sha256, Sha256Hex("x"));
  EXPECT_EQ(MakeLcbVerdict(Grade({-3}, -3), "x", false).failure, LcbFailure::kTimeLimit);
  EXPECT_EQ(MakeLcbVerdict(Grade({1, -4}, -4), "x", false).failure, LcbFailure::kRuntimeError);
  EXPECT_EQ(MakeLcbVerdict(Grade({-4}, -4, "compile", "SyntaxError"), "x(", false).failure, LcbFailure::kCompileError);
  EXPECT_EQ(MakeLcbVerdict(Grade({-4}, -4, "compile", "NameError"), "x", false).failure, LcbFailure::kRuntimeError);
  EXPECT_EQ(MakeLcbVerdict(Grade({-4}, -4, "compile", "SyntaxError"), " \n", false).failure, LcbFailure::kNoCode);
  EXPECT_EQ(MakeLcbVerdict(Grade({-2}, -2), "x", true).failure, LcbFailure::kCutOff);
  LcbGrade lost = Grade({-2}, -5, "");
  lost.lost = lost.overall_timeout = true;
  EXPECT_EQ(MakeLcbVerdict(lost, "x", false).failure, LcbFailure::kTimeLimit);
  lost.overall_timeout = false;
  EXPECT_EQ(MakeLcbVerdict(lost, "x", false).failure, LcbFailure::kRuntimeError);
  LcbFailure f;
  ASSERT_TRUE(ParseLcbFailure("compile_error", &f));
  EXPECT_EQ(f, LcbFailure::kCompileError);
  EXPECT_FALSE(ParseLcbFailure("compile", &f));
}

TEST(LcbVerdictTest, PassAt1OverallAndByGroup) {
  auto v = [](const char* diff, const char* plat, const char* month, bool passed, LcbFailure f) {
    LcbVerdict x;
    x.difficulty = diff;
    x.platform = plat;
    x.contest_month = month;
    x.passed = passed;
    x.failure = f;
    return x;
  };
  LcbSummary s = SummarizeLcb({v("easy", "atcoder", "2024-08", true, LcbFailure::kNone),
                               v("easy", "leetcode", "2024-08", false, LcbFailure::kWrongAnswer),
                               v("hard", "leetcode", "2024-09", false, LcbFailure::kTimeLimit),
                               v("hard", "codeforces", "2024-09", true, LcbFailure::kNone)});
  EXPECT_EQ(s.overall.n, 4);
  EXPECT_DOUBLE_EQ(s.overall.PassAt1(), 0.5);
  EXPECT_DOUBLE_EQ(s.by_difficulty["easy"].PassAt1(), 0.5);
  EXPECT_EQ(s.by_platform["leetcode"].passed, 0);
  EXPECT_EQ(s.by_month["2024-09"].n, 2);
  EXPECT_EQ(s.failures, (std::map<std::string, int>{{"time_limit", 1}, {"wrong_answer", 1}}));
  EXPECT_DOUBLE_EQ(SummarizeLcb({}).overall.PassAt1(), 0.0);
}

}  // namespace
}  // namespace evalrun
