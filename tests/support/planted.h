// Small helpers for tests that plant a behaviour per question: a text of n
// one-token words, and a question's planted kind read from its prompt's
// sha256 (stable across runs, spread evenly over `kinds`).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_TESTS_SUPPORT_PLANTED_H_
#define EVALRUN_TESTS_SUPPORT_PLANTED_H_

#include <string>

namespace evalrun::testing {

// "w w w ..." : n words (the fake server counts one token each).
inline std::string Words(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += i ? " w" : "w";
  return s;
}

// The first hex digit of `prompt_sha256`, modulo `kinds`.
inline int PlantedKind(const std::string& prompt_sha256, int kinds) {
  const char c = prompt_sha256[0];
  return (c <= '9' ? c - '0' : c - 'a' + 10) % kinds;
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_PLANTED_H_
