#include "evals/base/near_miss.h"

#include <gtest/gtest.h>

namespace evalrun {
namespace {

TEST(NearMissTest, TyposTranspositionsAndPlurals) {
  EXPECT_EQ(EditDistance("prats", "parts"), 1);  // a swap is one edit
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(NearestName("--prats", {"--parts", "--part", "--job"}), "--parts");
  EXPECT_EQ(NearestName("retry", {"retries", "slots"}), "retries");
  EXPECT_EQ(NearestName("slot", {"retries", "slots"}), "slots");
  EXPECT_EQ(NearestName("question", {"questions", "seed"}), "questions");
  EXPECT_EQ(NearestName("zebra", {"retries", "slots"}), "");
  EXPECT_EQ(DidYouMean("ifevl", {"mmlupro", "ifeval"}), " (did you mean \"ifeval\"?)");
  EXPECT_EQ(DidYouMean("xyz", {"mmlupro", "ifeval"}), "");
}

}  // namespace
}  // namespace evalrun
