// What a part's scorer says about one answer, typed: one struct per kind of
// part (multiple choice, instruction following, a fraction of credit). A
// verdict is made once, by the writer thread as the answer arrives (Part::
// Score, evals/run/part.h), written into samples.jsonl by its codec
// (evals/run/sample_codec.h) and read back from there by everything after:
// the results, `compare`, `report`. Nothing downstream works out a verdict
// again from the text or from field names.
//
// Thread-safety: plain values.
#ifndef EVALRUN_EVALS_RUN_VERDICT_H_
#define EVALRUN_EVALS_RUN_VERDICT_H_

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "evals/server/types.h"

namespace evalrun {

// The kinds, named in results.json (`parts.<name>.kind`) as "choice",
// "instruction", "fraction", "logprobs", "code".
enum class VerdictKind { kChoice, kInstruction, kFraction, kLogprobs, kCode };

const char* VerdictKindName(VerdictKind kind);
// False (and *kind untouched) for a name that is none of them.
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

// Instruction following (IFEval): one verdict per instruction of the
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

// A fraction of credit in [0, 1] (RULER's string match), `null` when the
// answer was empty after the part's post-processing.
struct FractionVerdict {
  double score = 0;
  bool cut_off = false;
  bool null = false;
};

// Not a judgement but a measurement (the probe part, evals/parts/probe.cc):
// the server's top-K candidates for the next token of a fixed text, most
// likely first. Its "score" is the top candidate's probability; what it
// means is read by `compare` against another run (evals/publish/
// compare_probe.h).
struct LogprobsVerdict {
  std::vector<TokenLogprob> top;
  bool cut_off = false;  // never set: one token is always asked
};

// A program graded by running it on tests (LiveCodeBench): passed, or the
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

using Verdict = std::variant<ChoiceVerdict, InstructionVerdict, FractionVerdict, LogprobsVerdict, CodeVerdict>;

VerdictKind KindOf(const Verdict& v);

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
