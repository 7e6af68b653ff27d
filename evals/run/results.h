// What the parts share when they turn answers into records and records into
// results: the record of one answer, counts, binomial stderr, the speeds the
// server reported, and the multiple-choice verdict and aggregate.
//
// Thread-safety: pure functions of the records given; run on one thread.
#ifndef EVALRUN_EVALS_RUN_RESULTS_H_
#define EVALRUN_EVALS_RUN_RESULTS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/part.h"
#include "evals/run/sample_record.h"
#include "evals/server/types.h"

namespace evalrun {

// The schema tag of results.json (docs/results-schema.md).
inline constexpr const char* kResultsSchema = "evalrun.results/1";

// The record of `item` answered by `r`: the common fields and the item's
// fields; the verdict is the caller's (Part::Score).
SampleRecord NewRecord(const Item& item, const CallResult& r);

// sqrt(p (1 - p) / n), 0 for n == 0.
double BinomialStderr(double p, int n);

// Rounds to `digits` decimals for presentation in JSON (scores keep 6).
double Round(double x, int digits);

// Adds the prompt / decode speeds the server reported (token-weighted over
// the timed records) and token counts to `out` as "speeds".
void AddSpeeds(const std::vector<SampleRecord>& records, nlohmann::json* out);

// The counts a part's results carry from its records, the same for a run
// and for `evalrun merge`: too_long (prompts the server refused as too
// long), and raw_fallback / server_parse_error (answers the server's output
// parser refused: recovered as raw text, or scored empty and wrong), these
// two only when not 0 (absent reads 0, as in runs written before them).
void AddRecordCounts(const std::vector<SampleRecord>& records, nlohmann::json* out);

// The verdict of a multiple-choice answer: `letter` (0: none) against
// `gold`; finish_reason "length" is cut off (wrong whatever the text); no
// letter is "no answer" (wrong, never a random guess).
ChoiceVerdict ScoreChoice(char letter, const std::string& gold, const std::string& finish_reason);

// Per-group accuracy as results.json writes it: {name: {n, correct, score}}
// from each group's (n, correct).
nlohmann::json CategoryScores(const std::map<std::string, std::pair<int, int>>& groups);

// For multiple-choice parts: score, n, correct, cut_off, no_answer, failed,
// stderr, per-group {n, correct, score} under "categories" (the groups: the
// record's `group` field, "category" by default), speeds.
nlohmann::json AggregateChoice(const std::vector<SampleRecord>& records, int failed,
                               const std::string& group = "category");

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_RESULTS_H_
