// The verdict side of LiveCodeBench grading (lcb_grade.h): what the harness
// reports for one answer, frame by frame, judged against the expected
// outputs as the official grader judges (LiveCodeBench/LiveCodeBench @
// 28fef95e, lcb_runner/evaluation/testing_util.py grade_stdio,
// grade_call_based, run_test; compute_code_generation_metrics.py for a lost
// result). Only this side knows the expected outputs.
//
// A frame that is not what the harness sends at that point is a runtime
// error of the answer (results so far, then -4), never a pass.
//
// Thread-safety: an LcbJudge belongs to one grading.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_JUDGE_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_JUDGE_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scorers/livecodebench/lcb_grade.h"
#include "scorers/livecodebench/lcb_value.h"

namespace evalrun {

class LcbJudge {
 public:
  LcbJudge(const LcbTestCases& tests, LcbProfile profile) : tests_(tests), profile_(profile) {}

  // The load frame: true when the program loaded and the tests may run;
  // else *out is final (a load error, a lost result, a malformed frame, or
  // for a LeetCode problem an input or expected output that is not JSON).
  bool OnLoad(const nlohmann::json& frame, LcbGrade* out);
  // Test i's frame: true when the test passed; else *out is final.
  bool OnTest(size_t i, const nlohmann::json& frame, LcbGrade* out);
  // Every test passed.
  void Done(LcbGrade* out) const;
  // The per-test results so far.
  const std::vector<int>& results() const { return results_; }

  // The official [-2] / -5 of a run that ended without a result.
  static void Lose(const std::string& why, bool overall_timeout, LcbGrade* out);
  // A frame that breaks the conversation: the results so far, then -4.
  static void Malformed(const std::string& why, LcbGrade* out);

 private:
  bool PrepareCallBased(LcbGrade* out);
  bool JudgePrinted(size_t i, const std::string& printed, LcbGrade* out);
  bool JudgeValue(size_t i, const nlohmann::json& frame, LcbGrade* out);
  bool JudgeRaised(size_t i, const nlohmann::json& frame, LcbGrade* out);
  void Fail(int code, const std::string& message, size_t i, LcbGrade* out) const;
  std::string ExpectedText(size_t i) const;

  const LcbTestCases& tests_;
  LcbProfile profile_;
  std::vector<PyValue> expected_;  // LeetCode problems: each output, json.loads'd
  std::vector<int> results_;
  double execution_s_ = 0;
};

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_JUDGE_H_
