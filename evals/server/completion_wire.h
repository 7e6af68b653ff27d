// The wire format of a raw completion with next-token logprobs (a
// LogprobRequest, evals/server/types.h): the request body out, the reply in.
// Pure functions, no I/O; shapes checked against the real llama-server
// b10470 (its replies captured in tests/fixtures/llama-server/) and OpenAI's legacy completions
// format (vLLM, SGLang).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_SERVER_COMPLETION_WIRE_H_
#define EVALRUN_EVALS_SERVER_COMPLETION_WIRE_H_

#include <string>
#include <string_view>

#include "evals/base/status.h"
#include "evals/server/types.h"

namespace evalrun {

// The path the request goes to: "/completion" (llama-server's own, at the
// origin) or "<prefix>/completions" (OpenAI's, under the base URL's path).
std::string CompletionPath(const LogprobRequest& req, const std::string& path_prefix);

// The body: the prompt (messages[0].content, raw), one token, temperature
// 0, the card's seed, `cache_prompt: false` (llama-server reuses a cached
// prefix otherwise, which moved a logprob by 1e-7 between two identical
// requests on b10470), and the candidates asked as `n_probs` (/completion)
// or `logprobs` (/v1/completions). `model` is sent when not empty.
std::string CompletionRequestBody(const Prompt& prompt, const std::string& model);

// Parses a 200 reply. The candidates are read from, in this order:
//   /completion       completion_probabilities[0].top_logprobs[] {id, token, logprob}
//   llama-server's    choices[0].logprobs.content[0].top_logprobs[] {id, token, logprob}
//   /v1/completions
//   OpenAI legacy     choices[0].logprobs.top_logprobs[0] {token: logprob}
//   (vLLM, SGLang)
// and sorted most likely first. The prompt's token count is usage.
// prompt_tokens, else tokens_evaluated. A reply without candidates (the
// server ignored the request's logprobs) is a ServerError naming what is
// missing, as is one that is not JSON or carries an error object.
Status ParseCompletionReply(std::string_view body, Completion* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_COMPLETION_WIRE_H_
