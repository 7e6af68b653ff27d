// ASCII-only case folding for protocol tokens (HTTP header names,
// nvidia-smi's fields): no locale, no Unicode.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BASE_ASCII_CASE_H_
#define EVALRUN_EVALS_BASE_ASCII_CASE_H_

#include <string_view>

namespace evalrun {

// a == b, ignoring the case of ASCII letters.
inline bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_ASCII_CASE_H_
