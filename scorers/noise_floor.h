// The noise floor of a paired comparison: how large a difference between two
// runs must be before it can be told from run-to-run noise. With several
// slots, llama-server batches requests differently from run to run, and
// greedy answers of one build can differ between two runs of the same
// questions (https://github.com/ggml-org/llama.cpp/issues/7052); a regression check has to know how much.
//
// From an A/A pair (the same build run twice on the same items), paired per
// item with scores x_i, y_i in [0, 1] (0/1 for right/wrong):
//   flips  = pairs whose scores differ,   flip rate = flips / pairs
//   s2     = mean over the pairs of (y_i - x_i)^2    (for 0/1 scores s2 = d,
//            the discordance (flip) rate)
// and the smallest difference of means that a paired A/B comparison over n
// items detects with a two-sided test at level alpha and the given power
// (normal approximation of the paired difference, whose per-item variance
// under pure noise is s2):
//   MDE = (z_{1-alpha/2} + z_{power}) * sqrt(s2 / n)
// For alpha 0.05 and power 0.8: z = 1.959964 + 0.841621 = 2.801585.
// No flips (s2 = 0) does not make the floor 0: n items cannot show a
// difference below 1/n, so the floor is said to be below 1/n ("no flips in
// the A/A pair: the floor is below 1/n") and mde is left unknown.
//
// The flip rate is the per-answer counterpart of llama-perplexity
// --kl-divergence's "Same top p" (tools/perplexity/perplexity.cpp: the share
// of token positions where both runs pick the same top token): here the
// share of items whose verdict differs between the two runs.
//
// A difference is "within noise" when |delta| < MDE; with no flips, when
// |delta| < 1/n (for 0/1 scores: delta == 0).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_SCORERS_NOISE_FLOOR_H_
#define EVALRUN_SCORERS_NOISE_FLOOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

inline constexpr double kNoisePower = 0.8;

// The formula as printed by compare, report and results.json.
inline constexpr const char* kNoiseFloorFormula =
    "MDE = (z_{1-alpha/2} + z_{power}) * sqrt(d / n); d = flip rate of the A/A pair (for partial scores: the "
    "mean squared paired difference), n = items compared";

// The standard normal quantile: x with Phi(x) = p, 0 < p < 1 (bisection on
// std::erfc to double precision; 0.975 -> 1.959963984540054).
double NormalQuantile(double p);

struct NoiseFloor {
  int64_t pairs = 0;            // A/A pairs
  int64_t flips = 0;            // of them, pairs whose scores differ
  double flip_rate = 0;         // flips / pairs (0 when no pairs)
  double mean_sq_diff = 0;      // s2 above (= flip_rate for 0/1 scores)
  int64_t n = 0;                // items of the comparison the floor is for
  double alpha = 0.05;
  double power = kNoisePower;
  double z_alpha = 0;           // z_{1-alpha/2}
  double z_power = 0;           // z_{power}
  std::optional<double> mde;    // nullopt: no flips (or nothing paired)
  double resolution = 0;        // 1 / n (0 when n == 0)
};

// The floor from the A/A scores `x`, `y` (paired by position, the same
// length) for a comparison of `n` items (n >= 1; the A/A pairs when 0).
// Requires 0 < alpha < 1 and 0.5 <= power < 1.
NoiseFloor ComputeNoiseFloor(const std::vector<double>& x, const std::vector<double>& y, int64_t n, double alpha,
                             double power = kNoisePower);

// Whether `delta` (B - A, a fraction) is within the floor (see above).
bool WithinNoise(const NoiseFloor& f, double delta);

// One line for people, in percentage points:
// "flip rate 6/60 = 10.00 %; MDE = (1.960 + 0.842) * sqrt(0.1000 / 60) = 11.44 pp (alpha 0.05, power 0.8)"
// or "flip rate 0/60: no flips in the A/A pair: the floor is below 1/n = 1.67 pp".
std::string NoiseFloorText(const NoiseFloor& f);

// {pairs, flips, flip_rate, mean_sq_diff, n, alpha, power, z_alpha, z_power,
//  mde (a fraction, null with no flips), mde_below (1/n when mde is null for
//  want of flips, else null), formula, text}; numbers rounded to 6 decimals.
nlohmann::json NoiseFloorJson(const NoiseFloor& f);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_NOISE_FLOOR_H_
