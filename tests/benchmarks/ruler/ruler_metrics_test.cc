// RULER's metrics and post-processing (scorers/ruler/ruler_metrics.h). Expected
// values were computed with RULER's own functions (scripts/eval/evaluate.py
// postprocess_pred, scripts/eval/synthetic/constants.py) under CPython 3.11.
#include "scorers/ruler/ruler_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

TEST(RulerMetrics, PostprocessLikeEvaluatePy) {
  EXPECT_EQ(RulerPostprocess("  \tHello\x01World\n "), "Hello\nWorld");
  EXPECT_EQ(RulerPostprocess(" \x1f"
                             "abc"),
            "abc");                                             // \x1f is whitespace to str.strip
  EXPECT_EQ(RulerPostprocess(std::string("\0abc", 4)), "abc");  // \x00 -> \n, then stripped
  EXPECT_EQ(RulerPostprocess("a\x7f"
                             "b"),
            "a\x7f"
            "b");  // 0x7f is not in [\x00-\x1f]
  EXPECT_EQ(RulerPostprocess("\xC2\xA0"
                             "abc\xE3\x80\x80"),
            "abc");  // U+00A0, U+3000
  EXPECT_EQ(RulerPostprocess(std::string("\0", 1)), "");
  EXPECT_EQ(RulerPostprocess("  \n "), "");
  EXPECT_EQ(RulerPostprocess("a\tb\r\nc"), "a\nb\n\nc");
}

TEST(RulerMetrics, PythonLower) {
  // RULER lowers answers and references with Python's str.lower():
  // py::PyLower, the exact Unicode 14 mapping with Final_Sigma.
  using py::PyLower;
  EXPECT_EQ(PyLower("ABC def"), "abc def");
  EXPECT_EQ(PyLower("\xC3\x80\xC3\x89\xC3\x8E \xC7\x84 \xCE\xA9"),
            "\xC3\xA0\xC3\xA9\xC3\xAE \xC7\x86 \xCF\x89");
  EXPECT_EQ(PyLower("\xCE\x95\xCE\x9B\xCE\x9B\xCE\x86\xCE\x94\xCE\x91"),  // ΕΛΛΆΔΑ
            "\xCE\xB5\xCE\xBB\xCE\xBB\xCE\xAC\xCE\xB4\xCE\xB1");          // ελλάδα
  EXPECT_EQ(PyLower("\xC4\xB0stanbul"), "i\xCC\x87stanbul");              // İ -> i + U+0307
  // Final sigma: 'ΟΔΟΣ' -> 'οδος' (ς), 'Σ' -> 'σ', "AΣ'B" -> "aσ'b".
  EXPECT_EQ(PyLower("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3"), "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82");
  EXPECT_EQ(PyLower("\xCE\xA3"), "\xCF\x83");
  EXPECT_EQ(PyLower("A\xCE\xA3'B"), "a\xCF\x83'b");
  // Case-ignorable characters beyond the common ones (Python 3.11:
  // 'Α\u200dΣ'.lower() == 'α\u200dς'; '\u02b0Σ'.lower() == '\u02b0σ').
  EXPECT_EQ(PyLower("\xCE\x91\xE2\x80\x8D\xCE\xA3"), "\xCE\xB1\xE2\x80\x8D\xCF\x82");
  EXPECT_EQ(PyLower("\xCA\xB0\xCE\xA3"), "\xCA\xB0\xCF\x83");
  // The metric sees the same: a reference with a final sigma matches.
  EXPECT_DOUBLE_EQ(StringMatchAll("\xCE\x91\xE2\x80\x8D\xCE\xA3", {"\xCE\xB1\xE2\x80\x8D\xCF\x82"}), 1.0);
}

TEST(RulerMetrics, StringMatchAll) {
  EXPECT_DOUBLE_EQ(StringMatchAll("The numbers are 123 and 456.", {"123", "456", "789"}), 2.0 / 3);
  EXPECT_DOUBLE_EQ(StringMatchAll("ABC", {"abc"}), 1.0);
  EXPECT_DOUBLE_EQ(StringMatchAll("abc", {"ABC"}), 1.0);
  EXPECT_DOUBLE_EQ(StringMatchAll("nothing", {"x", "y"}), 0.0);
  EXPECT_DOUBLE_EQ(StringMatchAll("1,2,3", {"1", "2", "3"}), 1.0);
  EXPECT_DOUBLE_EQ(StringMatchAll("anything", {""}), 1.0);  // '' in s
  EXPECT_DOUBLE_EQ(StringMatchAll("x", {}), 0.0);
  // Control characters become newlines: a gold spanning a tab no longer matches.
  EXPECT_DOUBLE_EQ(StringMatchAll("a\tb", {"a\tb"}), 0.0);
  EXPECT_DOUBLE_EQ(StringMatchAll("a\tb", {"a\nb"}), 1.0);
  // Strip: a gold with a leading space misses at the start of the answer.
  EXPECT_DOUBLE_EQ(StringMatchAll("  Paris", {" Paris"}), 0.0);
  EXPECT_DOUBLE_EQ(StringMatchAll("\xC3\x89LAN", {"\xC3\xA9lan"}), 1.0);  // ÉLAN ~ élan
  EXPECT_DOUBLE_EQ(StringMatchAll("STRASSE", {"stra\xC3\x9F"
                                              "e"}),
                   0.0);  // as Python
}

TEST(RulerMetrics, StringMatchPart) {
  EXPECT_DOUBLE_EQ(StringMatchPart("It is Paris, I think", {"London", "paris"}), 1.0);
  EXPECT_DOUBLE_EQ(StringMatchPart("Rome", {"London", "Paris"}), 0.0);
  EXPECT_DOUBLE_EQ(StringMatchPart("Rome", {}), 0.0);
  EXPECT_DOUBLE_EQ(RulerSampleScore(RulerMetric::kStringMatchPart, "a b", {"b", "c"}), 1.0);
  EXPECT_DOUBLE_EQ(RulerSampleScore(RulerMetric::kStringMatchAll, "a b", {"b", "c"}), 0.5);
}

TEST(RulerMetrics, TaskScoreRoundsLikePython) {
  const std::vector<std::string> preds = {"The numbers are 123 and 456.", "ABC", "nothing",
                                          "1,2,3"};
  const std::vector<std::vector<std::string>> refs = {
      {"123", "456", "789"}, {"abc"}, {"x", "y"}, {"1", "2", "3"}};
  const RulerTaskScore all = ScoreRulerTask(RulerMetric::kStringMatchAll, preds, refs);
  EXPECT_DOUBLE_EQ(all.score, 66.67);
  EXPECT_EQ(all.total, 4);
  EXPECT_EQ(all.nulls, 0);
  EXPECT_DOUBLE_EQ(ScoreRulerTask(RulerMetric::kStringMatchPart, preds, refs).score, 75.0);
  EXPECT_DOUBLE_EQ(RulerTaskScoreFromSamples(std::vector<double>(7, 1.0 / 3)), 33.33);
  EXPECT_DOUBLE_EQ(RulerTaskScoreFromSamples({}), 0.0);
  EXPECT_DOUBLE_EQ(PyRound2(0.125), 0.12);  // exact tie: half to even
  EXPECT_DOUBLE_EQ(PyRound2(0.375), 0.38);
  EXPECT_DOUBLE_EQ(PyRound2(2.675), 2.67);  // 2.67499999... in binary
  EXPECT_DOUBLE_EQ(PyRound2(55.555), 55.55);
}

TEST(RulerMetrics, NullsAreEmptyAfterPostprocessing) {
  const std::vector<std::string> preds = {"", "  \n ", std::string("\0", 1), "x"};
  const std::vector<std::vector<std::string>> refs(4, std::vector<std::string>{"x"});
  const RulerTaskScore s = ScoreRulerTask(RulerMetric::kStringMatchAll, preds, refs);
  EXPECT_EQ(s.nulls, 3);
  EXPECT_EQ(s.total, 4);
  EXPECT_DOUBLE_EQ(s.score, 25.0);
  EXPECT_STREQ(RulerMetricName(RulerMetric::kStringMatchPart), "string_match_part");
}

}  // namespace
}  // namespace evalrun
