// How langdetect's n-grams are keyed, shared by the profile loader
// (langdetect_profiles.cc) and the detector (langdetect.cc); internal to
// scorers/. LangDetector keeps its grams in an open-addressing table of
// (PackGram key, row) slots indexed by HashSlot.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_SCORERS_IFEVAL_LANGDETECT_GRAMS_H_
#define EVALRUN_SCORERS_IFEVAL_LANGDETECT_GRAMS_H_

#include <cstddef>
#include <cstdint>

namespace evalrun::langdetect {

// A gram of 1-3 code points as one integer: (cp + 1) in 21-bit fields, first
// code point lowest. 0 is no gram (the empty slot marker).
inline uint64_t PackGram(const char32_t* cps, size_t n) {
  uint64_t key = 0;
  for (size_t i = 0; i < n; ++i) key |= static_cast<uint64_t>(cps[i] + 1) << (21 * i);
  return key;
}

// The slot of `key` in a table of 2^(64 - shift) slots (Fibonacci hashing).
inline size_t HashSlot(uint64_t key, int shift) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift);
}

}  // namespace evalrun::langdetect

#endif  // EVALRUN_SCORERS_IFEVAL_LANGDETECT_GRAMS_H_
