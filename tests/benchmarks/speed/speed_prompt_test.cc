// The speed part's prompts (evals/benchmarks/speed/speed_prompt.h): cut to exactly the
// target by the server's count, bounded, salt first and task last.
#include <gtest/gtest.h>

#include <string>

#include "evals/benchmarks/speed/speed_prompt.h"
#include "tests/support/counting_tokenizer.h"
#include "tests/support/fake_tokenizer.h"

namespace evalrun::testing {
namespace {

int ChatCount(std::string_view c) { return FakeTokenCount(c) + 7; }  // a template's tokens around the message
int Bytes4(std::string_view c) { return static_cast<int>(c.size() / 4); }
int EvenOnly(std::string_view c) { return static_cast<int>(c.size() / 8) * 2; }  // never odd: no exact odd cut

TEST(SpeedPrompt, EveryTargetIsMetExactlyWithTheSaltFirstAndTheTaskLast) {
  for (int target : {300, 512, 513, 2048, 8191, 32768}) {
    CountingTokenizer tok(FakeTokenCount, ChatCount);
    ExactPrompt p;
    ASSERT_TRUE(FitExactPrompt(&tok, SpeedSalt(7, 1), SpeedTaskText("code"), target, nullptr, &p).ok()) << target;
    EXPECT_EQ(ChatCount(p.message), target);
    EXPECT_EQ(p.tokens, target);
    EXPECT_EQ(p.message.rfind(SpeedSalt(7, 1), 0), 0u);
    EXPECT_EQ(p.message.substr(p.message.size() - SpeedTaskText("code").size()), SpeedTaskText("code"));
    EXPECT_LE(p.counts, kMaxPromptCounts);
    EXPECT_EQ(tok.calls(), p.counts);
  }
}

TEST(SpeedPrompt, ANewSaltWithTheHintCostsOneCount) {
  CountingTokenizer tok(FakeTokenCount, ChatCount);
  ExactPrompt first, second;
  ASSERT_TRUE(FitExactPrompt(&tok, SpeedSalt(7, 1), SpeedTaskText("prose"), 4096, nullptr, &first).ok());
  ASSERT_TRUE(FitExactPrompt(&tok, SpeedSalt(7, 2), SpeedTaskText("prose"), 4096, &first, &second).ok());
  EXPECT_EQ(ChatCount(second.message), 4096);
  EXPECT_NE(first.message, second.message);
  EXPECT_EQ(second.counts, 2);  // the bare prompt, then the hinted cut
}

TEST(SpeedPrompt, AByteCountingTokenizerIsHitExactly) {
  CountingTokenizer tok(Bytes4, Bytes4);
  ExactPrompt p;
  ASSERT_TRUE(FitExactPrompt(&tok, SpeedSalt(1, 1), SpeedTaskText("code"), 20000, nullptr, &p).ok());
  EXPECT_EQ(Bytes4(p.message), 20000);
}

TEST(SpeedPrompt, NoExactCutIsAnErrorNamingTheTargetWithinTheBound) {
  CountingTokenizer tok(EvenOnly, EvenOnly);
  ExactPrompt p;
  Status st = FitExactPrompt(&tok, SpeedSalt(1, 1), SpeedTaskText("code"), 5001, nullptr, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exactly 5001 tokens"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("closest: 500"), std::string::npos) << st.message();
  EXPECT_LE(tok.calls(), kMaxPromptCounts);
}

TEST(SpeedPrompt, ATargetShorterThanTheTaskIsRefused) {
  CountingTokenizer tok(FakeTokenCount, ChatCount);
  ExactPrompt p;
  Status st = FitExactPrompt(&tok, SpeedSalt(1, 1), SpeedTaskText("code"), 20, nullptr, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("more than the 20 asked"), std::string::npos) << st.message();
}

TEST(SpeedPrompt, SaltsDifferAndTheFillerIsTheSameEverywhere) {
  EXPECT_NE(SpeedSalt(1, 1), SpeedSalt(1, 2));
  EXPECT_NE(SpeedSalt(1, 1), SpeedSalt(2, 1));
  EXPECT_EQ(SpeedSalt(1, 1).size(), std::string("Session 000000000000.").size());
  EXPECT_EQ(SpeedFiller(0, 1000), SpeedFiller(0, 1000));
  EXPECT_EQ(SpeedFiller(0, 5000).substr(0, 1000), SpeedFiller(0, 1000).substr(0, 1000));
  EXPECT_TRUE(SpeedTaskText("poetry").empty());
}

}  // namespace
}  // namespace evalrun::testing
