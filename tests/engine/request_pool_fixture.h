// What the request pool's tests share: prompts and the order to send them.
#ifndef EVALRUN_TESTS_ENGINE_REQUEST_POOL_FIXTURE_H_
#define EVALRUN_TESTS_ENGINE_REQUEST_POOL_FIXTURE_H_

#include <string>
#include <vector>

#include "evals/server/types.h"

namespace evalrun::pool_testing {

// n prompts whose one user message is their index ("0", "1", ...).
inline std::vector<Prompt> MakePrompts(int n) {
  std::vector<Prompt> v(n);
  for (int i = 0; i < n; ++i) v[i].messages.push_back({"user", std::to_string(i)});
  return v;
}

// 0, 1, ..., n - 1.
inline std::vector<size_t> AllIndices(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace evalrun::pool_testing

#endif  // EVALRUN_TESTS_ENGINE_REQUEST_POOL_FIXTURE_H_
