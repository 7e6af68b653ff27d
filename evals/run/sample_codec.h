// samples.jsonl lines <-> SampleRecord (evals/run/sample_record.h): the edge
// where sample JSON becomes typed and back, in exactly the format
// docs/results-schema.md describes (field names and types as written by
// every earlier evalrun, so old files still read).
//
// A line is the common fields (id, category, prompt_sha256, max_tokens,
// response, reasoning, unclosed_think, finish_reason, prompt_tokens,
// completion_tokens, latency_ms, attempts, attempt_causes, raw_fallback,
// server_parse_error, timings, and too_long with error,
// server_prompt_tokens, server_n_ctx), the verdict's fields, written
// and read by the codec its kind registered (evals/run/verdict_kind.h; the
// built-in kinds' in evals/kinds/ or the benchmark folder that brings one,
// a kind defined elsewhere its own):
//   choice       extracted (letter or null), correct, cut_off, no_answer
//   instruction  instruction_id_list, strict and loose
//                {follow_all_instructions, follow_instruction_list},
//                cut_off, correct (= strict.follow_all_instructions)
//   fraction     score (0..1), cut_off, null
//   logprobs     top_logprobs [{id, token, logprob}], cut_off
//   code         passed, failure, profile, outcomes, failed_test, message,
//                code_sha256, cut_off, other_profile, correct (= passed)
// and every other key: the part's item fields (gold, subdomain, task, ...).
//
// Decoding names the line and the field: "runs/x/<name>/samples.jsonl:12:
// instruction_id_list: expected an array of strings". Common fields a line
// lacks take their defaults (hand-made files); the verdict's main field
// (correct, strict, score, passed) is required.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_RUN_SAMPLE_CODEC_H_
#define EVALRUN_EVALS_RUN_SAMPLE_CODEC_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/sample_record.h"
#include "evals/run/verdict.h"

namespace evalrun {

// Whether any attempt of `log` ended in something other than "ok" (then a
// line carries attempt_causes).
bool AnyFailedAttempt(const std::vector<AttemptRecord>& log);

// The line of `r` (its verdict's codec by the verdict's kind).
nlohmann::json EncodeSample(const SampleRecord& r);

// The common fields alone (no item fields, no verdict): what the answer
// journal (evals/run/answer_journal.h) keeps of an answer not yet scored,
// and its reader (InvalidInput names where and the field).
nlohmann::json EncodeAnswerFields(const SampleRecord& r);
Status DecodeAnswerFields(const nlohmann::json& line, const std::string& where, SampleRecord* out);

// Reads `line` as a sample of `kind`. `where` names it in messages
// ("<path>:<line number>"). InvalidInput names where and the field.
Status DecodeSample(VerdictKind kind, const nlohmann::json& line, const std::string& where, SampleRecord* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_SAMPLE_CODEC_H_
