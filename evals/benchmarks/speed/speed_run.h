// The speed part from start to end: the engine started (a
// managed one; else the running server), its build and flags read from
// /props, whether the first request is cold (a managed engine just
// started, or a server whose /metrics counters are all zero; else why
// not), the steps planned against the slot context and slots
// (evals/benchmarks/speed/speed_plan.h), then the cold request, the warm-ups and each
// step (evals/benchmarks/speed/speed_steps.h), every request's record appended to
// <job>/speed/samples.jsonl, and the part's object of results.json:
//   {parameters, definitions, engine {managed, command, build_info,
//    model_path, n_ctx_slot, total_slots, slots, kv_cache, props},
//    cold {...}, warmups [records], steps [{name, kind, ..., attempts
//    [{attempt, disturbed, why, load_samples}], result, marks}],
//    prompts [{prompt_id, target_prompt_tokens, prompt_sha256,
//    prompt_bytes, step}], refused [names], samples_file, complete, error}
// docs/results-schema.md documents it field by field.
//
// Thread-safety: RunSpeed runs on the caller's thread (the runner's main
// thread: it starts the managed engine); conc rounds use threads of their
// own, and the guard samples on one.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_RUN_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_RUN_H_

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/cancel.h"
#include "evals/base/status.h"
#include "evals/benchmarks/speed/speed_guard.h"
#include "evals/benchmarks/speed/speed_options.h"
#include "evals/benchmarks/speed/speed_request.h"
#include "evals/run/card.h"
#include "evals/run/part.h"
#include "evals/server/engine.h"
#include "evals/server/http.h"
#include "evals/server/tokenizer.h"

namespace evalrun {

// *result is set also when the status is not Ok. Errors: InvalidInput (bad
// options), Unavailable (the engine did not start, /props failed), IoError
// (samples.jsonl), Cancelled (interrupted; what was measured is kept).
// Writes <env.job_dir>/speed/samples.jsonl (the folder made when missing);
// env.log may be empty, env.make_tokenizer too (then the server's own).
Status RunSpeed(const SpeedOptions& o, const ProcedureEnv& env, nlohmann::json* result);

// Whether /metrics text says the server has served nothing: every
// llamacpp:*_total counter is 0. *why says why not (or that it cannot tell).
bool MetricsSayCold(const std::string& metrics_text, std::string* why);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_RUN_H_
