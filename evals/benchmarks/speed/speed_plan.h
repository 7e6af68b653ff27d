// The speed part's steps, planned before any request:
//   decode/<id>     for each prompt id: `runs` requests of
//                   decode_prompt_tokens prompt tokens, max_tokens answers;
//   prefill/<depth> `prefill_runs` requests of exactly <depth> prompt
//                   tokens, prefill_max_tokens answers (prompt ids in turn);
//   conc/C<n>       `conc_rounds` rounds of n requests sent at once
//                   (decode prompts, ids in turn);
//   ctx/<depth>     `ctx_runs` requests of exactly <depth> prompt tokens and
//                   max_tokens answers (ids in turn).
// Against the server's limits: a step whose prompt + answer does not fit one
// slot's context (/props n_ctx; with a KV cache shared by the slots, n such
// requests must fit the pool together) is refused, naming the step, before
// any request; a ctx depth that is the slot context itself (depth <= n_ctx
// < depth + max_tokens) is reduced to the largest multiple of 1024 that
// leaves room for the answer (131072 -> 130048 with 512) and says so. A
// conc level above the server's slots is run as asked (a load test of the
// server's queue: the requests beyond the slots wait in the server, and
// their time to first token includes that wait) with a note saying so; with
// a shared KV pool, only the slots' worth of requests run at once and must
// fit it together.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_PLAN_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/benchmarks/speed/speed_options.h"

namespace evalrun {

struct SpeedLimits {
  int64_t n_ctx_slot = 0;   // /props n_ctx (0: unknown, nothing checked)
  int slots = 1;            // requests the server serves at once
  bool kv_shared = false;   // one KV pool for all slots (--kv-unified)
  int64_t kv_pool = 0;      // its size in tokens when shared
  bool kv_assumed = false;  // shared only by assumption (evals/server/kv_capacity.h rule 4)
};

struct SpeedStep {
  std::string name;          // "decode/code", "prefill/2048", "conc/C4", "ctx/16384"
  std::string kind;          // "decode", "prefill", "conc", "ctx"
  std::vector<std::string> prompt_ids;  // used in turn, request by request
  int target_prompt_tokens = 0;
  int max_tokens = 0;
  int concurrency = 1;       // requests at once
  int rounds = 1;            // decode/prefill/ctx: runs (one request a round); conc: rounds
  int64_t depth = 0;         // prefill/ctx: the depth asked (before a reduction)
  std::string refused;       // why it is not run ("" when it is)
  std::string note;          // a reduction, said
};

std::vector<SpeedStep> PlanSpeedSteps(const SpeedOptions& o, const SpeedLimits& limits);

nlohmann::json SpeedStepJson(const SpeedStep& s);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_PLAN_H_
