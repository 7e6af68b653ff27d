// The "match" verdict kind, shared by any benchmark: a text answer read from
// the response (a number, an exact string, what a regex chain found), or
// none, judged right or wrong against the item's gold. Its score is 0..1 in
// samples.jsonl and in results.json (accuracy, as the choice kind's); a
// cut-off answer is wrong and counted apart, no answer is wrong, never a
// guess. Registered from match.cc (codec, aggregation, compare units: pass/
// fail with McNemar, the report's accuracy with its stderr and by category).
//
// Thread-safety: plain values.
#ifndef EVALRUN_EVALS_KINDS_MATCH_H_
#define EVALRUN_EVALS_KINDS_MATCH_H_

#include <optional>
#include <string>

#include "evals/run/verdict.h"

namespace evalrun {

inline constexpr VerdictKind kMatchKind{"match"};

struct MatchVerdict {
  std::optional<std::string> extracted;  // what was read from the answer
  bool correct = false;
  bool cut_off = false;
  bool no_answer = false;
};

// The verdict of `extracted` (nullopt: nothing read), judged `correct` by
// the caller; finish_reason "length" is cut off (then wrong whatever the text).
Verdict ScoreMatch(std::optional<std::string> extracted, bool correct, const std::string& finish_reason);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_KINDS_MATCH_H_
