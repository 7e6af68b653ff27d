// Unit tests of scorers/choice_extract.h on hand-made edge cases:
// `first-letter` expectations follow the contract in the header. (MMLU-Pro's
// official chain: tests/benchmarks/mmlupro/mmlupro_extract_test.cc.)
#include "scorers/choice_extract.h"

#include <gtest/gtest.h>

#include <string>

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// first-letter

TEST(ExtractFirstLetterTest, PronounIIsNotAnAnswer) {
  EXPECT_EQ(ExtractFirstLetter("I think the answer is B", 10), 'B');
  EXPECT_EQ(ExtractFirstLetter("I'm fairly sure: C", 10), 'C');
  EXPECT_EQ(ExtractFirstLetter("I\xE2\x80\x99ve checked, D", 10), 'D');  // I’ve
}

TEST(ExtractFirstLetterTest, ArticleAIsNotAnAnswer) {
  EXPECT_EQ(ExtractFirstLetter("A good choice is C", 10), 'C');
  EXPECT_EQ(ExtractFirstLetter("A. Paris", 10), 'A');
  EXPECT_EQ(ExtractFirstLetter("A", 10), 'A');
  // "I" as the option itself (10 options) is an answer.
  EXPECT_EQ(ExtractFirstLetter("I", 10), 'I');
  EXPECT_EQ(ExtractFirstLetter("(I) is correct", 10), 'I');
}

TEST(ExtractFirstLetterTest, MarkdownEmphasisIsStripped) {
  EXPECT_EQ(ExtractFirstLetter("**B**", 10), 'B');
  EXPECT_EQ(ExtractFirstLetter("The answer is **E**.", 10), 'E');
  EXPECT_EQ(ExtractFirstLetter("__F__", 10), 'F');
  EXPECT_EQ(ExtractFirstLetter("*G*", 10), 'G');
}

TEST(ExtractFirstLetterTest, CommonAnswerShapes) {
  EXPECT_EQ(ExtractFirstLetter("(C)", 10), 'C');
  EXPECT_EQ(ExtractFirstLetter("B.", 10), 'B');
  EXPECT_EQ(ExtractFirstLetter("B. 42 kg", 10), 'B');
  EXPECT_EQ(ExtractFirstLetter("Answer: D", 10), 'D');  // the A of "Answer" is inside a word
  EXPECT_EQ(ExtractFirstLetter("  J\n", 10), 'J');
}

TEST(ExtractFirstLetterTest, LettersBeyondTheOptionCountAreIgnored) {
  EXPECT_EQ(ExtractFirstLetter("E", 4), 0);
  EXPECT_EQ(ExtractFirstLetter("E or B", 4), 'B');
  EXPECT_EQ(ExtractFirstLetter("J", 9), 0);
  EXPECT_EQ(ExtractFirstLetter("J", 10), 'J');
  EXPECT_EQ(ExtractFirstLetter("C", 3), 'C');
  EXPECT_EQ(ExtractFirstLetter("D", 3), 0);
}

TEST(ExtractFirstLetterTest, UnicodeNeighboursFollowPythonWordCharacters) {
  EXPECT_EQ(ExtractFirstLetter("A\xC3\xA9 B", 10), 'B');  // "Aé" is a word
  EXPECT_EQ(ExtractFirstLetter("C\xC2\xB2 D", 10), 'D');  // "C²": ² is numeric (No)
  EXPECT_EQ(ExtractFirstLetter("\xC3\xA9G H", 10), 'H');  // "éG" is a word
  const std::string quoted = "\xE2\x80\x9C" "F\xE2\x80\x9D";  // “F”
  EXPECT_EQ(ExtractFirstLetter(quoted, 10), 'F');
}

TEST(ExtractFirstLetterTest, NoLetterGivesZero) {
  EXPECT_EQ(ExtractFirstLetter("", 10), 0);
  EXPECT_EQ(ExtractFirstLetter("no capital letters here", 10), 0);
  EXPECT_EQ(ExtractFirstLetter("1234", 10), 0);
  EXPECT_EQ(ExtractFirstLetter("Because", 10), 0);
}

TEST(IsPythonWordCharTest, MatchesStrIsalnumOrUnderscore) {
  EXPECT_TRUE(IsPythonWordChar(U'a'));
  EXPECT_TRUE(IsPythonWordChar(U'Z'));
  EXPECT_TRUE(IsPythonWordChar(U'7'));
  EXPECT_TRUE(IsPythonWordChar(U'_'));
  EXPECT_TRUE(IsPythonWordChar(U'\u00e9'));  // é
  EXPECT_TRUE(IsPythonWordChar(U'\u00b2'));  // ²
  EXPECT_TRUE(IsPythonWordChar(U'\u4e00'));  // 一
  EXPECT_FALSE(IsPythonWordChar(U' '));
  EXPECT_FALSE(IsPythonWordChar(U'*'));
  EXPECT_FALSE(IsPythonWordChar(U'\u0301'));  // combining acute (Mn)
  EXPECT_FALSE(IsPythonWordChar(U'\u2019'));  // ’
}

}  // namespace
}  // namespace evalrun
