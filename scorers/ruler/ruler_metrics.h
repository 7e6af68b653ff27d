// RULER's two metrics and its prediction post-processing.
//
// Matches NVIDIA/RULER scripts/eval/evaluate.py (postprocess_pred, the nulls
// count) and scripts/eval/synthetic/constants.py (string_match_all,
// string_match_part), read at HEAD c3f5e3b4 (see
// datasets/ruler/TASKS.md section 3):
//
//   pred  = pred.strip(); pred = re.sub(r'[\x00-\x1f]', '\n', pred).strip()
//   all   = sum(r.lower() in pred.lower() for r in refs) / len(refs)
//   part  = max(r.lower() in pred.lower() for r in refs)
//   task  = round(sum(per_sample) / len(preds) * 100, 2)
//   nulls = number of predictions that are empty after post-processing
//
// Text is UTF-8. strip() and lower() are Python 3.11's str methods
// (scorers/py_unicode.h): strip() removes the code points for which
// str.isspace() is true; lower() is the full Unicode 14 mapping with the
// Final_Sigma rule (U+0130 -> "i\u0307"). Answers and references come from
// JSON, so they are valid UTF-8; an invalid byte would be U+FFFD for lower()
// as everywhere in py_unicode. All functions are pure and thread-safe.
#ifndef EVALRUN_SCORERS_RULER_RULER_METRICS_H_
#define EVALRUN_SCORERS_RULER_RULER_METRICS_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

enum class RulerMetric {
  kStringMatchAll,   // niah, vt, cwe, fwe
  kStringMatchPart,  // qa
};

// "string_match_all" / "string_match_part".
const char* RulerMetricName(RulerMetric metric);

// evaluate.py's postprocess_pred: strip, every byte 0x00-0x1f -> '\n', strip.
std::string RulerPostprocess(std::string_view pred);

// Per-sample scores in [0, 1]. `pred` is the model's raw answer: it is
// post-processed here exactly as evaluate.py does before the metric. Empty
// `refs` scores 0 (RULER would raise).
double StringMatchAll(std::string_view pred, const std::vector<std::string>& refs);
double StringMatchPart(std::string_view pred, const std::vector<std::string>& refs);
double RulerSampleScore(RulerMetric metric, std::string_view pred,
                        const std::vector<std::string>& refs);

// Python's round(x, 2) (round half to even on the exact binary value).
double PyRound2(double x);

struct RulerTaskScore {
  double score = 0;  // 0-100, rounded to 2 decimals as RULER does
  int nulls = 0;     // empty predictions after post-processing
  int total = 0;     // predictions scored
};

// The task score from per-sample scores (in sample order, as RULER sums
// them): round(sum / n * 100, 2); 0 when there are none.
double RulerTaskScoreFromSamples(const std::vector<double>& per_sample);

// Scores a whole task: `preds[i]` (raw) against `refs[i]`. Sizes must match;
// extra entries of the longer vector are ignored.
RulerTaskScore ScoreRulerTask(RulerMetric metric, const std::vector<std::string>& preds,
                              const std::vector<std::vector<std::string>>& refs);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_RULER_RULER_METRICS_H_
