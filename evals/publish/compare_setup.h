// `evalrun compare`: what the two runs record about themselves, side by
// side. (JsonDiff, declared in evals/publish/compare.h, is defined with these.)
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_SETUP_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_SETUP_H_

#include <nlohmann/json.hpp>

#include "evals/publish/run_folder.h"

namespace evalrun::compare_internal {

// The setup fields a person checks before trusting a delta (engine build,
// model file, sampling, card, n_ctx, chat template, host, evalrun version,
// ...), from run.json or results.json: [{field, a, b, differs}], a and b as
// text ("(not recorded)" when absent), in a fixed order.
nlohmann::json SetupRows(const RunFolder& a, const RunFolder& b);

// What names a run in the comparison: {dir, job, card, card_sha256,
// finished_utc, has_run_json} (null where results.json lacks it).
nlohmann::json RunHeader(const RunFolder& r);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_SETUP_H_
