// Runs a program (the real evalrun binary) with a bounded wall time and
// captures its output and exit code. Tests only.
#ifndef EVALRUN_TESTS_SUPPORT_RUN_BINARY_H_
#define EVALRUN_TESTS_SUPPORT_RUN_BINARY_H_

#include <string>
#include <vector>

namespace evalrun::testing {

struct BinaryResult {
  int exit_code = -1;     // -1 when killed by a signal or timed out
  int signal = 0;
  bool timed_out = false;
  long max_rss_kb = 0;    // the child's peak resident memory since exec, VmHWM (RunBinary only)
  std::string out, err;
};

// Runs `argv` (argv[0] is the path) with `env_extra` ("K=V") added to the
// environment. Killed with SIGKILL after `timeout_s`.
BinaryResult RunBinary(const std::vector<std::string>& argv, double timeout_s = 120,
                       const std::vector<std::string>& env_extra = {});

// Starts it in the background, stdout and stderr to the given files
// (replaced); returns the pid, or -1 when a file cannot be made or fork fails.
int SpawnBinary(const std::vector<std::string>& argv, const std::string& out_path,
                const std::string& err_path);
// Waits for a spawned pid up to timeout_s; returns its BinaryResult (no output).
BinaryResult WaitBinary(int pid, double timeout_s);

// The path of the evalrun binary under test (build_paths.cc, generated).
std::string EvalrunBinary();

// A fresh temp folder, removed by the caller with RemoveTree.
std::string MakeTempDir(const std::string& prefix = "evalrun-test");
void RemoveTree(const std::string& path);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_RUN_BINARY_H_
