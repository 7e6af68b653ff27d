// A logprob request's candidates (Completion::top_logprobs,
// evals/server/types.h) in a JSON line, as samples.jsonl and the answer
// journal (answer_journal.h) hold them: "top_logprobs": [{id (null when the
// server gave none), token, logprob}], most likely first. Shared by the
// journal and by the codec of the kind whose verdicts they are (the
// logprobs kind, in its benchmark's folder), so that neither reads
// the other's.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_RUN_TOP_LOGPROBS_CODEC_H_
#define EVALRUN_EVALS_RUN_TOP_LOGPROBS_CODEC_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/verdict_codec.h"
#include "evals/server/types.h"

namespace evalrun {

// The array above.
nlohmann::json EncodeTopLogprobs(const std::vector<TokenLogprob>& top);

// The line's "top_logprobs" into *out: InvalidInput naming the line and
// the field when it is missing or not an array, a candidate is not an
// object, an id is not an integer >= 0 (or null), a token not a string, a
// logprob not a number <= 0, or the candidates are not in descending order
// of logprob.
Status DecodeTopLogprobs(const codec_internal::LineReader& in, std::vector<TokenLogprob>* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_TOP_LOGPROBS_CODEC_H_
