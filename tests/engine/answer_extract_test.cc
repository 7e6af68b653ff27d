// The shared answer extraction (scorers/answer_extract.h): regex chains with
// findall's semantics, numbers after a marker, last, or boxed, with a
// tolerance, the normalisation of exact strings, the named letter chains.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scorers/answer_extract.h"

namespace evalrun::testing {
namespace {

RegexStep Step(const std::string& pattern, int group = 0) {
  RegexStep s;
  std::string error;
  EXPECT_TRUE(CompileRegexStep(pattern, group, &s, &error)) << error;
  return s;
}

TEST(AnswerExtract, ARegexChainTakesTheFirstStepThatMatches) {
  const std::vector<RegexStep> chain = {Step("answer is \\(?([A-J])\\)?"), Step("\\b([A-J])\\b", -1)};
  EXPECT_EQ(RunRegexChain(chain, "so the answer is (C)."), "C");
  EXPECT_EQ(RunRegexChain(chain, "A or B, surely D"), "D");  // the last match of the second step
  EXPECT_EQ(RunRegexChain(chain, "none here"), std::nullopt);
  // Several groups: the first non-empty one; the match is stripped.
  EXPECT_EQ(RunRegexChain({Step("(x)|( [0-9]+ )", -1)}, "a 12 b 34 "), "34");
  // An index past the matches gives no answer (Python would raise).
  EXPECT_EQ(RunRegexChain({Step("[0-9]", 5)}, "1 2"), std::nullopt);
  RegexStep bad;
  std::string error;
  EXPECT_FALSE(CompileRegexStep("(unclosed", 0, &bad, &error));
  EXPECT_FALSE(error.empty());
}

TEST(AnswerExtract, NumbersAfterAMarkerLastOrBoxed) {
  EXPECT_EQ(ExtractNumber("so 3 + 4 = 7\n#### 1,234 apples", NumberFrom::kMarker, "####"), "1234");
  EXPECT_EQ(ExtractNumber("no marker 5", NumberFrom::kMarker, "####"), std::nullopt);
  EXPECT_EQ(ExtractNumber("it costs $12.50, not 13.", NumberFrom::kLast, ""), "13");
  EXPECT_EQ(ExtractNumber("x = -4", NumberFrom::kLast, ""), "-4");
  EXPECT_EQ(ExtractNumber("\\boxed{2} then \\boxed{x = {0.75}}", NumberFrom::kBoxed, ""), "0.75");
  EXPECT_EQ(ExtractNumber("\\boxed{ 42 }", NumberFrom::kBoxed, ""), "42");
  EXPECT_EQ(ExtractNumber("\\boxed{42", NumberFrom::kBoxed, ""), std::nullopt);
  EXPECT_EQ(ExtractNumber("no number", NumberFrom::kLast, ""), std::nullopt);
}

TEST(AnswerExtract, NumbersMatchAsIntegersOrWithinTheTolerance) {
  EXPECT_TRUE(NumbersMatch("72", "72", 0));
  EXPECT_FALSE(NumbersMatch("72", "73", 0));
  EXPECT_TRUE(NumbersMatch("72.0", "72", 0));
  EXPECT_TRUE(NumbersMatch("3.14", "3.14159", 0.01));
  EXPECT_FALSE(NumbersMatch("3.2", "3.14159", 0.01));
  EXPECT_FALSE(NumbersMatch("seven", "7", 1));
  EXPECT_FALSE(NumbersMatch("", "7", 1));
  EXPECT_TRUE(NumbersMatch("12345678901234567", "12345678901234567", 0));
  EXPECT_FALSE(NumbersMatch("12345678901234567", "12345678901234568", 0));  // exact as integers
}

TEST(AnswerExtract, NormalisationInItsOrder) {
  Normalisation n;
  n.remove = {Step(","), Step("(?s).*#### ")};
  n.ignore_case = true;
  n.ignore_punctuation = true;
  n.collapse_whitespace = true;
  EXPECT_EQ(Normalise(n, "Work...\n#### The  Eiffel,\tTower!"), "the eiffel tower");
  Normalisation none;
  EXPECT_EQ(Normalise(none, " As Is. "), " As Is. ");
}

TEST(AnswerExtract, NamedLetterChains) {
  const LetterChain* first = FindLetterChain("first-letter");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ((*first)("**B** is right", 4), 'B');
  EXPECT_EQ((*first)("E is not an option", 4), 0);
  EXPECT_EQ(FindLetterChain("no-such-chain"), nullptr);
  const std::vector<std::string> names = LetterChainNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "first-letter"), names.end());
}

}  // namespace
}  // namespace evalrun::testing
