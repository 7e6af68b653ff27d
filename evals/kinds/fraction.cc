// The "fraction" verdict kind (partial credit, as a string match gives): a
// share of credit in [0, 1], null when the answer was empty after post-processing
// (FractionVerdict, evals/run/verdict.h). Its codec (score, cut_off, null),
// headline (the fraction), aggregation, compare units (one per sample,
// fractional) and report section (mean score with the records' standard
// error, the scores by length and task).
//
// Its scale: a sample's score is 0..1 in samples.jsonl; the part's score in
// results.json is 0..100 (a percentage, which the report reads as it is).
// The kind's own aggregation writes that scale too, so a part that takes it
// as it is is shown right.
#include <algorithm>
#include <cmath>

#include "evals/base/json_fields.h"
#include "evals/publish/kind_view.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {
namespace {

using nlohmann::json;

class FractionKind : public VerdictKindDefinition {
 public:
  VerdictKind Kind() const override { return VerdictKind::kFraction; }

  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"score", "cut_off", "null"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const FractionVerdict& f = std::get<FractionVerdict>(v);
    (*line)["score"] = f.score;
    (*line)["cut_off"] = f.cut_off;
    (*line)["null"] = f.null;
  }

  Status Decode(const SampleLineReader& in, Verdict* out) const override {
    FractionVerdict f;
    const json* s = in.Find("score");
    if (!s || !s->is_number() || s->get<double>() < 0 || s->get<double>() > 1)
      return in.Expected("score", "a number in [0, 1]", s);
    f.score = s->get<double>();
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &f.cut_off));
    EVALRUN_RETURN_IF_ERROR(in.Bool("null", &f.null));
    *out = f;
    return Status::Ok();
  }

  double Headline(const Verdict& v) const override { return std::get<FractionVerdict>(v).score; }
  // AggregateByHeadline's fields, score and stderr on the kind's results
  // scale (0..100, two decimals), `null` counted.
  json Aggregate(const std::vector<SampleRecord>& records, int failed) const override {
    json r = AggregateByHeadline(records, failed);
    r["score"] = std::round(r["score"].get<double>() * 100 * 100) / 100;
    r["stderr"] = std::round(r["stderr"].get<double>() * 100 * 10000) / 10000;
    int nulls = 0;
    for (const auto& s : records) nulls += std::get<FractionVerdict>(s.verdict).null;
    r["nulls"] = nulls;
    return r;
  }
  bool CutOff(const Verdict& v) const override { return std::get<FractionVerdict>(v).cut_off; }
  void MarkTooLong(Verdict* v) const override {
    auto& f = std::get<FractionVerdict>(*v);
    f.cut_off = false;
    f.null = false;
  }
};

// results.json's `lengths` ({<length>: {score, tasks: {<task>: {score}}}})
// as {title, lengths: [{length, label, score, tasks}], tasks}, lengths by
// value; null when it has none.
json ByLength(const FolderPart& part, const json& p) {
  const json& L = JsonAt(p, {"lengths"});
  if (!L.is_object()) return nullptr;
  std::vector<std::string> lengths, tasks;
  for (auto it = L.begin(); it != L.end(); ++it) lengths.push_back(it.key());
  std::sort(lengths.begin(), lengths.end(), NumericLess);
  json lens = json::array();
  for (const auto& len : lengths) {
    const json& lj = L[len];
    json tj = json::object();
    const json& T = JsonAt(lj, {"tasks"});
    if (T.is_object()) {
      for (auto it = T.begin(); it != T.end(); ++it) {
        tj[it.key()] = OptJson(ResultNumber(*it, {"score"}));
        if (std::find(tasks.begin(), tasks.end(), it.key()) == tasks.end()) tasks.push_back(it.key());
      }
    }
    lens.push_back({{"length", len}, {"label", LengthLabel(len)}, {"score", OptJson(ResultNumber(lj, {"score"}))},
                    {"tasks", tj}});
  }
  std::sort(tasks.begin(), tasks.end(), NaturalLess);
  return {{"title", part.display_name}, {"lengths", lens}, {"tasks", tasks}};
}

class FractionView : public KindView {
 public:
  VerdictKind Kind() const override { return VerdictKind::kFraction; }
  bool Fractional() const override { return true; }
  std::string StderrMeaning() const override { return "the standard error of the mean per-sample score"; }

  compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const override {
    return compare_internal::ScoredUnits(part, records, {"score", "mean score", {}, {}}, nullptr);
  }

  // The mean score as results.json has it (0..100), the standard error of
  // the records' scores, and `lengths` when it has them.
  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
              ReportSection* out) const override {
    out->metric = "mean score";
    out->score = ResultNumber(p, {"score"});  // 0..100
    std::vector<double> scores;
    for (const auto& s : records) scores.push_back(std::get<FractionVerdict>(s.verdict).score);
    if (scores.size() >= 2) out->stderr_pct = 100 * SampleSd(scores) / std::sqrt(static_cast<double>(scores.size()));
    out->by_length = ByLength(part, p);
  }
};

EVALRUN_REGISTER_VERDICT_KIND(FractionKind);
EVALRUN_REGISTER_KIND_VIEW(FractionView);

}  // namespace
}  // namespace evalrun
