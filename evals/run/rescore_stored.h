// Resume does not take a stored verdict on trust: every answer
// read back from samples.jsonl is scored again with the part's own
// Part::Score, and where the stored verdict differs (a hand edit that
// flipped `correct`, a line from a scorer since fixed) the re-scored one
// counts and a warning names the file, how many differ and the first ids.
// The file itself is left as it is.
//
// Left alone: records of items not asked now, answers the server refused as
// too long (their verdict is "wrong", not a score of an answer), and
// verdicts of a kind that keeps them (the measurement itself, not a score of
// the answer's text: VerdictKindDefinition::KeepsStoredVerdict).
//
// Thread-safety: on the runner's thread, before any request (Part::Score is
// pure).
#ifndef EVALRUN_EVALS_RUN_RESCORE_STORED_H_
#define EVALRUN_EVALS_RUN_RESCORE_STORED_H_

#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "evals/run/part.h"
#include "evals/run/sample_record.h"

namespace evalrun {

// Re-scores `records` (read from `path`) against `prepared`'s items;
// returns how many verdicts differed (and were replaced). Warns on `err`.
int RescoreStored(const Part& part, const PreparedPart& prepared,
                  const std::unordered_map<std::string, int>& index_by_id, const std::string& path,
                  std::vector<SampleRecord>* records, FILE* err);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_RESCORE_STORED_H_
