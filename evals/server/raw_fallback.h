// The raw-text fallback: an answer that llama-server's output parser
// refused (HTTP 500 "The model produced output that does not match the
// expected <format> format", retry_cause.h IsServerParseError) asked again
// on a route that returns the generated text without parsing it.
//
// Measured on llama-server b10470 (--jinja, Qwen3 template, a random-weight
// model; README "Answers the server's parser refuses"): every generation
// route runs the chat parser over the final text (server-queue.cpp calls
// update() on every result, common_chat_peg_parse throws), and the parser
// fails on any invalid UTF-8 in the output, even the content-only parser
// that /completion uses when no chat_parser is given. /completion accepts a
// per-request `chat_parser` (a serialised PEG arena): an arena whose root is
// `epsilon` always succeeds and leaves the reply's `content` (the raw text)
// alone. Streaming does not help: the stream ends with an error event at the
// first token the parser cannot take, and the rest is never generated.
//
// So: POST /apply-template with the chat request's body (the server's own
// template, chat_template_kwargs included) gives the prompt text; POST
// /completion with that prompt, the same sampling (temperature, top_k,
// top_p, seed, cache_prompt), n_predict = max_tokens and the epsilon parser
// gives the raw text. Its leading <think> block (or the reasoning before
// </think> when the template opened the block) is split off as reasoning,
// as a chat reply's would be. reasoning_budget_tokens has no meaning there
// and is not sent.
//
// Thread-safety: runs on the calling thread over the caller's transport.
#ifndef EVALRUN_EVALS_SERVER_RAW_FALLBACK_H_
#define EVALRUN_EVALS_SERVER_RAW_FALLBACK_H_

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "evals/base/status.h"
#include "evals/server/http.h"
#include "evals/server/types.h"

namespace evalrun {

// The per-request parser that accepts any output: {"parsers":[{"type":
// "epsilon"}],"rules":{},"root":0}.
extern const char kAcceptAnythingParser[];

// The body of POST /completion for `prompt` templated as `prompt_text`.
std::string RawCompletionBody(const Prompt& prompt, const std::string& prompt_text);

// Parses /apply-template's 200 reply ({"prompt": "..."}).
Status ParseAppliedTemplate(std::string_view body, std::string* prompt_text);

// Whether the templated prompt ends inside an opened <think> block: the
// model's text then starts with the reasoning, not with the tag.
bool TemplateOpensThink(const std::string& prompt_text);

// What /completion's reply (or its stream's last event) says of the whole
// answer: stop_type "limit" as finish_reason "length" (else "stop"),
// tokens_evaluated and tokens_predicted as the token counts (-1 when
// absent), timings.
void TakeRawCompletionTotals(const nlohmann::json& reply, Completion* out);

// Parses /completion's 200 reply: content (split as above; `prompt_text`
// says whether the template opened a <think> block), stop_type "limit" as
// finish_reason "length" (else "stop"), tokens_evaluated and
// tokens_predicted as the token counts, timings.
Status ParseRawCompletionReply(std::string_view body, const std::string& prompt_text, Completion* out);

// POST /apply-template with the chat request's body (ChatRequestBody,
// openai_wire.h): the prompt text. Unavailable (no reply) or ServerError
// (an error status, a bad body).
Status ApplyTemplate(HttpTransport* transport, const std::string& chat_body, double timeout_s,
                     std::string* prompt_text, int* http_status = nullptr);

// What the fallback got.
struct RawFallbackResult {
  bool ok = false;
  int http_status = 0;  // of the last request (0: no reply)
  std::string error;    // when !ok: which request failed and why
  Completion completion;
};

// Both requests on `transport`, each bounded by `timeout_s`. No retries.
RawFallbackResult AskRawText(HttpTransport* transport, const Prompt& prompt, const std::string& model,
                             double timeout_s);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_RAW_FALLBACK_H_
