// `evalrun compare`: what the two runs record about themselves, side by
// side, and the differences between their cards.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_SETUP_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_SETUP_H_

#include <nlohmann/json.hpp>

#include "evals/publish/run_folder.h"

namespace evalrun {

// The differences between two JSON documents, by path ("sampling.top_k",
// "server.command[2]"): [{"path", "a", "b"}], a side absent where the path
// is missing there. Arrays compare element by element.
nlohmann::json JsonDiff(const nlohmann::json& a, const nlohmann::json& b);

namespace compare_internal {

// The setup fields a person checks before trusting a delta (engine build,
// model file, sampling, card, n_ctx, chat template, host, evalrun version,
// ...), from run.json or results.json: [{field, a, b, differs}], a and b as
// text ("(not recorded)" when absent), in a fixed order.
nlohmann::json SetupRows(const RunFolder& a, const RunFolder& b);

// What names a run in the comparison: {dir, job, card, card_sha256,
// finished_utc, has_run_json} (null where results.json lacks it).
nlohmann::json RunHeader(const RunFolder& r);

}  // namespace compare_internal
}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_SETUP_H_
