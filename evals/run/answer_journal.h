// <job>/<part>/answers.jsonl: the answer journal. Every answer is appended
// here, and fsynced, as it arrives, before it is scored; the scoring stage
// (evals/run/scoring_stage.h) then writes the scored record to
// samples.jsonl. So an answer is on disk even when its scorer takes
// seconds, and a run killed during scoring resumes by scoring what the
// journal holds and samples.jsonl lacks, asking nothing again. When a
// part's run ends with every answer scored, the journal is removed (its
// answers are all in samples.jsonl), so a reasoning trace is kept once.
//
// A line is an answer not yet scored: samples.jsonl's common fields (id,
// response, reasoning, finish_reason, tokens, timings, latency, attempts,
// endpoint, too_long; evals/run/sample_codec.h EncodeAnswerFields) and, for
// a logprob request, top_logprobs. The item's own fields and the verdict
// are not in it: they come from the item when it is scored.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_RUN_ANSWER_JOURNAL_H_
#define EVALRUN_EVALS_RUN_ANSWER_JOURNAL_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/sample_record.h"
#include "evals/server/types.h"

namespace evalrun {

// An answer before its verdict: the record without verdict and item fields,
// and the completion the part's Score reads.
struct UnscoredAnswer {
  SampleRecord record;
  Completion completion;
};

// The completion a part's Score reads, from a record's answer fields (what
// a journal line or a stored sample keeps of it; top_logprobs aside).
Completion CompletionOf(const SampleRecord& r);

// The journal's file name in a part's folder.
inline constexpr const char* kAnswerJournal = "answers.jsonl";

nlohmann::json EncodeAnswer(const UnscoredAnswer& a);
// InvalidInput names `where` ("<path>:<line>") and the field.
Status DecodeAnswer(const nlohmann::json& line, const std::string& where, UnscoredAnswer* out);

// Reads <dir>/answers.jsonl (missing: none). A torn last line (a crash
// mid-write) is cut off as samples.jsonl's is, *dropped_torn says so; that
// question is asked again.
Status LoadAnswerJournal(const std::string& dir, std::vector<UnscoredAnswer>* out, bool* dropped_torn);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_ANSWER_JOURNAL_H_
