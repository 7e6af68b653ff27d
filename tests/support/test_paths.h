// Where tests find the real datasets and reference replies, and the
// project's own fixtures.
//
// CI and developers keep ../shared beside the checkout; EVALRUN_TEST_SHARED
// (set by ctest, overridable from the environment) points at it. Tests that
// need data fail, not skip, when it is missing: a skipped check is no check.
#ifndef EVALRUN_TESTS_SUPPORT_TEST_PATHS_H_
#define EVALRUN_TESTS_SUPPORT_TEST_PATHS_H_

#include <cstdlib>
#include <string>

namespace evalrun::testing {

inline std::string SharedDir() {
  if (const char* env = std::getenv("EVALRUN_TEST_SHARED"); env && *env) return env;
#ifdef EVALRUN_TEST_SHARED_DEFAULT
  return EVALRUN_TEST_SHARED_DEFAULT;
#else
  return "../shared";
#endif
}

// ../shared/datasets: the real benchmark files (read-only).
inline std::string DatasetsDir() { return SharedDir() + "/datasets"; }
// ../shared/reference/llama-server: real replies of llama.cpp's server.
inline std::string ReferenceDir() { return SharedDir() + "/reference/llama-server"; }
// tests/fixtures/<name> of the source tree ("nvidia-smi", "ruler/x.json").
inline std::string FixturePath(const std::string& name) {
  return std::string(EVALRUN_SOURCE_DIR) + "/tests/fixtures/" + name;
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_TEST_PATHS_H_
