// The "choice" verdict kind (multiple-choice questions): a letter read
// from the answer, or none, against the gold letter (ChoiceVerdict,
// evals/run/verdict.h). Its codec (extracted, correct, cut_off, no_answer),
// headline (correct: 1 or 0), aggregation (AggregateChoice), compare units
// (pass/fail per question: McNemar) and report section (accuracy, bars by
// category).
#include "evals/base/json_fields.h"
#include "evals/publish/kind_view.h"
#include "evals/run/results.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {
namespace {

using nlohmann::json;

class ChoiceKind : public VerdictKindDefinition {
 public:
  VerdictKind Kind() const override { return VerdictKind::kChoice; }

  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"extracted", "correct", "cut_off", "no_answer"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const ChoiceVerdict& c = std::get<ChoiceVerdict>(v);
    (*line)["extracted"] = c.extracted ? json(std::string(1, *c.extracted)) : json();
    (*line)["cut_off"] = c.cut_off;
    (*line)["no_answer"] = c.no_answer;
    (*line)["correct"] = c.correct;
  }

  Status Decode(const SampleLineReader& in, Verdict* out) const override {
    ChoiceVerdict c;
    const json* x = in.Find("extracted");
    if (x && !x->is_null()) {
      if (!x->is_string() || x->get_ref<const std::string&>().size() != 1)
        return in.Expected("extracted", "a letter or null", x);
      c.extracted = x->get_ref<const std::string&>()[0];
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("correct", &c.correct, true));
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &c.cut_off));
    EVALRUN_RETURN_IF_ERROR(in.Bool("no_answer", &c.no_answer));
    *out = std::move(c);
    return Status::Ok();
  }

  double Headline(const Verdict& v) const override { return std::get<ChoiceVerdict>(v).correct ? 1.0 : 0.0; }
  bool CutOff(const Verdict& v) const override { return std::get<ChoiceVerdict>(v).cut_off; }
  void MarkTooLong(Verdict* v) const override {
    auto& c = std::get<ChoiceVerdict>(*v);
    c.cut_off = false;
    c.no_answer = false;
  }
  json Aggregate(const std::vector<SampleRecord>& records, int failed) const override {
    return AggregateChoice(records, failed);
  }
};

// The letter (or "(no answer)"), "(cut off)" after it.
std::string LetterAnswer(const SampleRecord& r) {
  const auto& c = std::get<ChoiceVerdict>(r.verdict);
  std::string s = c.extracted ? std::string(1, *c.extracted) : "(no answer)";
  return c.cut_off ? s + " (cut off)" : s;
}

class ChoiceView : public KindView {
 public:
  VerdictKind Kind() const override { return VerdictKind::kChoice; }

  compare_internal::PartUnits Units(const FolderPart& part, const std::vector<SampleRecord>& records) const override {
    return compare_internal::ScoredUnits(part, records, {"accuracy", "accuracy", {}, {}}, LetterAnswer);
  }

  // Accuracy and its stderr (results.json, fractions 0..1), and a bar chart
  // of the categories.
  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>&,
              ReportSection* out) const override {
    ReportAccuracy(part, p, 1, out);
  }

  void Browse(const FolderPart& part, const SampleRecord& s, int, json* sample) const override {
    BrowseByLabel(part, s, sample);
    const auto& c = std::get<ChoiceVerdict>(s.verdict);
    (*sample)["extracted"] = c.extracted ? std::string(1, *c.extracted) : "";
    (*sample)["no_answer"] = c.no_answer;
    (*sample)["extra"] = json::array();
  }
};

EVALRUN_REGISTER_VERDICT_KIND(ChoiceKind);
EVALRUN_REGISTER_KIND_VIEW(ChoiceView);

}  // namespace
}  // namespace evalrun
