// The "match" kind's registration (match.h): codec (extracted, correct,
// cut_off, no_answer), headline (1 or 0), aggregation (accuracy 0..1 with
// its binomial stderr, by category), compare units and report section.
#include "evals/kinds/match.h"

#include <map>

#include "evals/base/json_fields.h"
#include "evals/publish/kind_view.h"
#include "evals/run/results.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {

Verdict ScoreMatch(std::optional<std::string> extracted, bool correct, const std::string& finish_reason) {
  MatchVerdict v;
  v.cut_off = finish_reason == "length";
  v.no_answer = !v.cut_off && !extracted;
  v.correct = !v.cut_off && extracted && correct;
  v.extracted = std::move(extracted);
  return MakeOtherVerdict(kMatchKind, std::move(v));
}

namespace {

using nlohmann::json;

class MatchKind : public OtherVerdictKind<MatchVerdict> {
 public:
  VerdictKind Kind() const override { return kMatchKind; }

  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"extracted", "correct", "cut_off", "no_answer"};
    return kKeys;
  }

  void EncodeValue(const MatchVerdict& v, json* line) const override {
    (*line)["extracted"] = v.extracted ? json(*v.extracted) : json();
    (*line)["cut_off"] = v.cut_off;
    (*line)["no_answer"] = v.no_answer;
    (*line)["correct"] = v.correct;
  }

  Status DecodeValue(const SampleLineReader& in, MatchVerdict* out) const override {
    const json* x = in.Find("extracted");
    if (x && !x->is_null()) {
      if (!x->is_string()) return in.Expected("extracted", "a string or null", x);
      out->extracted = x->get<std::string>();
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("correct", &out->correct, true));
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &out->cut_off));
    return in.Bool("no_answer", &out->no_answer);
  }

  double HeadlineOf(const MatchVerdict& v) const override { return v.correct ? 1.0 : 0.0; }
  bool CutOffOf(const MatchVerdict& v) const override { return v.cut_off; }
  void MarkTooLongOf(MatchVerdict* v) const override {
    v->cut_off = false;
    v->no_answer = false;
  }

  // As the choice kind's: score, n, correct, cut_off, no_answer, failed,
  // stderr, categories, speeds.
  json Aggregate(const std::vector<SampleRecord>& records, int failed) const override {
    int n = 0, correct = 0, cut = 0, none = 0;
    std::map<std::string, std::pair<int, int>> cats;
    for (const auto& s : records) {
      const MatchVerdict& v = Value(s.verdict);
      ++n;
      correct += v.correct;
      cut += v.cut_off;
      none += v.no_answer;
      auto& c = cats[s.Text("category")];
      ++c.first;
      c.second += v.correct;
    }
    const double p = n ? static_cast<double>(correct) / n : 0.0;
    json r = {{"score", Round(p, 6)}, {"n", n}, {"correct", correct}, {"cut_off", cut}, {"no_answer", none},
              {"failed", failed}, {"stderr", Round(BinomialStderr(p, n), 6)}};
    r["categories"] = CategoryScores(cats);
    AddSpeeds(records, &r);
    return r;
  }
};

std::string TextAnswer(const SampleRecord& r) {
  const MatchVerdict* v = OtherVerdictValue<MatchVerdict>(r.verdict);
  std::string s = v && v->extracted ? *v->extracted : "(no answer)";
  return v && v->cut_off ? s + " (cut off)" : s;
}

class MatchView : public KindView {
 public:
  VerdictKind Kind() const override { return kMatchKind; }

  compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const override {
    return compare_internal::ScoredUnits(part, records, {"accuracy", "accuracy", {}, {}}, TextAnswer);
  }

  // Accuracy and its stderr (results.json: 0..1, shown as percent), and a
  // bar chart of the categories when there are two or more.
  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>&,
              ReportSection* out) const override {
    ReportAccuracy(part, p, 2, out);
  }

  void Browse(const FolderPart& part, const SampleRecord& s, int, json* sample) const override {
    BrowseByLabel(part, s, sample);
    const MatchVerdict* v = OtherVerdictValue<MatchVerdict>(s.verdict);
    (*sample)["extracted"] = v && v->extracted ? *v->extracted : "";
    (*sample)["no_answer"] = v && v->no_answer;
    (*sample)["extra"] = json::array();
  }
};

EVALRUN_REGISTER_VERDICT_KIND(MatchKind);
EVALRUN_REGISTER_KIND_VIEW(MatchView);

}  // namespace
}  // namespace evalrun
