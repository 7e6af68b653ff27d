// Seeded, portable question selection: the same ids for the same seed and
// N on every machine, compiler and run. The standard library's random
// distributions differ between implementations, so the order comes from a
// hash of (seed, id) instead.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BASE_SELECTION_H_
#define EVALRUN_EVALS_BASE_SELECTION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

// 64-bit FNV-1a of "<seed>:<id>", finished with splitmix64's mixer.
uint64_t SelectionKey(int64_t seed, std::string_view id);

// Picks `n` of the items, stratified by category: each category gets its
// share of n in proportion to its size (largest remainders, ties to the
// larger category, then the name), and within a category the items with the
// lowest SelectionKey. Returns indices in ascending (dataset) order. n < 0 or
// n >= size selects everything.
std::vector<size_t> StratifiedSample(const std::vector<std::string>& ids,
                                     const std::vector<std::string>& categories, int n,
                                     int64_t seed);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_SELECTION_H_
