#include "evals/benchmarks/livecodebench/lcb_results.h"

#include <set>

#include "evals/run/results.h"
#include "scorers/livecodebench/lcb_verdict.h"

namespace evalrun {
namespace {

using nlohmann::json;

json RateJson(const LcbRate& r) {
  return {{"n", r.n}, {"passed", r.passed}, {"pass_at_1", Round(r.PassAt1(), 6)}};
}

json RatesJson(const std::map<std::string, LcbRate>& rates) {
  json j = json::object();
  for (const auto& [name, r] : rates) j[name] = RateJson(r);
  return j;
}

// The record as scorers/livecodebench/lcb_verdict.h summarises it, under `profile`.
LcbVerdict AsLcbVerdict(const SampleRecord& rec, const std::string& profile) {
  const CodeVerdict& c = std::get<CodeVerdict>(rec.verdict);
  LcbVerdict v;
  v.question_id = rec.id;
  v.difficulty = rec.Text("difficulty");
  v.platform = rec.Text("platform");
  v.contest_month = rec.Text("contest_month");
  const bool other = c.other && c.other->profile == profile;
  v.passed = other ? c.other->passed : c.passed;
  ParseLcbFailure(other ? c.other->failure : c.failure, &v.failure);
  return v;
}

}  // namespace

bool FixedMayDiffer(const LcbGrade& official) {
  if (official.passed()) return false;
  const LcbFailure f = MakeLcbVerdict(official, "x", false).failure;
  return f == LcbFailure::kWrongAnswer || f == LcbFailure::kRuntimeError;
}

CodeVerdict MakeCodeVerdict(std::string_view code, bool cut_off, const LcbGrade& official, const LcbGrade* fixed,
                            LcbProfile headline) {
  const LcbVerdict vo = MakeLcbVerdict(official, code, cut_off);
  const LcbVerdict vf = fixed ? MakeLcbVerdict(*fixed, code, cut_off) : vo;
  const bool fixed_first = headline == LcbProfile::kFixed;
  const LcbVerdict& h = fixed_first ? vf : vo;
  const LcbVerdict& o = fixed_first ? vo : vf;
  CodeVerdict c;
  c.passed = h.passed;
  c.failure = LcbFailureName(h.failure);
  c.profile = LcbProfileName(headline);
  c.outcomes = h.outcomes;
  c.failed_test = h.failed_test;
  c.message = h.message;
  c.code_sha256 = h.code_sha256;
  c.cut_off = cut_off;
  if (o.passed != h.passed || o.failure != h.failure)
    c.other = CodeOutcome{LcbProfileName(fixed_first ? LcbProfile::kOfficial : LcbProfile::kFixed), o.passed,
                          LcbFailureName(o.failure)};
  return c;
}

json AggregateLcb(const std::vector<SampleRecord>& records, int failed, const json& info) {
  const std::string headline = info.value("profile", std::string("official"));
  std::vector<LcbVerdict> verdicts, official, fixed;
  int cut = 0, no_code = 0;
  json differ = json::array();
  for (const SampleRecord& rec : records) {
    const CodeVerdict& c = std::get<CodeVerdict>(rec.verdict);
    verdicts.push_back(AsLcbVerdict(rec, headline));
    official.push_back(AsLcbVerdict(rec, "official"));
    fixed.push_back(AsLcbVerdict(rec, "fixed"));
    cut += c.cut_off;
    no_code += c.failure == "no_code";
    if (c.other) differ.push_back(rec.id);
  }
  const LcbSummary s = SummarizeLcb(verdicts);
  json r;
  const double p = s.overall.PassAt1();
  r["score"] = Round(p, 6);
  r["pass_at_1"] = Round(p, 6);
  r["profile"] = headline;
  r["n"] = s.overall.n;
  r["correct"] = s.overall.passed;
  r["cut_off"] = cut;
  r["no_answer"] = no_code;
  r["failed"] = failed;
  r["stderr"] = Round(BinomialStderr(p, s.overall.n), 6);
  r["by_difficulty"] = RatesJson(s.by_difficulty);
  r["by_platform"] = RatesJson(s.by_platform);
  r["by_month"] = RatesJson(s.by_month);
  r["failures"] = s.failures;
  r["profiles"] = {{"official", RateJson(SummarizeLcb(official).overall)},
                   {"fixed", RateJson(SummarizeLcb(fixed).overall)}};
  r["profiles_differ"] = differ;
  for (const char* k : {"window", "sandbox", "test_timeout_s"})
    if (info.contains(k)) r[k] = info[k];
  AddSpeeds(records, &r);
  return r;
}

}  // namespace evalrun
