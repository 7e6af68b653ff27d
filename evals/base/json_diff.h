// What changed between two JSON documents, as a person reads it: one line
// per changed leaf, "card.parts.<name>.max_tokens: 64 -> 32". Used to say
// why a job's run key no longer matches.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BASE_JSON_DIFF_H_
#define EVALRUN_EVALS_BASE_JSON_DIFF_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// The paths where `before` and `after` differ, depth first in key order:
// objects are compared key by key (a key on one side only is "(absent)"),
// anything else (arrays included) as a whole. Values longer than 60 bytes
// are shortened. At most `max_lines` lines; when there are more, the last
// says how many were left out.
std::vector<std::string> JsonChanges(const nlohmann::json& before, const nlohmann::json& after,
                                     size_t max_lines = 10);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_JSON_DIFF_H_
