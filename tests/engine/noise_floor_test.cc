// The noise-floor arithmetic (scorers/noise_floor.h), against values
// computed by hand with Python's statistics.NormalDist.
#include "scorers/noise_floor.h"

#include <vector>

#include <gtest/gtest.h>

namespace evalrun {
namespace {

// n A/A pairs of 0/1 scores, `flips` of them differing (half each way).
void Pairs(int n, int flips, std::vector<double>* x, std::vector<double>* y) {
  x->assign(n, 1.0);
  y->assign(n, 1.0);
  for (int i = 0; i < flips; ++i) (i % 2 ? (*x)[i] : (*y)[i]) = 0.0;
}

TEST(NoiseFloor, NormalQuantiles) {
  // NormalDist().inv_cdf(0.975), (0.8), (0.995)
  EXPECT_NEAR(NormalQuantile(0.975), 1.9599639845400536, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.8), 0.8416212335729144, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.995), 2.5758293035489, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-15);
}

TEST(NoiseFloor, SixFlipsInSixtyAtAlpha005) {
  std::vector<double> x, y;
  Pairs(60, 6, &x, &y);
  const NoiseFloor f = ComputeNoiseFloor(x, y, 60, 0.05);
  EXPECT_EQ(f.pairs, 60);
  EXPECT_EQ(f.flips, 6);
  EXPECT_DOUBLE_EQ(f.flip_rate, 0.1);
  EXPECT_DOUBLE_EQ(f.mean_sq_diff, 0.1);
  // (1.959964 + 0.841621) * sqrt(0.1 / 60) = 2.801585218 * 0.040824829 = 0.114374238
  ASSERT_TRUE(f.mde.has_value());
  EXPECT_NEAR(*f.mde, 0.11437423758834481, 1e-12);
  EXPECT_EQ(NoiseFloorText(f),
            "flip rate 6/60 = 10.00 %; MDE = (1.960 + 0.842) * sqrt(0.1000 / 60) = 11.44 pp (alpha 0.05, power 0.8)");
  EXPECT_TRUE(WithinNoise(f, -0.1));
  EXPECT_TRUE(WithinNoise(f, 0.0));
  EXPECT_FALSE(WithinNoise(f, -0.116667));  // 7 of 60
}

TEST(NoiseFloor, OtherAlphaAndLargerComparison) {
  std::vector<double> x, y;
  Pairs(400, 3, &x, &y);
  // d = 3/400, n = 400: 2.801585218 * sqrt(0.0075 / 400) = 0.012131220
  EXPECT_NEAR(*ComputeNoiseFloor(x, y, 400, 0.05).mde, 0.012131219848763988, 1e-12);
  Pairs(60, 6, &x, &y);
  // alpha 0.01: (2.575829 + 0.841621) * sqrt(0.1 / 60) = 0.139516834
  EXPECT_NEAR(*ComputeNoiseFloor(x, y, 60, 0.01).mde, 0.13951683395247913, 1e-12);
  // The floor is for the comparison's n: d = 0.1 from 60 pairs, n = 240: half the MDE of n = 60.
  EXPECT_NEAR(*ComputeNoiseFloor(x, y, 240, 0.05).mde, 0.11437423758834481 / 2, 1e-12);
}

TEST(NoiseFloor, NoFlipsIsBelowOneOverNNotZero) {
  std::vector<double> x, y;
  Pairs(60, 0, &x, &y);
  const NoiseFloor f = ComputeNoiseFloor(x, y, 60, 0.05);
  EXPECT_EQ(f.flips, 0);
  EXPECT_FALSE(f.mde.has_value());
  EXPECT_DOUBLE_EQ(f.resolution, 1.0 / 60);
  EXPECT_EQ(NoiseFloorText(f), "flip rate 0/60: no flips in the A/A pair: the floor is below 1/n = 1.67 pp (n = 60)");
  EXPECT_TRUE(WithinNoise(f, 0.0));
  EXPECT_FALSE(WithinNoise(f, 1.0 / 60));
  const nlohmann::json j = NoiseFloorJson(f);
  EXPECT_TRUE(j["mde"].is_null());
  EXPECT_EQ(j["mde_below"], 0.016667);
  EXPECT_EQ(j["flip_rate"], 0.0);
}

TEST(NoiseFloor, PartialScoresUseTheMeanSquaredDifference) {
  // RULER-like fractions: differences 0.5, -0.5, 0, 0 -> s2 = (0.25 + 0.25) / 4 = 0.125.
  const std::vector<double> x = {1.0, 0.5, 0.25, 0.0}, y = {0.5, 1.0, 0.25, 0.0};
  const NoiseFloor f = ComputeNoiseFloor(x, y, 8, 0.05);
  EXPECT_EQ(f.flips, 2);
  EXPECT_DOUBLE_EQ(f.flip_rate, 0.5);
  EXPECT_DOUBLE_EQ(f.mean_sq_diff, 0.125);
  // 2.801585218 * sqrt(0.125 / 8) = 0.350198152
  EXPECT_NEAR(*f.mde, 2.801585218112968 * 0.125, 1e-12);
  EXPECT_NE(NoiseFloorText(f).find("sqrt(s2 0.1250 / 8)"), std::string::npos) << NoiseFloorText(f);
}

TEST(NoiseFloor, JsonFields) {
  std::vector<double> x, y;
  Pairs(60, 6, &x, &y);
  const nlohmann::json j = NoiseFloorJson(ComputeNoiseFloor(x, y, 60, 0.05));
  EXPECT_EQ(j["pairs"], 60);
  EXPECT_EQ(j["flips"], 6);
  EXPECT_EQ(j["flip_rate"], 0.1);
  EXPECT_EQ(j["n"], 60);
  EXPECT_EQ(j["z_alpha"], 1.959964);
  EXPECT_EQ(j["z_power"], 0.841621);
  EXPECT_EQ(j["mde"], 0.114374);
  EXPECT_TRUE(j["mde_below"].is_null());
  EXPECT_EQ(j["formula"], kNoiseFloorFormula);
}

}  // namespace
}  // namespace evalrun
