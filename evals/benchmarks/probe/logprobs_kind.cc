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
#include <cstdio>
#include <map>

#include "evals/base/json_fields.h"
#include "evals/benchmarks/probe/compare_probe.h"
#include "evals/benchmarks/probe/compare_probe_text.h"
#include "evals/benchmarks/probe/probe_report.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"
#include "evals/run/top_logprobs_codec.h"
#include "evals/run/verdict_kind.h"
#include "scorers/probe/probe_divergence.h"

namespace evalrun {
namespace {

using nlohmann::json;

// A probe's repeats: its distributions, not scores. "flips" are the
// positions whose top token changed; the KLD between the repeats is the A/A
// floor an A/B probe comparison is read against (compare --noise).
json ProbeRepeatJson(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second) {
  std::map<std::string, const LogprobsVerdict*> by_id;
  for (const auto& rec : second) by_id[rec.id] = &std::get<LogprobsVerdict>(rec.verdict);
  std::vector<double> kld;
  int64_t changed = 0;
  for (const auto& rec : first) {
    auto it = by_id.find(rec.id);
    const auto& v = std::get<LogprobsVerdict>(rec.verdict);
    if (it == by_id.end() || v.top.empty() || it->second->top.empty()) continue;
    const PositionDivergence d = ComparePosition(v.top, it->second->top);
    kld.push_back(d.kld);
    changed += !d.same_top;
  }
  const ValueSummary k = Summarize(kld);
  const int64_t n = static_cast<int64_t>(kld.size());
  json j;
  j["kind"] = VerdictKindName(VerdictKind::kLogprobs);
  j["pairs"] = n;
  j["flips"] = changed;
  j["flip_rate"] = n > 0 ? static_cast<double>(changed) / n : 0.0;
  j["kld"] = {{"mean", k.mean}, {"median", k.median}, {"p95", k.p95}, {"p99", k.p99}, {"max", k.max}};
  j["mde"] = nullptr;
  j["mde_below"] = nullptr;
  char text[320];
  std::snprintf(text, sizeof text,
                "KLD(repeat 1 || repeat 2) over %lld positions: mean %.3g, p99 %.3g, max %.3g; the top token changed "
                "at %lld",
                static_cast<long long>(n), k.mean, k.p99, k.max, static_cast<long long>(changed));
  j["text"] = text;
  return j;
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
    (*line)["top_logprobs"] = EncodeTopLogprobs(l.top);
    (*line)["cut_off"] = l.cut_off;
  }

  Status Decode(const SampleLineReader& in, Verdict* out) const override {
    LogprobsVerdict l;
    EVALRUN_RETURN_IF_ERROR(DecodeTopLogprobs(in, &l.top));
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
  // The candidates are the measurement: the stored answer's text does not
  // hold them, so a stored verdict is kept.
  bool KeepsStoredVerdict() const override { return true; }
  json CompareRepeats(const std::vector<SampleRecord>& first,
                      const std::vector<SampleRecord>& second) const override {
    return ProbeRepeatJson(first, second);
  }
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
