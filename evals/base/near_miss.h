// "Did you mean ...?" for names a person typed: card fields, parts, tasks,
// flags.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BASE_NEAR_MISS_H_
#define EVALRUN_EVALS_BASE_NEAR_MISS_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

// Edit distance (insert, delete, substitute, and a swap of two neighbours
// counts as one edit: "prats" is 1 from "parts"; bytes).
int EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `typed` when it is close enough to be a likely
// typo: distance <= max(1, len/3), comparing the words as typed or in their
// singular form ("retry" for "retries", "slot" for "slots"). "" otherwise.
std::string NearestName(std::string_view typed, const std::vector<std::string>& candidates);

// " (did you mean \"x\"?)" or "" — ready to append to a message.
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_NEAR_MISS_H_
