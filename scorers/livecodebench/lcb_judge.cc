#include "scorers/livecodebench/lcb_judge.h"

#include <algorithm>
#include <cctype>

#include "scorers/livecodebench/lcb_stdout_compare.h"

namespace evalrun {
namespace {

std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool IsFrame(const nlohmann::json& j, const char* kind) {
  return j.is_object() && Str(j, "frame") == kind;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

void LcbJudge::Lose(const std::string& why, bool overall_timeout, LcbGrade* out) {
  *out = LcbGrade();
  out->results = {-2};
  out->error_code = -5;
  out->error_message = "TestRunnerError";
  out->lost = true;
  out->overall_timeout = overall_timeout;
  out->lost_reason = why;
}

void LcbJudge::Malformed(const std::string& why, LcbGrade* out) {
  std::vector<int> results = out->results;
  results.push_back(-4);
  *out = LcbGrade();
  out->results = std::move(results);
  out->error_code = -4;
  out->error_message = "Runtime Error";
  out->error = "evalrun: " + why;
  out->exception = "MalformedFrame";
  out->stage = "tests";
}

std::string LcbJudge::ExpectedText(size_t i) const {
  return tests_.fn_name.empty() ? TruncateLikeOfficial(tests_.outputs[i]) : TruncateLikeOfficial(PyStr(expected_[i]));
}

void LcbJudge::Fail(int code, const std::string& message, size_t i, LcbGrade* out) const {
  *out = LcbGrade();
  out->results = results_;
  out->error_code = code;
  out->error_message = message;
  out->stage = "tests";
  out->execution_s = execution_s_;
  if (tests_.fn_name.empty()) out->inputs = TruncateLikeOfficial(tests_.inputs[i]);
  out->expected = ExpectedText(i);
}

// grade_call_based parses every input line and every expected output
// before the first test: one that is not JSON ends the grading with [-4].
bool LcbJudge::PrepareCallBased(LcbGrade* out) {
  expected_.resize(tests_.outputs.size());
  for (size_t i = 0; i < tests_.inputs.size(); ++i) {
    const std::string& text = tests_.inputs[i];
    for (size_t pos = 0;;) {
      size_t nl = text.find('\n', pos);
      PyValue ignored;
      Status st = ParseExpectedValue(std::string_view(text).substr(pos, nl == std::string::npos ? nl : nl - pos), &ignored);
      if (!st.ok()) return Fail(-4, "Error during testing: input " + std::to_string(i) + ": " + st.message(), i, out), false;
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }
  for (size_t i = 0; i < tests_.outputs.size(); ++i) {
    Status st = ParseExpectedValue(tests_.outputs[i], &expected_[i]);
    if (!st.ok()) return Fail(-4, "Error during testing: output " + std::to_string(i) + ": " + st.message(), i, out), false;
  }
  return true;
}

bool LcbJudge::OnLoad(const nlohmann::json& frame, LcbGrade* out) {
  if (IsFrame(frame, "load_error")) {
    *out = LcbGrade();
    out->results = {-4};
    out->error_code = -4;
    out->error_message = "Error during testing: " + Str(frame, "message");
    out->exception = Str(frame, "exception");
    out->stage = "compile";
    return false;
  }
  if (IsFrame(frame, "lost")) return Lose(Str(frame, "why"), false, out), false;
  if (!IsFrame(frame, "loaded")) return Malformed("a frame that is not the load's", out), false;
  if (!tests_.fn_name.empty() && !PrepareCallBased(out)) {
    out->results = {-4};
    return false;
  }
  return true;
}

bool LcbJudge::OnTest(size_t i, const nlohmann::json& frame, LcbGrade* out) {
  if (IsFrame(frame, "lost")) return Lose(Str(frame, "why"), false, out), false;
  auto test = frame.is_object() ? frame.find("test") : frame.end();
  if (!IsFrame(frame, "test") || test == frame.end() || !test->is_number_unsigned() || test->get<size_t>() != i)
    return out->results = results_, Malformed("not the frame of test " + std::to_string(i), out), false;
  if (auto t = frame.find("time"); t != frame.end() && t->is_number()) execution_s_ += t->get<double>();
  if (frame.contains("raised")) return JudgeRaised(i, frame, out);
  const bool stdin_program = tests_.fn_name.empty();
  auto printed = frame.find("printed");
  if (stdin_program && printed != frame.end() && printed->is_string()) return JudgePrinted(i, *printed, out);
  if (!stdin_program && frame.contains("value")) return JudgeValue(i, frame, out);
  return out->results = results_, Malformed("test " + std::to_string(i) + ": no outcome", out), false;
}

bool LcbJudge::JudgeRaised(size_t i, const nlohmann::json& frame, LcbGrade* out) {
  const std::string error = Str(frame, "error");
  const bool timeout = Lower(error).find("timeoutexception") != std::string::npos;
  results_.push_back(timeout ? -3 : -4);
  Fail(timeout ? -3 : -4, timeout ? "Time Limit Exceeded" : "Runtime Error", i, out);
  out->error = error;
  out->exception = Str(frame, "raised");
  if (!tests_.fn_name.empty()) out->inputs = Str(frame, "args");
  return false;
}

bool LcbJudge::JudgePrinted(size_t i, const std::string& printed, LcbGrade* out) {
  StdoutComparison c = CompareStdout(printed, tests_.outputs[i]);
  if (c.equal) {
    results_.push_back(1);
    return true;
  }
  if (c.raised) {  // out of grade_stdio: run_test's catch-all ends it all
    *out = LcbGrade();
    out->results = {-4};
    out->error_code = -4;
    out->error_message = "Error during testing: [<class 'decimal.InvalidOperation'>]";
    out->exception = "InvalidOperation";
    out->stage = "tests";
    return false;
  }
  results_.push_back(-2);
  Fail(-2, c.message, i, out);
  out->output = TruncateLikeOfficial(printed);
  return false;
}

bool LcbJudge::JudgeValue(size_t i, const nlohmann::json& frame, LcbGrade* out) {
  PyValue got;
  Status st = DecodeTypedValue(frame["value"], &got);
  if (!st.ok()) return out->results = results_, Malformed("test " + std::to_string(i) + ": " + st.message(), out), false;
  got = TuplesAsLists(std::move(got), profile_ == LcbProfile::kFixed);
  PyEquality eq = PyEquals(got, expected_[i]);
  if (eq.raised) {  // a ValueError out of `==` or `not`: caught as the test's exception
    if (eq.has_first) results_.push_back(eq.first_truth ? 1 : 0);
    results_.push_back(-4);
    Fail(-4, "Runtime Error", i, out);
    out->error = eq.error;
    out->exception = "ValueError";
    out->inputs = Str(frame, "args");
    return false;
  }
  results_.push_back(eq.equal ? 1 : 0);
  if (eq.equal) return true;
  Fail(-2, "Wrong Answer", i, out);
  out->output = Str(frame, "repr");
  out->inputs = Str(frame, "args");
  return false;
}

void LcbJudge::Done(LcbGrade* out) const {
  *out = LcbGrade();
  out->results = results_;
  out->stage = "done";
  out->execution_s = execution_s_;
}

}  // namespace evalrun
