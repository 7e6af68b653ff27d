// Grading one LiveCodeBench code answer, with the trust boundary where it
// belongs: the harness (scorers/livecodebench/lcb_harness.py, compiled into evalrun) runs
// the answer's program in a fresh sandboxed process and gets only the code
// and, one at a time, the test inputs; the expected outputs, the comparison
// (scorers/livecodebench/lcb_stdout_compare.h, scorers/livecodebench/lcb_value.h) and the verdict stay
// here, in evalrun's process. Test i's input is sent only after test i - 1
// was judged, so "stop at the first failing test" and the per-test timing
// are the official's (LiveCodeBench/LiveCodeBench @ 28fef95e,
// lcb_runner/evaluation/compute_code_generation_metrics.py and
// testing_util.py): the LcbGrade holds what the official grader records, the
// per-test results and the metadata's error_code and error_message.
//
// What the program can do to the harness (patch it, forge a frame, exit)
// can at most claim an output, which is then compared like any other: a
// frame that is malformed, missing (the process ended), extra, or for the
// wrong test makes that answer a runtime error, never a pass and never an
// error of the run.
//
// The official child process has an overall limit of (timeout + 1) * tests +
// 5 seconds; a program still running then is killed, and the official then
// records [-2] with error_code -5 (its result list is empty, so reading the
// metadata raises and evaluate_generations_by_problem keeps its default
// [-2]). The same [-2] / -5 comes from a program that ends the official child
// without a result (SystemExit out of a LeetCode method) or crashes it.
//
// Errors: a runner that fails to start the harness, or a harness that never
// says it is ready (the sandbox did not start), returns a Status (an error
// of the run, never a wrong answer). Thread-safety: GradeLcbCode is
// reentrant; the runner must be callable from several threads at once if the
// caller grades in parallel.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_GRADE_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_GRADE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"
#include "evals/proc/piped_process.h"

namespace evalrun {

enum class LcbProfile {
  kOfficial,  // verdict for verdict as the official grader
  kFixed,     // the official's false negatives fixed (lcb_harness.py says which)
};
const char* LcbProfileName(LcbProfile p);  // "official", "fixed"
bool ParseLcbProfile(std::string_view name, LcbProfile* out);

// One started harness, for one answer: a conversation over its stdin and
// stdout (evals/proc/piped_process.h). `hold` is released after the process
// is finished (the sandbox's per-answer uid).
struct LcbProcess {
  std::shared_ptr<void> hold;
  std::unique_ptr<PipedProcess> process;
  LcbProcess() = default;
  LcbProcess(LcbProcess&&) = default;
  LcbProcess& operator=(LcbProcess&&) = default;
  ~LcbProcess() {
    if (process) process->Finish(0);
  }
};

// Starts the harness (`program_source`) for one answer; wall_limit_s is the
// answer's overall limit (the caller enforces it; a CPU limit at least as
// long is the runner's). A non-ok Status only when it could not be started.
using LcbRunner = std::function<Status(const std::string& program_source, double wall_limit_s, LcbProcess* out)>;

// A problem's tests as the official get_evaluation_sample lists them: the
// public tests, then the private ones.
struct LcbTestCases {
  std::vector<std::string> inputs, outputs;
  std::string fn_name;  // metadata.func_name; "" = a stdin program
};

struct LcbGradeOptions {
  int timeout_s = 6;  // per test (the official --timeout default)
  LcbProfile profile = LcbProfile::kOfficial;
};

// Per-test codes as the official result list holds them, true and false as 1
// and 0: 1 passed; 0 a call-based method's wrong answer; -2 wrong answer (or
// the [-2] of a lost result); -3 time limit; -4 runtime error, or the [-4]
// of a program or tests that failed to load.
struct LcbGrade {
  std::vector<int> results;
  int error_code = 0;         // 0 when every test passed; else -2, -3, -4 or -5
  std::string error_message;  // the official metadata's ("Wrong Answer", "Time Limit Exceeded", ...)
  std::string error;          // repr of the exception, when there was one
  std::string exception;      // its class name ("SyntaxError", "TimeoutException", ...)
  std::string stage;          // "compile" (loading the program or tests), "tests", "done"; "" when lost
  std::string output, inputs, expected;  // the first failing test's, truncated as the official
  bool lost = false;             // no result: killed at the overall limit, crashed, or SystemExit
  bool overall_timeout = false;  // lost because of the overall limit
  std::string lost_reason;
  double execution_s = 0;        // the program's own time over the tests it ran (official "execution time")

  // As compute_metrics_from_results: np.all(results > 0).
  bool passed() const;
};

// (timeout_s + 1) * tests + 5: the official's overall limit.
double LcbOverallLimitSeconds(int timeout_s, size_t tests);

// The harness's source (scorers/livecodebench/lcb_harness.py, compiled in).
const std::string& LcbHarnessSource();

// Grades `code` (already extracted): one harness started through `runner`,
// the conversation held to the overall limit, every frame judged here.
Status GradeLcbCode(std::string_view code, const LcbTestCases& tests, const LcbGradeOptions& options,
                    const LcbRunner& runner, LcbGrade* out);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_GRADE_H_
