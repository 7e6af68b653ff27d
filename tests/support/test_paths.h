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

// Where this build's tree and programs are (absolute paths), written by the
// build into one generated file (build_paths.cc): no other test object
// depends on where the tree is checked out, so a compiler cache shared by two
// checkouts serves both.
std::string SourceDir();          // the source tree's root
std::string SharedDirDefault();   // ../shared beside it
std::string FakeServerBinary();   // evalrun-fake-server
std::string TestPartsBinary();    // evalrun with the test tree's parts

inline std::string SharedDir() {
  if (const char* env = std::getenv("EVALRUN_TEST_SHARED"); env && *env) return env;
  return SharedDirDefault();
}

// ../shared/datasets: the real benchmark files (read-only).
inline std::string DatasetsDir() { return SharedDir() + "/datasets"; }
// ../shared/reference/llama-server: real replies of llama.cpp's server.
inline std::string ReferenceDir() { return SharedDir() + "/reference/llama-server"; }
// tests/fixtures/<name> of the source tree ("nvidia-smi", "ruler/x.json").
inline std::string FixturePath(const std::string& name) {
  return SourceDir() + "/tests/fixtures/" + name;
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_TEST_PATHS_H_
