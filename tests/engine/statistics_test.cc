#include "scorers/statistics.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "evals/base/py_random.h"

namespace evalrun {
namespace {

// Expected p-values are exact rationals 2 * sum_{k<=m} C(n,k) / 2^n computed
// with Python integers (math.comb / the recurrence C(n,k) = C(n,k-1)(n-k+1)/k)
// and converted once to double:
//   python3 -c 'from math import comb; ...'
struct McNemarCase {
  int64_t b, c;
  double p;
};

TEST(McNemarExactP, MatchesExactRationals) {
  const McNemarCase cases[] = {
      {10, 2, 0.03857421875},
      {2, 10, 0.03857421875},
      {0, 5, 0.0625},
      {3, 0, 0.25},
      {4, 0, 0.125},
      {6, 1, 0.125},
      {25, 10, 0.01667384780012071},
      {60, 0, 1.734723475976807e-18},
      {0, 60, 1.734723475976807e-18},
      {300, 240, 0.011050481081930009},
      {240, 300, 0.011050481081930009},
      {1000, 900, 0.02310884510890107},
      {5000, 4800, 0.04440414879984629},
      {20000, 19000, 4.21684144737344e-07},
      {100000, 99000, 0.025127217688360945},
  };
  for (const auto& t : cases) {
    double p = McNemarExactP(t.b, t.c);
    EXPECT_NEAR(p / t.p, 1.0, 1e-13) << "b=" << t.b << " c=" << t.c << " p=" << p;
  }
}

TEST(McNemarExactP, EqualAndEmptyGiveOne) {
  EXPECT_EQ(McNemarExactP(0, 0), 1.0);
  EXPECT_EQ(McNemarExactP(5, 5), 1.0);
  EXPECT_EQ(McNemarExactP(1, 0), 1.0);  // 2 * 1/2
  EXPECT_EQ(McNemarExactP(0, 1), 1.0);
  EXPECT_EQ(McNemarExactP(123456, 123456), 1.0);
  EXPECT_EQ(McNemarExactP(2, 1), 1.0);  // 2 * 4/8
}

TEST(McNemarExactP, HugeCountsNeitherOverflowNorNaN) {
  // 2^-2000000 is far below the smallest double: p underflows to 0, no NaN.
  double p = McNemarExactP(2000000, 0);
  EXPECT_EQ(p, 0.0);
  EXPECT_EQ(FormatPValue(p), "<1e-300");
  // Close counts at n = 2e6: p is a plain number in (0, 1].
  double q = McNemarExactP(1000500, 999500);
  EXPECT_TRUE(std::isfinite(q));
  EXPECT_GT(q, 0.4);
  EXPECT_LE(q, 1.0);
}

TEST(LogBinomialHalfCdf, BothHalvesAndEdges) {
  EXPECT_EQ(LogBinomialHalfCdf(10, 10), 0.0);
  EXPECT_TRUE(std::isinf(LogBinomialHalfCdf(10, -1)));
  // P(X <= 2 | n=12) = (1 + 12 + 66) / 4096.
  EXPECT_NEAR(std::exp(LogBinomialHalfCdf(12, 2)), 79.0 / 4096.0, 1e-14);
  // P(X <= 9 | n=12) = 1 - P(X <= 2) by symmetry.
  EXPECT_NEAR(std::exp(LogBinomialHalfCdf(12, 9)), 1.0 - 79.0 / 4096.0, 1e-14);
  // P(X <= 6 | n=12) = (4096 + 924) / 2 / 4096.
  EXPECT_NEAR(std::exp(LogBinomialHalfCdf(12, 6)), 2510.0 / 4096.0, 1e-14);
}

TEST(FormatPValue, Forms) {
  EXPECT_EQ(FormatPValue(1.0), "1");
  EXPECT_EQ(FormatPValue(0.03857421875), "0.0386");
  EXPECT_EQ(FormatPValue(0.001), "0.0010");
  EXPECT_EQ(FormatPValue(1.734723475976807e-18), "1.73e-18");
}

TEST(SortedPercentile, LinearLikeNumpy) {
  std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(SortedPercentile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(SortedPercentile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(SortedPercentile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(SortedPercentile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(SortedPercentile({7.0}, 0.975), 7.0);
}

// Reference: the same algorithm in CPython 3.11 (random.Random(seed),
// rng._randbelow(n) per draw, sequential float sum, numpy-style linear
// percentile), run locally:
//   a=[1.0 if i%3 else 0.0 for i in range(50)]; b=[1.0 if i%4 else 0.0 ...]
//   -> (-0.1, 0.26) for 2000 resamples, seed 12345, level 0.95
//   a=[(i%7)/7 for i in range(37)]; b=[(i%3)/3 ...]
//   -> (-0.1918275418275419, 0.02445302445302445) for 500, seed 7, 0.9
TEST(PairedBootstrap, MatchesCPythonReferenceBitForBit) {
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    a.push_back(i % 3 ? 1.0 : 0.0);
    b.push_back(i % 4 ? 1.0 : 0.0);
  }
  BootstrapInterval ci = PairedBootstrap(a, b, 2000, 12345, 0.95);
  EXPECT_EQ(ci.low, -0.1);
  EXPECT_EQ(ci.high, 0.26);
  EXPECT_EQ(ci.resamples, 2000);
  EXPECT_EQ(ci.seed, 12345u);

  std::vector<double> x, y;
  for (int i = 0; i < 37; ++i) {
    x.push_back((i % 7) / 7.0);
    y.push_back((i % 3) / 3.0);
  }
  BootstrapInterval ci2 = PairedBootstrap(x, y, 500, 7, 0.9);
  EXPECT_EQ(ci2.low, -0.1918275418275419);
  EXPECT_EQ(ci2.high, 0.02445302445302445);
}

TEST(PairedBootstrap, DeterministicAndSeeded) {
  std::vector<double> a(200), b(200);
  PyRandom gen(99);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = gen.Random() < 0.7 ? 1.0 : 0.0;
    b[i] = gen.Random() < 0.6 ? 1.0 : 0.0;
  }
  BootstrapInterval x = PairedBootstrap(a, b, 1000, 12345);
  BootstrapInterval y = PairedBootstrap(a, b, 1000, 12345);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  BootstrapInterval z = PairedBootstrap(a, b, 1000, 54321);
  EXPECT_TRUE(z.low != x.low || z.high != x.high);
  EXPECT_LT(x.low, x.high);
}

TEST(PairedBootstrap, IdenticalAndEmpty) {
  std::vector<double> a = {1, 0, 1, 1, 0};
  BootstrapInterval same = PairedBootstrap(a, a, 300, 12345);
  EXPECT_EQ(same.low, 0.0);
  EXPECT_EQ(same.high, 0.0);
  BootstrapInterval none = PairedBootstrap({}, {}, 300, 12345);
  EXPECT_EQ(none.resamples, 0);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_EQ(none.high, 0.0);
}

// Coverage sanity: over 200 simulated paired data sets (n = 100, P(A right)
// = 0.7, P(B right) = 0.6 independently, true delta -0.1) the 95 % interval
// holds the true delta about 95 % of the time, and its width is close to
// the normal approximation 2 * 1.96 * sd / sqrt(n).
TEST(PairedBootstrap, CoverageAndWidthAreSane) {
  PyRandom gen(2024);
  const int kTrials = 200, kN = 100;
  int covered = 0;
  double width_ratio_sum = 0;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<double> a(kN), b(kN);
    for (int i = 0; i < kN; ++i) {
      a[i] = gen.Random() < 0.7 ? 1.0 : 0.0;
      b[i] = gen.Random() < 0.6 ? 1.0 : 0.0;
    }
    BootstrapInterval ci = PairedBootstrap(a, b, 1000, 12345 + t);
    if (ci.low <= -0.1 && -0.1 <= ci.high) ++covered;
    double mean = 0, ss = 0;
    for (int i = 0; i < kN; ++i) mean += (b[i] - a[i]) / kN;
    for (int i = 0; i < kN; ++i) ss += (b[i] - a[i] - mean) * (b[i] - a[i] - mean);
    double sd = std::sqrt(ss / kN);
    width_ratio_sum += (ci.high - ci.low) / (2 * 1.96 * sd / std::sqrt(kN));
  }
  double coverage = static_cast<double>(covered) / kTrials;
  EXPECT_GE(coverage, 0.89) << covered << " of " << kTrials;
  EXPECT_LE(coverage, 0.99) << covered << " of " << kTrials;
  double mean_ratio = width_ratio_sum / kTrials;
  EXPECT_GT(mean_ratio, 0.9);
  EXPECT_LT(mean_ratio, 1.1);
}

}  // namespace
}  // namespace evalrun
