#include "scorers/livecodebench/lcb_verdict.h"

#include "evals/base/sha256.h"

namespace evalrun {

namespace {

constexpr std::pair<LcbFailure, const char*> kNames[] = {
    {LcbFailure::kNone, "none"},
    {LcbFailure::kWrongAnswer, "wrong_answer"},
    {LcbFailure::kTimeLimit, "time_limit"},
    {LcbFailure::kRuntimeError, "runtime_error"},
    {LcbFailure::kCompileError, "compile_error"},
    {LcbFailure::kNoCode, "no_code"},
    {LcbFailure::kCutOff, "cut_off"},
};

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos; }

LcbFailure KindOf(const LcbGrade& g) {
  if (g.lost) return g.overall_timeout ? LcbFailure::kTimeLimit : LcbFailure::kRuntimeError;
  switch (g.error_code) {
    case -2: return LcbFailure::kWrongAnswer;
    case -3: return LcbFailure::kTimeLimit;
    default: break;
  }
  const bool syntax = g.exception == "SyntaxError" || g.exception == "IndentationError" || g.exception == "TabError";
  return g.stage == "compile" && syntax ? LcbFailure::kCompileError : LcbFailure::kRuntimeError;
}

}  // namespace

const char* LcbFailureName(LcbFailure f) {
  for (const auto& [kind, name] : kNames)
    if (kind == f) return name;
  return "none";
}

bool ParseLcbFailure(std::string_view name, LcbFailure* out) {
  for (const auto& [kind, n] : kNames)
    if (name == n) {
      *out = kind;
      return true;
    }
  return false;
}

LcbVerdict MakeLcbVerdict(const LcbGrade& grade, std::string_view code, bool cut_off) {
  LcbVerdict v;
  v.code_sha256 = Sha256Hex(code);
  v.outcomes = grade.results;
  v.passed = grade.passed();
  if (v.passed) return v;
  for (size_t i = 0; i < grade.results.size(); ++i)
    if (grade.results[i] <= 0) {
      v.failed_test = grade.lost || grade.stage == "compile" ? -1 : static_cast<int>(i);
      break;
    }
  v.message = grade.lost ? grade.error_message + ": " + grade.lost_reason : grade.error_message;
  if (cut_off) v.failure = LcbFailure::kCutOff;
  else if (IsBlank(code)) v.failure = LcbFailure::kNoCode;
  else v.failure = KindOf(grade);
  return v;
}

LcbSummary SummarizeLcb(const std::vector<LcbVerdict>& verdicts) {
  LcbSummary s;
  for (const auto& v : verdicts) {
    for (LcbRate* r : {&s.overall, &s.by_difficulty[v.difficulty], &s.by_platform[v.platform],
                       &s.by_month[v.contest_month]}) {
      ++r->n;
      r->passed += v.passed ? 1 : 0;
    }
    if (!v.passed) ++s.failures[LcbFailureName(v.failure)];
  }
  return s;
}

}  // namespace evalrun
