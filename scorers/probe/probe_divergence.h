// The math of `compare` on two probe runs (evals/benchmarks/probe/probe.cc): how far
// apart two servers' next-token distributions are at one position, known
// only by their top-K candidates, and the summary of a list of values.
//
// Definitions follow llama.cpp tools/perplexity/perplexity.cpp
// (--kl-divergence): KLD(base || new) = sum p_base (log p_base - log p_new)
// with A as the base; "same top" = the most likely tokens agree; the
// percentiles interpolate linearly between the sorted values at
// fraction * (n - 1), the median is the middle value (or the mean of the
// two middle ones). perplexity.cpp has every logit; over an API only the
// top-K candidates of each side are known, so here the distribution is
// coarsened:
//   - the categories are the tokens of the union of both top-K sets, and
//     one bucket "rest" for every other token;
//   - a side's rest is 1 - the sum of its top-K probabilities (>= 0);
//   - a token of the union missing from one side's top-K is given, on that
//     side, q = min(the side's K-th probability, its rest / the tokens it
//     misses), taken out of its rest (an estimate: the true value is at
//     most the K-th probability);
//   - a probability of B that is 0 where A's is not counts as 1e-12.
// With the same top-K set on both sides (the usual case for small shifts)
// this is exactly the KLD of the distributions coarsened to {top-K, rest}:
// a lower bound of the full KLD, 0 when the two sides are identical.
// Tokens are matched by id where both sides give ids, else by text.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_SCORERS_PROBE_PROBE_DIVERGENCE_H_
#define EVALRUN_SCORERS_PROBE_PROBE_DIVERGENCE_H_

#include <cstddef>
#include <vector>

#include "evals/server/types.h"

namespace evalrun {

struct PositionDivergence {
  double kld = 0;              // KLD(A || B) as above, nats
  bool same_top = false;       // A's and B's most likely tokens are the same
  double top_logprob_a = 0;    // A's top token: its logprob in A
  double top_logprob_b = 0;    // and in B (estimated as above when not in B's top-K)
  bool top_a_in_b = true;      // A's top token is among B's top-K
  double abs_delta_top = 0;    // |top_logprob_a - top_logprob_b|
  bool same_sets = true;       // both top-K sets hold the same tokens
  double rest_a = 0, rest_b = 0;
};

// `a` and `b` most likely first, each at least one candidate.
PositionDivergence ComparePosition(const std::vector<TokenLogprob>& a, const std::vector<TokenLogprob>& b);

struct ValueSummary {
  size_t n = 0;
  double mean = 0, median = 0, p95 = 0, p99 = 0, max = 0, min = 0;
};

// perplexity.cpp's statistics of `values` (all zero for none).
ValueSummary Summarize(std::vector<double> values);

// perplexity.cpp's percentile of sorted `values` at `fraction` in [0, 1].
double Percentile(const std::vector<double>& sorted, double fraction);

// How many values fall in each decade, on fixed edges so that the charts of
// two comparisons line up: `zero` counts values <= 0 (identical answers give
// exactly 0); decades[i] counts values in [10^(kDecadeLowest + i - 1),
// 10^(kDecadeLowest + i)), with decades[0] taking everything in
// (0, 10^kDecadeLowest) and the last decade everything from
// 10^kDecadeHighest up (inf included); NaN is counted apart, in
// `not_a_number`.
inline constexpr int kDecadeLowest = -15;  // decades[0]: (0, 1e-15)
inline constexpr int kDecadeHighest = 1;   // the last: [10, inf)
struct DecadeCounts {
  size_t zero = 0;
  size_t not_a_number = 0;
  std::vector<size_t> decades;  // kDecadeHighest - kDecadeLowest + 2 entries
};
DecadeCounts CountByDecade(const std::vector<double>& values);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_PROBE_PROBE_DIVERGENCE_H_
