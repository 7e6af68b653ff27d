// The verdict kinds, open: each kind is registered from its own file (the
// built-in five from evals/kinds/ and benchmarks' folders, a test's
// from tests/parts/) with what the runner needs of it:
//   - its name (results.json `parts.<name>.kind`),
//   - its codec: its fields in a samples.jsonl line, written and read back
//     (VerdictCodec: Keys, Encode, Decode; sample_codec.h adds the common
//     fields around them),
//   - its headline score (the answer's share: 1/0 or a fraction), whether
//     the answer was cut off, and what a too-long prompt leaves of it,
//   - its aggregation into the part's results object (a part's Aggregate
//     may use it as it is, or add to it).
// What `compare` and `report` need of a kind (its comparison unit and its
// report section) is registered beside it, from the same file, in the layer
// that renders (evals/publish/kind_view.h): this layer never reads those.
//
//   class ChecksKind : public VerdictKindDefinition { ... };
//   EVALRUN_REGISTER_VERDICT_KIND(ChecksKind);
//
// Registration runs during static initialisation (a second kind of one name
// aborts: a programming error); the lookups are for after it, from any
// thread. A kind not registered in this program: FindVerdictKind is null,
// VerdictKindOf aborts naming it (a verdict of it cannot have been made).
#ifndef EVALRUN_EVALS_RUN_VERDICT_KIND_H_
#define EVALRUN_EVALS_RUN_VERDICT_KIND_H_

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/sample_record.h"
#include "evals/run/verdict.h"
#include "evals/run/verdict_codec.h"

namespace evalrun {

// A line's typed reader (names file:line and the field), for kinds' codecs.
using SampleLineReader = codec_internal::LineReader;

class VerdictKindDefinition : public codec_internal::VerdictCodec {
 public:
  virtual VerdictKind Kind() const = 0;
  virtual double Headline(const Verdict& v) const = 0;
  virtual bool CutOff(const Verdict& v) const = 0;
  virtual void MarkTooLong(Verdict* v) const = 0;
  // The part's results object from its records (`failed`: requests that
  // failed for good). By default AggregateByHeadline.
  virtual nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed) const;
  // True: a verdict is a measurement that the stored answer's text does not
  // hold (a logprob request's candidates), so resume keeps a stored one
  // instead of scoring the answer again (rescore_stored.h). By default false.
  virtual bool KeepsStoredVerdict() const { return false; }
  // The `repeat` object (docs/results-schema.md) of a part of this kind run
  // twice, when its repeats are not compared by their headline scores: what
  // moved between `first` and `second` (kind, pairs, flips, flip_rate, text
  // and the kind's own measures; RepeatSummary adds repeats, dir,
  // n_repeat_2, complete_repeat_2). Null (the default): compared by the
  // headline scores (the flip rate and the detectable difference,
  // repeat_summary.h).
  virtual nlohmann::json CompareRepeats(const std::vector<SampleRecord>& first,
                                        const std::vector<SampleRecord>& second) const {
    return nullptr;
  }
};

// A kind whose verdicts are OtherVerdicts holding a T (a kind defined
// outside verdict.h): the typed hooks below instead of the Verdict ones.
template <typename T>
class OtherVerdictKind : public VerdictKindDefinition {
 public:
  virtual void EncodeValue(const T& v, nlohmann::json* line) const = 0;
  virtual Status DecodeValue(const SampleLineReader& in, T* out) const = 0;
  virtual double HeadlineOf(const T& v) const = 0;
  virtual bool CutOffOf(const T& v) const = 0;
  virtual void MarkTooLongOf(T* v) const = 0;

  void Encode(const Verdict& v, nlohmann::json* line) const final { EncodeValue(Value(v), line); }
  Status Decode(const SampleLineReader& in, Verdict* out) const final {
    T t;
    EVALRUN_RETURN_IF_ERROR(DecodeValue(in, &t));
    *out = MakeOtherVerdict(Kind(), std::move(t));
    return Status::Ok();
  }
  double Headline(const Verdict& v) const final { return HeadlineOf(Value(v)); }
  bool CutOff(const Verdict& v) const final { return CutOffOf(Value(v)); }
  void MarkTooLong(Verdict* v) const final {
    if (T* t = OtherVerdictValue<T>(v)) MarkTooLongOf(t);
  }
  // The verdict's value (a verdict of another kind here is a programming
  // error: an empty T stands in).
  static const T& Value(const Verdict& v) {
    static const T kEmpty{};
    const T* t = OtherVerdictValue<T>(v);
    return t ? *t : kEmpty;
  }
};

// Registers `def` (kept for the program's life). Use the macro.
class VerdictKindRegistrar {
 public:
  explicit VerdictKindRegistrar(const VerdictKindDefinition* def);
};

#define EVALRUN_KIND_CONCAT_(a, b) a##b
#define EVALRUN_KIND_CONCAT(a, b) EVALRUN_KIND_CONCAT_(a, b)
// At namespace scope in the kind's .cc: EVALRUN_REGISTER_VERDICT_KIND(MyKind);
#define EVALRUN_REGISTER_VERDICT_KIND(Class)                                                           \
  static const ::evalrun::VerdictKindRegistrar EVALRUN_KIND_CONCAT(evalrun_kind_registrar_, __LINE__) { \
    new Class                                                                                          \
  }

// The kind named `name`, or null.
const VerdictKindDefinition* FindVerdictKind(std::string_view name);
// The kind `kind`; aborts (naming it) when it is not registered.
const VerdictKindDefinition& VerdictKindOf(VerdictKind kind);
// Every registered kind, by name.
std::vector<VerdictKind> RegisteredVerdictKinds();

// The default aggregation: n, score (the mean headline score, 0..1),
// correct (headline 1), cut_off, failed, stderr (binomial when every
// headline is 0 or 1, else the sample standard deviation over sqrt n), and
// the speeds (AddSpeeds).
nlohmann::json AggregateByHeadline(const std::vector<SampleRecord>& records, int failed);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_VERDICT_KIND_H_
