// Paired statistics for "did quality move between two runs?": the exact
// McNemar test on discordant pairs and a seeded paired bootstrap of the
// difference of means.
//
// Everything here is a pure function of its arguments: the bootstrap draws
// from PyRandom (evals/base/py_random.h: CPython's Mersenne Twister, bit-exact on
// every platform) with a seed the caller gives, never from std::
// distributions, so the same inputs give the same interval everywhere.
// All functions are thread-safe (no shared state).
#ifndef EVALRUN_SCORERS_STATISTICS_H_
#define EVALRUN_SCORERS_STATISTICS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace evalrun {

// The exact two-sided McNemar test (the binomial sign test on the discordant
// pairs): with b pairs "A right, B wrong" and c pairs "A wrong, B right",
//   p = min(1, 2 * P(X <= min(b, c))),  X ~ Binomial(b + c, 1/2).
// Returns 1 when b + c == 0. The largest term P(X = min(b, c)) comes from
// Loader's saddle-point formula (as R's dbinom) in log space, and the tail
// is summed in doubles scaled by it, so b + c in the millions neither
// overflows nor loses digits to cancellation (a p below ~1e-308 returns 0).
// Relative error is about 1e-15 (tests check to 1e-13 against exact rationals from
// Python integers up to b + c = 199,000). Requires b, c >= 0.
double McNemarExactP(int64_t b, int64_t c);

// log P(X <= k) for X ~ Binomial(n, 1/2); 0 when k >= n, -inf when k < 0.
double LogBinomialHalfCdf(int64_t n, int64_t k);

struct BootstrapInterval {
  double low = 0;      // percentile interval of the resampled mean of B - A
  double high = 0;
  int resamples = 0;   // 0 when there was nothing to resample (n == 0)
  uint64_t seed = 0;
  double level = 0;    // 0.95 for a 95 % interval
};

// The paired bootstrap of mean(b) - mean(a): `resamples` times, draws n
// indices with replacement (PyRandom(seed).RandBelow(n), index after index,
// resample after resample), and takes the mean of d_i = b_i - a_i over them.
// The interval is the (1-level)/2 and (1+level)/2 percentiles of the
// resampled means, with linear interpolation between order statistics
// (numpy.percentile's default: h = (R - 1) q). `a` and `b` are paired by
// position and must have the same length. n == 0 gives {0, 0, resamples 0}.
// Cost: resamples * n draws (2,000 x 12,000 answers ~ 0.3 s).
BootstrapInterval PairedBootstrap(const std::vector<double>& a, const std::vector<double>& b,
                                  int resamples, uint64_t seed, double level = 0.95);

// The fixed settings `evalrun compare` uses (documented in --help).
inline constexpr int kBootstrapResamples = 2000;
inline constexpr uint64_t kBootstrapSeed = 12345;

// numpy.percentile(v, 100 q) (linear) of an already sorted vector; requires
// a non-empty vector and 0 <= q <= 1.
double SortedPercentile(const std::vector<double>& sorted, double q);

// A p-value for people: "1", "0.0386", "0.0010", "1.73e-18", "<1e-300".
// Four decimals from 0.001 up, else three significant digits.
std::string FormatPValue(double p);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_STATISTICS_H_
