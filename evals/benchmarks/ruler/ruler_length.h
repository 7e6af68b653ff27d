// Sizing a RULER prompt to a token budget with few tokenizer round trips.
//
// RULER (scripts/data/synthetic/*.py) binary-searches the haystack size N,
// re-tokenizing the whole prompt at every step (about 17 full tokenizations
// per task and length, plus one per sample). Against llama-server that is a
// 500 KB POST per step at 128K. Here the search runs on an estimate instead:
//
//   tokens(prompt(N)) ~= anchor_tokens + slope * (ProxyBytes(N) - anchor_bytes)
//
// ProxyBytes(N) is computed by the prompt itself without tokenizing (usually
// without even building the text: prefix sums of word lengths, counts times
// line lengths). The anchor is the latest exact count; the slope (tokens per
// byte of haystack) is the secant between two exact counts of one sample
// whose sizes differ by at least 1 %, else it is carried over from earlier
// samples (and, before any secant, tokens/bytes of the first exact count).
// The estimator is shared by all samples of one task and length, so after
// the first sample a sample usually costs exactly one exact count.
//
// Why bytes rather than per-piece token counts: Tokenizer::Count answers one
// number per round trip, so token counts per haystack unit would cost one
// call per unit (or per chunk, with the chunk joins still wrong), while the
// haystacks are homogeneous enough that tokens are close to linear in bytes
// over a sample; the exact counts absorb the rest.
//
// Tokens are not additive across pieces (BPE merges at the joins, the chat
// template wraps the message), which is why every accepted prompt is counted
// exactly, whole, with the real counter. The loop per sample:
//   1. predict the largest N whose estimate is <= target - margin
//      (exponential then binary search over N on the estimate only). The
//      margin is twice the largest of the last 8 estimation errors made with
//      a secant slope, clamped to [2, tolerance/2] (tolerance/2 before any);
//   2. build prompt(N) and count it exactly; remember the largest N that
//      fits and the smallest that does not (a bracket);
//   3. accept when it fits and is within `tolerance` of the target, or when
//      one more unit is estimated (from this exact count) not to fit, or when
//      the bracket has closed; otherwise re-anchor and go to 1. After four
//      model steps the prediction is replaced by bisection of the bracket.
// A prompt that does not fit is never returned: when the check budget runs
// out the largest fitting prompt seen is used, and if none has fitted yet
// the loop keeps bisecting (down to MinUnits; if even that overflows the
// fit fails with InvalidInput).
//
// Cost measured with a fake word-count tokenizer: 40 samples at 128K take 42
// counts for the niah tasks and fwe (3 for the first sample, then 1 each);
// cwe at 4K, whose word lists tokenize unevenly, about 2 per sample.
//
// Thread-safety: one estimator per task and length, used by one thread.
#ifndef EVALRUN_EVALS_BENCHMARKS_RULER_RULER_LENGTH_H_
#define EVALRUN_EVALS_BENCHMARKS_RULER_RULER_LENGTH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

// A prompt whose size is set by an integer number of haystack units (words,
// lines, documents). Build(n) must be a pure function of n for the life of
// the object (the same n gives the same text).
class SizedPrompt {
 public:
  virtual ~SizedPrompt() = default;
  // The smallest and largest n that can be built (inclusive, Min <= Max).
  virtual int MinUnits() const = 0;
  virtual int MaxUnits() const = 0;
  // A cheap stand-in for the size of Build(n), in bytes or close to it; it
  // should grow with n. Only the estimator uses it. Errors are Build's.
  virtual Status ProxyBytes(int n, int64_t* bytes) = 0;
  // The exact text of the prompt at n.
  virtual Status Build(int n, std::string* text) = 0;
};

// Exact token count of a built text (e.g. Tokenizer::CountChat).
using TokenCounter = std::function<Status(std::string_view text, int* tokens)>;

struct LengthTarget {
  int max_tokens = 0;  // the largest allowed exact count (length - answer budget)
  int tolerance_tokens =
      -1;  // accept a fit this close below max_tokens; -1: max(24, max_tokens/200)
  int max_exact_checks = 12;  // soft cap per fit (exceeded only until something fits)
};

// Tokens-per-byte model learned from exact counts; share one across the
// samples of a task and length. Not thread-safe.
class TokenEstimator {
 public:
  bool has_anchor() const { return has_anchor_; }
  bool has_secant() const { return has_secant_; }
  // Estimated tokens of a prompt of `bytes` proxy bytes (requires an anchor).
  double Estimate(int64_t bytes) const;
  double slope() const { return slope_; }
  // Records an exact count. `same_fit` tells whether the previous
  // observation belongs to the same prompt (a secant is only taken then).
  void Observe(int64_t bytes, int tokens, bool same_fit);
  // Records how far an estimate was from the exact count.
  void RecordError(double error);
  // Safety margin below the target for predictions (see above).
  double Margin(int tolerance) const;

 private:
  std::vector<double> errors_;  // recent absolute errors, oldest first
  bool has_anchor_ = false;
  bool has_secant_ = false;
  int64_t anchor_bytes_ = 0;
  double anchor_tokens_ = 0;
  double slope_ = 0;
};

struct FitResult {
  int units = 0;              // the chosen n
  std::string text;           // Build(units)
  int estimated_tokens = -1;  // the estimate for `text` before it was counted (-1: none yet)
  int exact_tokens = 0;       // its exact count (<= target.max_tokens)
  int exact_checks = 0;       // counter calls spent in this fit
};

// Finds the largest n (within tolerance) whose exact count is <= max_tokens,
// as described above. On success fills *out. Errors: the prompt's or the
// counter's Status; InvalidInput when MinUnits already overflows.
Status FitToLength(SizedPrompt* prompt, const TokenCounter& count, const LengthTarget& target,
                   TokenEstimator* estimator, FitResult* out);

// The tolerance FitToLength uses for `target`.
int EffectiveTolerance(const LengthTarget& target);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_RULER_RULER_LENGTH_H_
