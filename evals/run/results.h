// What the parts share when they turn sample lines into results: the common
// sample fields, counts, binomial stderr and the speeds the server reported.
#ifndef EVALRUN_EVALS_RUN_RESULTS_H_
#define EVALRUN_EVALS_RUN_RESULTS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/part.h"
#include "evals/server/types.h"

namespace evalrun {

// The schema tag of results.json (docs: README "Output").
inline constexpr const char* kResultsSchema = "evalrun.results/1";

// The fields every sample line starts with (before the part's verdict).
nlohmann::json CommonSampleFields(const Item& item, const CallResult& r);

// The answer as recorded in a sample line (for re-scoring and resume).
Completion CompletionFromSample(const nlohmann::json& sample);

// sqrt(p (1 - p) / n), 0 for n == 0.
double BinomialStderr(double p, int n);

// Rounds to `digits` decimals for presentation in JSON (scores keep 6).
double Round(double x, int digits);

// Adds prompt / decode speeds seen (means of the server's per-request
// figures, and token-weighted totals) and token counts to `out`.
void AddSpeeds(const std::vector<nlohmann::json>& samples, nlohmann::json* out);

// The verdict of a multiple-choice answer, into `sample`: `extracted`
// (letter or null), `cut_off` (finish_reason "length": wrong whatever the
// text), `no_answer` (no letter: wrong, never a random guess), `correct`.
void ScoreChoiceSample(char letter, const std::string& gold, const std::string& finish_reason,
                       nlohmann::json* sample);

// For multiple-choice parts: score, n, correct, cut_off, no_answer, failed,
// stderr, per-category {n, correct, score}, speeds. Samples carry "correct",
// "cut_off", "no_answer" and "category".
nlohmann::json AggregateChoice(const std::vector<nlohmann::json>& samples, int failed,
                               const std::string& category_key = "category");

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_RESULTS_H_
