// LiveCodeBench's verdicts and results object: an answer's CodeVerdict
// (evals/run/verdict.h) made from its grades under the two profiles, and the
// part's object of results.json from the records (docs/results-schema.md,
// parts.livecodebench): pass@1 overall and by difficulty, platform and
// contest month, the failure counts, both profiles' pass@1 and the ids
// where they differ, the window and the sandbox.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_RESULTS_H_
#define EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_RESULTS_H_

#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/sample_record.h"
#include "evals/run/verdict.h"
#include "scorers/livecodebench/lcb_grade.h"

namespace evalrun {

// Whether the `fixed` profile can give another verdict than `official` did:
// it fixes only false negatives that fail as a wrong answer or a runtime
// error (scorers/livecodebench/lcb_harness.py), so only those are graded again.
bool FixedMayDiffer(const LcbGrade& official);

// The verdict under `headline` (the card's profile) with the other
// profile's where it differs. `fixed` is null when it was not graded (then
// it is the official's).
CodeVerdict MakeCodeVerdict(std::string_view code, bool cut_off, const LcbGrade& official, const LcbGrade* fixed,
                            LcbProfile headline);

// The part's results object. `info` is PreparedPart::info (window, sandbox).
nlohmann::json AggregateLcb(const std::vector<SampleRecord>& records, int failed, const nlohmann::json& info);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_RESULTS_H_
