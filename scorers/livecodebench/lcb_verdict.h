// A LiveCodeBench code answer's verdict and the results over many: pass@1
// (one answer per problem: the share that passed, as the official
// compute_metrics_from_results with n = 1) overall and by difficulty,
// platform and contest month, and the failure counts. Plain values and
// functions; the part records and aggregates them.
//
// The failure kind is the first failure's, from the official result codes
// (lcb_grade.h), with two kinds of its own: no_code (nothing extracted: the
// official grades "" and records [-4]) and cut_off (the answer stopped at
// max_tokens and failed: the cut is the cause, whatever the tests said).
// A run killed at the overall limit is a time_limit; one that ended without
// a result otherwise (a crash, SystemExit out of a LeetCode method) a
// runtime_error; a program that does not parse a compile_error (official:
// [-4] "Error during testing: ..."). Thread-safety: pure functions.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_VERDICT_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_VERDICT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scorers/livecodebench/lcb_grade.h"

namespace evalrun {

enum class LcbFailure { kNone, kWrongAnswer, kTimeLimit, kRuntimeError, kCompileError, kNoCode, kCutOff };

// "none", "wrong_answer", "time_limit", "runtime_error", "compile_error", "no_code", "cut_off".
const char* LcbFailureName(LcbFailure f);
bool ParseLcbFailure(std::string_view name, LcbFailure* out);

struct LcbVerdict {
  // The problem's, copied by the caller for the groups.
  std::string question_id, difficulty, platform, contest_month;
  bool passed = false;
  LcbFailure failure = LcbFailure::kNone;
  std::vector<int> outcomes;  // LcbGrade::results
  int failed_test = -1;       // index of the first failing test (-1: none, or not known)
  std::string message;        // the first failure in words (the official error_message)
  std::string code_sha256;    // of the extracted code
};

// The verdict of `code` (as extracted) graded into `grade`; cut_off: the
// answer ended at max_tokens.
LcbVerdict MakeLcbVerdict(const LcbGrade& grade, std::string_view code, bool cut_off);

struct LcbRate {
  int n = 0, passed = 0;
  double PassAt1() const { return n ? static_cast<double>(passed) / n : 0.0; }
};

struct LcbSummary {
  LcbRate overall;
  std::map<std::string, LcbRate> by_difficulty, by_platform, by_month;
  std::map<std::string, int> failures;  // failure name -> count (passed answers not counted)
};

LcbSummary SummarizeLcb(const std::vector<LcbVerdict>& verdicts);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_VERDICT_H_
