// The "code" verdict kind (code generation): a program graded by running it on
// tests, passed or the first failure (CodeVerdict, evals/run/verdict.h). Its
// codec (passed, failure, profile, outcomes, failed_test, message,
// code_sha256, cut_off, other_profile, correct = passed), headline (passed),
// compare units (pass/fail per problem: McNemar) and report section
// (pass@1, bars by difficulty, platform and contest month).
#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {
namespace {

using nlohmann::json;

bool IsCodeFailure(const std::string& f) {
  for (const char* k : {"none", "wrong_answer", "time_limit", "runtime_error", "compile_error", "no_code", "cut_off"})
    if (f == k) return true;
  return false;
}

Status DecodeCodeOther(const SampleLineReader& in, CodeVerdict* c) {
  const json* o = in.Find("other_profile");
  if (!o || o->is_null()) return Status::Ok();
  auto p = o->find("profile"), ok = o->find("passed"), f = o->find("failure");
  if (!o->is_object() || p == o->end() || !p->is_string() || ok == o->end() || !ok->is_boolean() ||
      f == o->end() || !f->is_string() || !IsCodeFailure(f->get<std::string>()))
    return in.Expected("other_profile", "null or {profile, passed, failure}", o);
  c->other = CodeOutcome{p->get<std::string>(), ok->get<bool>(), f->get<std::string>()};
  return Status::Ok();
}

Status DecodeOutcomes(const SampleLineReader& in, std::vector<int>* out) {
  const json* o = in.Find("outcomes");
  if (!o || o->is_null()) return Status::Ok();
  if (!o->is_array()) return in.Expected("outcomes", "an array of integers", o);
  for (const json& x : *o) {
    if (!x.is_number_integer()) return in.Expected("outcomes", "an array of integers", o);
    out->push_back(x.get<int>());
  }
  return Status::Ok();
}

class CodeKind : public VerdictKindDefinition {
 public:
  VerdictKind Kind() const override { return VerdictKind::kCode; }

  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"passed",  "failure",     "profile", "outcomes",      "failed_test",
                                                   "message", "code_sha256", "cut_off", "other_profile", "correct"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const CodeVerdict& c = std::get<CodeVerdict>(v);
    (*line)["passed"] = c.passed;
    (*line)["failure"] = c.failure;
    (*line)["profile"] = c.profile;
    (*line)["outcomes"] = c.outcomes;
    (*line)["failed_test"] = c.failed_test >= 0 ? json(c.failed_test) : json();
    (*line)["message"] = c.message;
    (*line)["code_sha256"] = c.code_sha256;
    (*line)["cut_off"] = c.cut_off;
    (*line)["other_profile"] =
        c.other ? json{{"profile", c.other->profile}, {"passed", c.other->passed}, {"failure", c.other->failure}}
                : json();
    (*line)["correct"] = c.passed;
  }

  Status Decode(const SampleLineReader& in, Verdict* out) const override {
    CodeVerdict c;
    EVALRUN_RETURN_IF_ERROR(in.Bool("passed", &c.passed, true));
    EVALRUN_RETURN_IF_ERROR(in.String("failure", &c.failure));
    if (!IsCodeFailure(c.failure))
      return in.Error("failure", "expected none, wrong_answer, time_limit, runtime_error, compile_error, no_code or "
                                 "cut_off, got \"" + c.failure + "\"");
    EVALRUN_RETURN_IF_ERROR(in.String("profile", &c.profile));
    EVALRUN_RETURN_IF_ERROR(DecodeOutcomes(in, &c.outcomes));
    EVALRUN_RETURN_IF_ERROR(in.IntOrNull("failed_test", &c.failed_test));
    EVALRUN_RETURN_IF_ERROR(in.String("message", &c.message));
    EVALRUN_RETURN_IF_ERROR(in.String("code_sha256", &c.code_sha256));
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &c.cut_off));
    EVALRUN_RETURN_IF_ERROR(DecodeCodeOther(in, &c));
    *out = std::move(c);
    return Status::Ok();
  }

  double Headline(const Verdict& v) const override { return std::get<CodeVerdict>(v).passed ? 1.0 : 0.0; }
  bool CutOff(const Verdict& v) const override { return std::get<CodeVerdict>(v).cut_off; }
  void MarkTooLong(Verdict* v) const override { std::get<CodeVerdict>(*v).cut_off = false; }
};

// Passed, or the failure and its message.
std::string CodeAnswer(const SampleRecord& r) {
  const auto& c = std::get<CodeVerdict>(r.verdict);
  std::string s = c.passed ? "passed" : c.failure + (c.message.empty() ? "" : ": " + c.message);
  return compare_internal::ShownAnswer(c.cut_off && c.passed ? s + " (cut off)" : s);
}

// Where the answers ran: the sandbox level (and the minimum asked), a line
// above the section's charts.
void SandboxLine(const json& p, ReportSection* out) {
  const std::string level = JsonText(JsonAt(p, {"sandbox", "level"}));
  if (level.empty()) return;
  const std::string minimum = JsonText(JsonAt(p, {"sandbox", "minimum"}));
  const std::string text = "Graded in the code sandbox at level \"" + level + "\"" +
                           (minimum.empty() ? "" : " (minimum asked: \"" + minimum + "\")") +
                           (level == "rlimits" ? ", WITHOUT ISOLATION (--unsafe-exec)" : "") +
                           "; expected outputs and verdicts never entered it.";
  out->markdown += text + "\n";
  out->html += "<p>" + HtmlEscape(text) + "</p>\n";
}

class CodeView : public KindView {
 public:
  VerdictKind Kind() const override { return VerdictKind::kCode; }

  compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const override {
    return compare_internal::ScoredUnits(part, records, {"pass_at_1", "pass@1", {}, {}}, CodeAnswer);
  }

  // pass@1 and its stderr (results.json, fractions 0..1), bar charts by
  // difficulty, platform and contest month.
  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>&,
              ReportSection* out) const override {
    out->metric = "pass@1 (" + JsonText(JsonAt(p, {"profile"})) + ")";
    SandboxLine(p, out);
    out->score = Percent(ResultNumber(p, {"score"}));
    out->stderr_pct = Percent(ResultNumber(p, {"stderr"}));
    for (const auto& [key, dim] : {std::pair<const char*, const char*>{"by_difficulty", "difficulty"},
                                   {"by_platform", "platform"}, {"by_month", "contest month"}}) {
      const json& groups = JsonAt(p, {key});
      if (groups.is_object() && !groups.empty()) AddGroupTable(part, groups, "pass@1", dim, "passed", "pass_at_1", out);
    }
  }

  void Browse(const FolderPart& part, const SampleRecord& s, int, json* sample) const override {
    BrowseByLabel(part, s, sample);
    const auto& code = std::get<CodeVerdict>(s.verdict);
    json extra = json::array();
    extra.push_back({"verdict (" + code.profile + ")", code.passed ? "passed" : code.failure});
    if (!code.message.empty()) extra.push_back({"first failure", code.message});
    if (code.other)
      extra.push_back({"verdict (" + code.other->profile + ")", code.other->passed ? "passed" : code.other->failure});
    (*sample)["extra"] = extra;
  }
};

EVALRUN_REGISTER_VERDICT_KIND(CodeKind);
EVALRUN_REGISTER_KIND_VIEW(CodeView);

}  // namespace
}  // namespace evalrun
