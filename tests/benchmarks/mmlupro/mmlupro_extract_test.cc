// Unit tests of scorers/mmlupro/mmlupro_extract.h on hand-made edge cases.
//
// Expected values of the two `official` functions were checked against
// Python 3's `re` running the chain of TIGER-AI-Lab/MMLU-Pro
// evaluate_from_api.py (answer is \(?([A-J])\)? -> .*[aA]nswer:\s*([A-J]) ->
// \b[A-J]\b(?!.*\b[A-J]\b) with re.DOTALL), with and without
// response.replace('**', '').
#include "scorers/mmlupro/mmlupro_extract.h"

#include <gtest/gtest.h>

#include <string>

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// official (with and without the '**' clean-up)

TEST(ExtractOfficialMmluProTest, StepOneAnswerIs) {
  EXPECT_EQ(ExtractOfficialMmluPro("The answer is (C)."), 'C');
  EXPECT_EQ(ExtractOfficialMmluPro("so the answer is C"), 'C');
  EXPECT_EQ(ExtractOfficialMmluPro("The answer is (B). The answer is 90.0 mL."), 'B');
  // Step 1 is case-sensitive: "Answer is" falls through to the last letter.
  EXPECT_EQ(ExtractOfficialMmluPro("The Answer is C, not D"), 'D');
  // Lower-case letters are never answers.
  EXPECT_EQ(ExtractOfficialMmluPro("the answer is b"), 0);
}

TEST(ExtractOfficialMmluProTest, OrderOfPreference) {
  // "answer is" wins over an earlier "Answer:".
  EXPECT_EQ(ExtractOfficialMmluPro("Answer: C ... the answer is B"), 'B');
  // "Answer:" wins over the last standalone letter.
  EXPECT_EQ(ExtractOfficialMmluPro("Answer: C. Final: D"), 'C');
  EXPECT_EQ(ExtractOfficialMmluPro("answer: E, then maybe F"), 'E');
  // Only the last standalone letter is left.
  EXPECT_EQ(ExtractOfficialMmluPro("A looks wrong, so D"), 'D');
}

TEST(ExtractOfficialMmluProTest, StepTwoMatchesOnOneLineWithoutDotAll) {
  // `.*` is greedy but stops at a newline: on the first line that has an
  // "answer:", the last one of that line wins ...
  EXPECT_EQ(ExtractOfficialMmluPro("Answer: B and answer: C\nD"), 'C');
  // ... and an earlier line wins over a later one.
  EXPECT_EQ(ExtractOfficialMmluPro("Answer: B\nAnswer: C"), 'B');
  EXPECT_EQ(ExtractOfficialMmluPro("x\nanswer: C\nAnswer: D B"), 'C');
  // \s* may cross newlines between "Answer:" and the letter.
  EXPECT_EQ(ExtractOfficialMmluPro("Answer:\nC"), 'C');
  EXPECT_EQ(ExtractOfficialMmluPro("The Answer:\n\n  E"), 'E');
  // A letter that is not right after "Answer:" makes step 2 fail.
  EXPECT_EQ(ExtractOfficialMmluPro("Answer: (A) or G"), 'G');
}

TEST(ExtractOfficialMmluProTest, StepThreeIsTheLastStandaloneLetterAcrossLines) {
  EXPECT_EQ(ExtractOfficialMmluPro("B is tempting.\nBut C.\nThen E\nfinally"), 'E');
  EXPECT_EQ(ExtractOfficialMmluPro("Options B, D, E, G (can be"), 'G');
  EXPECT_EQ(ExtractOfficialMmluPro("$T = 25^\\circ C = 298 K$"), 'C');  // K is not A-J
  // The pronoun I counts here (no English heuristics in the official chain).
  EXPECT_EQ(ExtractOfficialMmluPro("Let's check if I can find it"), 'I');
}

TEST(ExtractOfficialMmluProTest, UnicodeNeighbours) {
  EXPECT_EQ(ExtractOfficialMmluPro("xyz B\xC3\xA9"), 0);  // "Bé" is one word
  EXPECT_EQ(ExtractOfficialMmluPro("C B\xC2\xB2"), 'C');  // "B²" is one word
  EXPECT_EQ(ExtractOfficialMmluPro("B\xCC\x81"), 'B');    // U+0301 (Mn) is not a word char
  EXPECT_EQ(ExtractOfficialMmluPro("Jos\xC3\xA9 or D"), 'D');
}

TEST(ExtractOfficialMmluProTest, BoldCleanupOnlyInTheNewerProfile) {
  const std::string bold = "The answer is **B**. Option C was wrong.";
  EXPECT_EQ(ExtractOfficialMmluPro(bold), 'B');           // step 1 after clean-up
  EXPECT_EQ(ExtractOfficialMmluProNoCleanup(bold), 'C');  // step 1 fails on '*'
  // Published run_gpt4o.py case: "The answer is **A**." (no other letter).
  EXPECT_EQ(ExtractOfficialMmluPro("The answer is **A**."), 'A');
  EXPECT_EQ(ExtractOfficialMmluProNoCleanup("The answer is **A**."), 'A');  // via step 3
  // replace('**', '') is left to right: "***C***" -> "*C*".
  EXPECT_EQ(ExtractOfficialMmluPro("The answer is ***C***"), 'C');
  EXPECT_EQ(ExtractOfficialMmluPro("**Answer: (D)**"), 'D');
}

TEST(ExtractOfficialMmluProTest, NoLetterGivesZero) {
  EXPECT_EQ(ExtractOfficialMmluPro(""), 0);
  EXPECT_EQ(ExtractOfficialMmluPro("no capital letters here"), 0);
  EXPECT_EQ(ExtractOfficialMmluPro("The answer is (K)."), 0);
  EXPECT_EQ(ExtractOfficialMmluProNoCleanup(""), 0);
  EXPECT_EQ(ExtractOfficialMmluProNoCleanup("Total = $1,250,000 per game"), 0);
}

}  // namespace
}  // namespace evalrun
