// The "logprobs" verdict kind, brought by the probe part (probe.cc) that
// makes its verdicts: not a judgement but the server's top-K candidates for
// one next token (LogprobsVerdict, evals/run/verdict.h). Its codec
// (top_logprobs [{id, token, logprob}], cut_off), headline (the top
// candidate's probability) and report section (the top-1 distribution, a
// histogram, the positions: probe_report.h, placed with the results).
// `compare` of two probe runs is a distribution comparison of its own, not
// units: the view compares on its own (compare_probe.h) and shows it
// (compare_probe_text.h).
#include <algorithm>
#include <cmath>

#include "evals/base/json_fields.h"
#include "evals/benchmarks/probe/compare_probe.h"
#include "evals/benchmarks/probe/compare_probe_text.h"
#include "evals/benchmarks/probe/probe_report.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {
namespace {

using nlohmann::json;

// One candidate of top_logprobs[i] into *out.
Status DecodeCandidate(const SampleLineReader& in, const json& e, const std::string& field, TokenLogprob* out) {
  if (!e.is_object()) return in.Expected(field, "an object {id, token, logprob}", &e);
  auto id = e.find("id");
  if (id != e.end() && !id->is_null()) {
    if (!id->is_number_integer() || id->get<int64_t>() < 0)
      return in.Expected(field + ".id", "a token id (an integer >= 0) or null", &*id);
    out->id = id->get<int64_t>();
  }
  auto tok = e.find("token");
  if (tok == e.end() || !tok->is_string())
    return in.Expected(field + ".token", "a string", tok == e.end() ? nullptr : &*tok);
  out->token = tok->get<std::string>();
  auto lp = e.find("logprob");
  if (lp == e.end() || !lp->is_number() || lp->get<double>() > 1e-6)
    return in.Expected(field + ".logprob", "a number <= 0", lp == e.end() ? nullptr : &*lp);
  out->logprob = lp->get<double>();
  return Status::Ok();
}

// top_logprobs: [{id (null when the server gave none), token, logprob}],
// most likely first.
class LogprobsKind : public VerdictKindDefinition {
 public:
  VerdictKind Kind() const override { return VerdictKind::kLogprobs; }

  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"top_logprobs", "cut_off"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const LogprobsVerdict& l = std::get<LogprobsVerdict>(v);
    json top = json::array();
    for (const TokenLogprob& t : l.top)
      top.push_back({{"id", t.id >= 0 ? json(t.id) : json()}, {"token", t.token}, {"logprob", t.logprob}});
    (*line)["top_logprobs"] = std::move(top);
    (*line)["cut_off"] = l.cut_off;
  }

  Status Decode(const SampleLineReader& in, Verdict* out) const override {
    LogprobsVerdict l;
    const json* top = in.Find("top_logprobs");
    if (!top || !top->is_array()) return in.Expected("top_logprobs", "an array of {id, token, logprob}", top);
    for (size_t i = 0; i < top->size(); ++i) {
      const std::string field = "top_logprobs[" + std::to_string(i) + "]";
      TokenLogprob t;
      EVALRUN_RETURN_IF_ERROR(DecodeCandidate(in, (*top)[i], field, &t));
      if (i > 0 && t.logprob > l.top.back().logprob)
        return in.Error(field + ".logprob", "the candidates are not in descending order of logprob");
      l.top.push_back(std::move(t));
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &l.cut_off));
    *out = std::move(l);
    return Status::Ok();
  }

  double Headline(const Verdict& v) const override {
    const auto& l = std::get<LogprobsVerdict>(v);
    return l.top.empty() ? 0.0 : std::exp(l.top[0].logprob);
  }
  bool CutOff(const Verdict& v) const override { return std::get<LogprobsVerdict>(v).cut_off; }
  void MarkTooLong(Verdict* v) const override { std::get<LogprobsVerdict>(*v).cut_off = false; }
};

class LogprobsView : public KindView {
 public:
  VerdictKind Kind() const override { return VerdictKind::kLogprobs; }
  bool Fractional() const override { return true; }

  compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const override {
    return compare_internal::ScoredUnits(part, records, {"score", "mean score", {}, {}}, nullptr);
  }

  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
              ReportSection* out) const override {
    out->metric = "top-1 p > 0.5 (share of positions)";
    out->score = ResultNumber(p, {"score"});
    const json model = ProbeReportModel(part, p, records);
    out->results_markdown = ProbeReportMarkdown(model);
    out->results_html = ProbeReportHtml(model);
  }

  bool ComparesOnItsOwn() const override { return true; }
  Status ComparePart(const std::string& part, const RunFolder& a, const RunFolder& b,
                     const std::vector<SampleRecord>& sa, const std::vector<SampleRecord>& sb,
                     const CompareOptions& opts, json* part_doc) const override {
    return CompareProbePart(part, a, b, sa, sb, opts, part_doc);
  }
  Status ComparePartNoise(const std::string& part, const RunFolder& a, const RunFolder& noise_a,
                          const RunFolder& noise_a2, const std::vector<SampleRecord>& na,
                          const std::vector<SampleRecord>& na2, const CompareOptions& opts,
                          json* part_doc) const override {
    return ProbePartNoise(part, a, noise_a, noise_a2, na, na2, opts, part_doc);
  }
  std::string CompareVerdictMarkdown(const json& p) const override { return ProbeVerdictMarkdown(p); }
  std::string CompareVerdictHtml(const json& p) const override { return ProbeVerdictHtml(p); }
  std::string ComparePartMarkdown(const json& p) const override { return ProbePartMarkdown(p); }
  std::string ComparePartHtml(const json& p) const override { return ProbePartHtml(p); }

  std::string CompareDecidesClause() const override { return " (and a probe's thresholds)"; }
  std::string CompareNoiseClause() const override {
    return "; a probe is within noise when its mean KLD is not above the A/A pair's largest per-position KLD";
  }
  std::string RepeatClause() const override {
    return "; for a probe, flips are the positions whose top token changed and the floor is the KLD between the "
           "repeats";
  }
};

EVALRUN_REGISTER_VERDICT_KIND(LogprobsKind);
EVALRUN_REGISTER_KIND_VIEW(LogprobsView);

}  // namespace
}  // namespace evalrun
