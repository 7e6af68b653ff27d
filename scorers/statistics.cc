#include "scorers/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "evals/base/py_random.h"

namespace evalrun {
namespace {

// Catherine Loader's saddle-point evaluation of binomial terms ("Fast and
// Accurate Computation of Binomial Probabilities", 2000), as R's
// dbinom_raw: log P(X = x) without the cancellation of
// log C(n, x) - n log 2, which loses ~1e-10 of relative accuracy at n ~ 1e5.

// stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n / e)^n), n >= 1.
double StirlingError(double n) {
  constexpr double kS0 = 1.0 / 12, kS1 = 1.0 / 360, kS2 = 1.0 / 1260, kS3 = 1.0 / 1680,
                   kS4 = 1.0 / 1188;
  if (n <= 15) {
    // Small n: lgamma is accurate to ~1e-16 absolute here, which is all the
    // exponent needs.
    return std::lgamma(n + 1.0) - (n + 0.5) * std::log(n) + n - 0.5 * std::log(2 * M_PI);
  }
  const double nn = n * n;
  if (n > 500) return (kS0 - kS1 / nn) / n;
  if (n > 80) return (kS0 - (kS1 - kS2 / nn) / nn) / n;
  if (n > 35) return (kS0 - (kS1 - (kS2 - kS3 / nn) / nn) / nn) / n;
  return (kS0 - (kS1 - (kS2 - (kS3 - kS4 / nn) / nn) / nn) / nn) / n;
}

// bd0(x, np) = x log(x / np) + np - x, accurately when x is close to np.
double DevianceTerm(double x, double np) {
  if (std::fabs(x - np) < 0.1 * (x + np)) {
    double v = (x - np) / (x + np);
    double s = (x - np) * v;
    double ej = 2 * x * v;
    v = v * v;
    for (int j = 1; j < 1000; ++j) {
      ej *= v;
      double s1 = s + ej / (2 * j + 1);
      if (s1 == s) return s1;
      s = s1;
    }
    return s;
  }
  return x * std::log(x / np) + np - x;
}

// log P(X = x), X ~ Bin(n, 1/2), 0 <= x <= n.
double LogBinomialHalfTerm(int64_t n_int, int64_t x_int) {
  const double n = static_cast<double>(n_int), x = static_cast<double>(x_int);
  if (x_int == 0 || x_int == n_int) return -n * std::log(2.0);
  const double lc = StirlingError(n) - StirlingError(x) - StirlingError(n - x) -
                    DevianceTerm(x, n / 2) - DevianceTerm(n - x, n / 2);
  const double lf = std::log(2 * M_PI) + std::log(x) + std::log1p(-x / n);
  return lc - 0.5 * lf;
}

// log P(X <= k), X ~ Bin(n, 1/2), for 0 <= k and 2k < n: the terms
// t_j = C(n, j) / 2^n grow with j up to k, so summing t_j / t_k from j = k
// down never overflows; t_{j-1} / t_j = j / (n - j + 1).
double LogLowerTail(int64_t n, int64_t k) {
  double sum = 1.0, term = 1.0;
  for (int64_t j = k; j >= 1; --j) {
    term *= static_cast<double>(j) / static_cast<double>(n - j + 1);
    sum += term;
    if (term < sum * 1e-20) break;  // the rest cannot change the double
  }
  return LogBinomialHalfTerm(n, k) + std::log(sum);
}

}  // namespace

double LogBinomialHalfCdf(int64_t n, int64_t k) {
  if (k < 0) return -std::numeric_limits<double>::infinity();
  if (k >= n) return 0.0;
  if (2 * k < n) return LogLowerTail(n, k);
  // P(X <= k) = 1 - P(X >= k + 1) = 1 - P(X <= n - k - 1) by symmetry, and
  // 2 (n - k - 1) < n here.
  return std::log1p(-std::exp(LogLowerTail(n, n - k - 1)));
}

double McNemarExactP(int64_t b, int64_t c) {
  const int64_t n = b + c;
  if (n <= 0) return 1.0;
  const int64_t m = std::min(b, c);
  if (2 * m >= n) return 1.0;  // b == c: P(X <= n/2) >= 1/2
  const double log_p = std::log(2.0) + LogLowerTail(n, m);
  if (log_p >= 0) return 1.0;
  return std::exp(log_p);
}

double SortedPercentile(const std::vector<double>& sorted, double q) {
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

BootstrapInterval PairedBootstrap(const std::vector<double>& a, const std::vector<double>& b,
                                  int resamples, uint64_t seed, double level) {
  BootstrapInterval out;
  out.seed = seed;
  out.level = level;
  const size_t n = std::min(a.size(), b.size());
  if (n == 0 || resamples <= 0) return out;
  std::vector<double> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = b[i] - a[i];
  PyRandom rng(seed);
  std::vector<double> means(static_cast<size_t>(resamples));
  const double dn = static_cast<double>(n);
  for (int r = 0; r < resamples; ++r) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += d[rng.RandBelow(n)];
    means[static_cast<size_t>(r)] = s / dn;
  }
  std::sort(means.begin(), means.end());
  out.resamples = resamples;
  out.low = SortedPercentile(means, (1.0 - level) / 2.0);
  out.high = SortedPercentile(means, (1.0 + level) / 2.0);
  return out;
}

std::string FormatPValue(double p) {
  char buf[32];
  if (p >= 1.0) return "1";
  if (p >= 0.001) {
    std::snprintf(buf, sizeof buf, "%.4f", p);
  } else if (p > 0) {
    std::snprintf(buf, sizeof buf, "%.3g", p);
  } else {
    return "<1e-300";
  }
  return buf;
}

}  // namespace evalrun
