// Grading one LiveCodeBench code answer: the harness (scorers/lcb_harness.py,
// compiled into evalrun) run once on all the problem's tests through a
// runner, and its one-line JSON result read back into an LcbGrade that holds
// what the official grader records (LiveCodeBench/LiveCodeBench @ 28fef95e,
// lcb_runner/evaluation/compute_code_generation_metrics.py and
// testing_util.py): the per-test results and the metadata's error_code and
// error_message.
//
// The runner is the seam for the sandbox: evalrun hands it the harness's
// source, the JSON job for its stdin and the wall limit, and gets the exit
// status and output back. PlainPythonRunner (lcb_plain_runner.h) runs it with
// a plain python3, for tests and for machines where the sandbox is turned off.
//
// The official child process has an overall limit of (timeout + 1) * tests +
// 5 seconds; a program still running then is killed, and the official then
// records [-2] with error_code -5 (its result list is empty, so reading the
// metadata raises and evaluate_generations_by_problem keeps its default
// [-2]). The same [-2] / -5 comes from a program that ends the official child
// without a result (SystemExit out of a LeetCode method) or crashes it.
//
// Errors: a runner that fails to run the program at all returns its Status
// (an error of the run, never a wrong answer); output without a result line
// from a program that exited 0 is Internal. Thread-safety: GradeLcbCode is
// reentrant; the runner must be callable from several threads at once if the
// caller grades in parallel.
#ifndef EVALRUN_SCORERS_LCB_GRADE_H_
#define EVALRUN_SCORERS_LCB_GRADE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

enum class LcbProfile {
  kOfficial,  // verdict for verdict as the official grader
  kFixed,     // the official's false negatives fixed (lcb_harness.py says which)
};
const char* LcbProfileName(LcbProfile p);  // "official", "fixed"
bool ParseLcbProfile(std::string_view name, LcbProfile* out);

struct LcbRunRequest {
  std::string program_source;  // a Python program (the harness)
  std::string stdin_text;      // its standard input
  double wall_limit_s = 0;     // killed, with every process it started, after this
};

struct LcbRunResult {
  int exit_code = -1;     // its exit status, or -1 when it died of a signal
  int term_signal = 0;    // the signal that ended it, else 0
  bool timed_out = false; // killed at wall_limit_s
  std::string stdout_text, stderr_text;
};

// Runs one program. Returns a non-ok Status only when it could not be run
// (the interpreter or the sandbox did not start).
using LcbRunner = std::function<Status(const LcbRunRequest&, LcbRunResult*)>;

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

  // As compute_metrics_from_results: np.all(results > 0).
  bool passed() const;
};

// (timeout_s + 1) * tests + 5: the official's overall limit.
double LcbOverallLimitSeconds(int timeout_s, size_t tests);

// The harness's source (scorers/lcb_harness.py, compiled in).
const std::string& LcbHarnessSource();

// The harness's stdin for one answer (JSON).
std::string LcbHarnessJob(std::string_view code, const LcbTestCases& tests, const LcbGradeOptions& options);

// Reads a finished run into *out (the result line, or a lost result).
Status ReadLcbHarnessRun(const LcbRunResult& run, LcbGrade* out);

// Grades `code` (already extracted): LcbHarnessJob, one runner call with the
// overall limit, ReadLcbHarnessRun.
Status GradeLcbCode(std::string_view code, const LcbTestCases& tests, const LcbGradeOptions& options,
                    const LcbRunner& runner, LcbGrade* out);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LCB_GRADE_H_
