// What moved between the two repeats of a part (`evalrun run --repeat 2`,
// and `evalrun merge` of shards run that way): the `repeat` object of the
// part's results (docs/results-schema.md). Paired by id over the items both
// repeats answered: the flip rate of the headline score and the smallest
// difference a comparison of that many items can detect
// (scorers/noise_floor.h; alpha 0.05, power 0.8); for a kind that compares
// its repeats itself (VerdictKindDefinition::CompareRepeats, verdict_kind.h),
// what it measures between them.
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_RUN_REPEAT_SUMMARY_H_
#define EVALRUN_EVALS_RUN_REPEAT_SUMMARY_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/sample_record.h"

namespace evalrun {

// `second_result` is the second repeat's results object of the part (its
// score, n and complete are copied).
nlohmann::json RepeatSummary(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second,
                             const nlohmann::json& second_result);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_REPEAT_SUMMARY_H_
