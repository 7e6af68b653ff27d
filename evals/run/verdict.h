// What a part's scorer says about one answer. A verdict is of one kind, and
// the kinds are open: each is registered from its own file with everything
// it brings (evals/run/verdict_kind.h: its codec, headline score and
// cut-off, aggregation; evals/publish/kind_view.h: its `compare` units and
// its report section). The five built-in kinds keep typed structs here,
// one alternative of `Verdict` each (a scorer returns them typed, and the
// parts read them typed); a kind defined elsewhere (a test's, a plugin's)
// travels as an `OtherVerdict`: its kind's name and a type-erased value
// that only that kind's own code reads (OtherVerdictValue<T>).
//
// A verdict is made once, by the scoring stage (Part::Score, evals/run/
// part.h), written into samples.jsonl by its kind's codec (evals/run/
// sample_codec.h) and read back from there by everything after: the
// results, `compare`, `report`. Nothing downstream works out a verdict
// again from the text or from field names.
//
// Thread-safety: plain values (an OtherVerdict shares its immutable value).
#ifndef EVALRUN_EVALS_RUN_VERDICT_H_
#define EVALRUN_EVALS_RUN_VERDICT_H_

#include <any>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "evals/server/types.h"

namespace evalrun {

// A verdict kind: its name, as results.json records it (`parts.<name>.
// kind`) and as its registration (verdict_kind.h) says it. Compared by
// name. The built-in kinds are the constants below; a kind registered
// elsewhere makes its own (`VerdictKind{"checks"}`; the name must outlive
// the program: a literal).
class VerdictKind {
 public:
  constexpr explicit VerdictKind(std::string_view name) : name_(name) {}
  constexpr std::string_view name() const { return name_; }
  friend constexpr bool operator==(VerdictKind a, VerdictKind b) { return a.name_ == b.name_; }
  friend constexpr bool operator!=(VerdictKind a, VerdictKind b) { return !(a == b); }

  static const VerdictKind kChoice, kInstruction, kFraction, kLogprobs, kCode;

 private:
  std::string_view name_;
};
inline constexpr VerdictKind VerdictKind::kChoice{"choice"};
inline constexpr VerdictKind VerdictKind::kInstruction{"instruction"};
inline constexpr VerdictKind VerdictKind::kFraction{"fraction"};
inline constexpr VerdictKind VerdictKind::kLogprobs{"logprobs"};
inline constexpr VerdictKind VerdictKind::kCode{"code"};

std::string VerdictKindName(VerdictKind kind);
// False (and *kind untouched) for a name no registered kind has.
bool VerdictKindByName(std::string_view name, VerdictKind* kind);

// Multiple choice: a letter read from the answer (or none), against the
// gold letter. A cut-off answer (finish_reason "length") is wrong whatever
// its text; no letter is "no answer" (wrong, never a random guess).
struct ChoiceVerdict {
  std::optional<char> extracted;
  bool correct = false;
  bool cut_off = false;
  bool no_answer = false;
};

// Instruction following: one verdict per instruction of the
// prompt, strict and loose, and whether all were followed.
struct InstructionLevel {
  bool all = false;                  // follow_all_instructions
  std::vector<bool> per_instruction; // follow_instruction_list, one per id
};
struct InstructionVerdict {
  std::vector<std::string> instruction_ids;  // instruction_id_list
  InstructionLevel strict;
  // Written always; a line read without one (older hand-made files) has
  // none, and the loose metrics are then left out by `compare`.
  std::optional<InstructionLevel> loose;
  bool cut_off = false;
};

// A fraction of credit in [0, 1] (a string match's, say), `null` when the
// answer was empty after the part's post-processing.
struct FractionVerdict {
  double score = 0;
  bool cut_off = false;
  bool null = false;
};

// Not a judgement but a measurement (next-token probabilities, a kind of a
// benchmark's own):
// the server's top-K candidates for the next token of a fixed text, most
// likely first. Its "score" is the top candidate's probability; what it
// means is read by `compare` against another run (the kind's view,
// beside the kind in its benchmark's folder).
struct LogprobsVerdict {
  std::vector<TokenLogprob> top;
  bool cut_off = false;  // never set: one token is always asked
};

// A program graded by running it on tests (code generation): passed, or the
// first failure ("wrong_answer", "time_limit", "runtime_error",
// "compile_error", "no_code", "cut_off"), one outcome per test run (the
// grader's codes: 1 passed, <= 0 failed), the code's sha256. `other`: the
// verdict of a second grading profile where it differs from this one's.
struct CodeOutcome {
  std::string profile;  // "official", "fixed"
  bool passed = false;
  std::string failure = "none";
};
struct CodeVerdict {
  bool passed = false;
  std::string failure = "none";
  std::string profile;             // the profile `passed` is under
  std::vector<int> outcomes;
  int failed_test = -1;            // the first failing test (-1: none, or not known)
  std::string message;             // the first failure in words
  std::string code_sha256;
  bool cut_off = false;            // the answer ended at max_tokens (passed or not)
  std::optional<CodeOutcome> other;
};

// A verdict of a kind registered outside this header (verdict_kind.h):
// `value` holds that kind's own struct, read with OtherVerdictValue<T>.
struct OtherVerdict {
  VerdictKind kind{""};
  std::any value;
};

using Verdict =
    std::variant<ChoiceVerdict, InstructionVerdict, FractionVerdict, LogprobsVerdict, CodeVerdict, OtherVerdict>;

// `value` as an OtherVerdict of `kind`.
template <typename T>
Verdict MakeOtherVerdict(VerdictKind kind, T value) {
  return OtherVerdict{kind, std::any(std::move(value))};
}
// The value of an OtherVerdict holding a T, else null.
template <typename T>
const T* OtherVerdictValue(const Verdict& v) {
  const auto* o = std::get_if<OtherVerdict>(&v);
  return o ? std::any_cast<T>(&o->value) : nullptr;
}
template <typename T>
T* OtherVerdictValue(Verdict* v) {
  auto* o = std::get_if<OtherVerdict>(v);
  return o ? std::any_cast<T>(&o->value) : nullptr;
}

VerdictKind KindOf(const Verdict& v);

// These ask the verdict's kind (its registration, verdict_kind.h); a kind
// not registered in this program is a programming error (abort, naming it).
// The answer's share of the headline score: 1 or 0 (choice: correct;
// instruction: strict, all followed; code: passed), the fraction, or
// (logprobs) the top candidate's probability.
double HeadlineScore(const Verdict& v);

bool IsCutOff(const Verdict& v);

// A prompt the server refused as longer than its context: wrong, and
// neither cut off, nor "no answer", nor null (it is counted apart).
void MarkTooLong(Verdict* v);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_VERDICT_H_
