// The `fit` ladder: the largest context that loads and answers (the part
// itself, its card keys and registration, is evals/benchmarks/fit/fit.cc).
//
// For each size in parts.fit.contexts (ascending), the engine is started
// with that total context, one prompt filling `fill` of it is sent, and an
// answer within `max_tokens` is required; then the engine is stopped. The
// result is the largest size that loaded and answered, with every step
// recorded (load time, prompt tokens, prefill and decode speed as the
// server reports them, the GPU memory peak, the error).
//
// The prompt: a haystack (the RULER essays, <data-dir>/ruler/
// PaulGrahamEssays.json, whitespace collapsed, repeated when too short)
// with one needle at half depth, "The special magic number is N." (N: a
// 7-digit number drawn from `seed` and the size), and the question "What is
// the special magic number mentioned in the provided text?". It is sized
// with the server's own tokenizer (Tokenizer::CountChat; by default POST
// /apply-template with the chat request's messages and chat_template_kwargs,
// then POST /tokenize of that prompt with add_special true, which is what
// llama-server's usage.prompt_tokens counts).
// The prompt fills the context the slot really got: GET /props
// default_generation_settings.n_ctx after the start (llama-server caps a
// slot at the model's training context). When that is less than
// context / slots the step is recorded as `capped` with both figures
// (context asked, n_ctx_slot given) and sized to n_ctx_slot; without /props
// the step is sized to context / slots.
// The haystack is cut at a word boundary so that the count is at most
// floor(fill * that context) and within max(16, target / 200) tokens of it
// (secant steps, 2-4 counts in practice, at most 16). The engine gets
// {slots} = `slots` (1: the one request has the whole context).
//
// Rules (document in cards/README.md):
//   * Climbing stops after the first size that fails to load (a larger one
//     would not load either); `continue_after_load_failure` goes on.
//     A size that loads but does not answer (HTTP 400, a crash during the
//     prefill, a timeout) does not stop the climb.
//   * `answered`: HTTP 200 with a parsed reply (usage and timings kept),
//     from an engine still running after it (evals/benchmarks/fit/fit_engine_end.h:
//     one that died during the request makes the step failed, with
//     `engine_exit` and `log_tail`); a reset, a refusal or any other
//     outcome is the step's `error`;
//     `correct`: the needle's number appears in the answer's content.
//   * `largest`: the largest total context that loaded and answered (a
//     capped step counts at n_ctx_slot x slots, not at the size asked; null
//     if none);
//     `largest_correct`: the same, also answering correctly.
//   * With an external engine (no server.command) nothing is restarted:
//     every size is tried on the running server, and sizes above its
//     per-slot context answer HTTP 400.
//   * The request is sent once (`retries`, default 0): a failure is the
//     measurement.
//
// Thread-safety: RunFit runs on the caller's thread (call it from the
// runner's main thread: the engine's child asks for SIGTERM when the thread
// that started it exits) and samples the GPU on one thread of its own.
//
// Thread-safety: runs on the caller's thread (the fit part's Run); it owns the
// engine it starts and stops.
#ifndef EVALRUN_EVALS_BENCHMARKS_FIT_FIT_LADDER_H_
#define EVALRUN_EVALS_BENCHMARKS_FIT_FIT_LADDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/clock.h"
#include "evals/base/cancel.h"
#include "evals/run/card.h"
#include "evals/server/engine.h"
#include "evals/server/http.h"
#include "evals/base/status.h"
#include "evals/server/tokenizer.h"
#include "evals/server/types.h"

namespace evalrun {

struct FitOptions {
  std::vector<int64_t> contexts;  // empty: DefaultFitContexts(); sorted and deduplicated by RunFit
  double fill = 0.95;             // (0, 1]
  int max_tokens = 96;
  int slots = 1;                  // {slots} of the engine command
  ServerConfig server;            // path prefix, model, request timeouts
  GenParams params;               // sampling and thinking; max_tokens is set from above
  // The haystack text (LoadFitHaystack). Empty: a plain filler sentence
  // repeated ("The grass is green. The sky is blue. ...").
  std::string haystack;
  int64_t seed = 42;              // the needle numbers
  int retries = 0;                // further attempts of the one request
  bool continue_after_load_failure = false;
  // The GPU memory in use now (MiB), or nullopt when it cannot be read.
  // Called every `gpu_sample_interval_s` on a thread of RunFit's own, from
  // just before the engine's start until the answer, and once more on the
  // caller's thread after that thread ended: never two calls at once, but
  // not always on the same thread. Empty: gpu_mem_peak_mib is null.
  std::function<std::optional<double>()> gpu_mem_mib;
  double gpu_sample_interval_s = 0.5;
  // Makes the token counter for one step from a transport to the engine.
  // Empty: llama-server's /apply-template + /tokenize, passing
  // params.enable_thinking as chat_template_kwargs (MakeServerTokenizer of
  // evals/server/server_tokenizer.h also fits, and speaks vLLM's /tokenize).
  std::function<std::unique_ptr<Tokenizer>(std::unique_ptr<HttpTransport>)> make_tokenizer;
  // Progress lines for the user ("fit: 16384: loaded in 3.1 s, ..."); may be empty.
  std::function<void(const std::string&)> log;
  // Times each step's load (load_s); null: RealClock::Default().
  Clock* clock = nullptr;
};

// 4096, 8192, ..., 131072.
std::vector<int64_t> DefaultFitContexts();

// FitOptions from the card: parts.fit (contexts, fill, max_tokens), server,
// sampling and the thinking switch. `settings` may be null (the defaults).
// `request`: the fit part's request settings (null: the card's defaults).
FitOptions FitOptionsFromCard(const Card& card, const PartSettings* settings,
                              const RequestSettings* request = nullptr);

// Reads <data_dir>/ruler/PaulGrahamEssays.json ({"text": ...}) and collapses
// runs of whitespace to one space. NotFound / InvalidInput name the file.
Status LoadFitHaystack(const std::string& data_dir, std::string* text);

// Runs the ladder. `transports` makes transports to the engine's origin (a
// fresh one per step: each start is a new server). On return *result holds
// {largest, largest_correct, steps[], contexts, fill, max_tokens, slots,
// engine: "managed"|"external", complete} also when the status is not Ok.
// Each step: {context, loaded, load_s (managed: seconds to ready or to the
// failure), capped, n_ctx_slot, effective_context (the slot context the
// prompt was sized to), answered, answer, finish_reason,
// expected, correct, prompt_tokens, prompt_tokens_planned, target_tokens,
// completion_tokens, n_ctx_slot, prompt_per_second, predicted_per_second,
// latency_ms, gpu_mem_peak_mib, http_status, tokenizer_calls, error,
// stop_error, engine_exit, log_tail}; absent
// values are null. `not_tried`: the sizes skipped after a load failure.
// Failures of a step are recorded in it, not returned. Returns:
//   InvalidInput  bad options (a context < 1, fill outside (0, 1]);
//   Cancelled     `cancel` fired (the engine is stopped; complete = false);
//   Internal      the engine could not be stopped (nothing more is tried).
Status RunFit(const FitOptions& opts, Engine* engine, const TransportFactory& transports,
              CancelToken* cancel, nlohmann::json* result);

// The pieces, for tests.
namespace fit_internal {

// The needle's number for a size: 7 digits, from `seed` and `context`.
int64_t NeedleValue(int64_t seed, int64_t context);

// The user message: instruction, the first `chars` characters of `source`
// cut back to a word boundary with the needle sentence inserted at the
// sentence boundary nearest half of it, and the question.
std::string BuildMessage(const std::string& source, size_t chars, int64_t needle);

}  // namespace fit_internal

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_FIT_FIT_LADDER_H_
