// The speed part's settings (parts.speed in the card, evals/benchmarks/speed/speed.cc
// declares the keys) as one plain value, with its defaults, those of the
// Python tool's `--parts decode,prefill,conc,ctx --prefill-depths
// 2048,8192,32768 --prompt-ids code,prose --runs 2 --max-tokens 512
// --warmups 1 --prefill-runs 3 --conc-levels 1,2,4,8 --conc-rounds 2
// --ctx-depths 16384,32768,65536,131072 --ctx-runs 2 --no-cache-prompt`, and
// the load guard at 0.5 s, two disturbed samples in a row, 3 tries.
//
// Thread-safety: a plain value.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_OPTIONS_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/card.h"
#include "evals/server/types.h"

namespace evalrun {

struct SpeedOptions {
  std::vector<std::string> steps = {"decode", "prefill", "conc", "ctx"};  // which kinds run
  std::vector<std::string> prompt_ids = {"code", "prose"};
  int decode_prompt_tokens = 512;  // the exact prompt length of decode and conc requests
  int runs = 2;                    // measured requests per decode prompt
  int warmups = 1;                 // unmeasured requests after the cold one
  int max_tokens = 512;            // every answer (ignore_eos): decode, conc, ctx
  std::vector<int64_t> prefill_depths = {2048, 8192, 32768};
  int prefill_runs = 3;
  int prefill_max_tokens = 1;      // the answer of a prefill request
  std::vector<int64_t> conc_levels = {1, 2, 4, 8};
  int conc_rounds = 2;
  std::vector<int64_t> ctx_depths = {16384, 32768, 65536, 131072};
  int ctx_runs = 2;
  // The load guard (evals/benchmarks/speed/speed_guard.h).
  double guard_interval_s = 0.5;
  int guard_samples = 2;           // disturbed samples in a row that disturb a step
  int guard_tries = 3;             // attempts of a step at most
  double guard_threshold_pct = 50; // a foreign process above this (100 = one core) disturbs a sample
  std::vector<std::string> guard_ignore;  // process names (comm) never counted as foreign
  GenParams params;                // sampling and thinking of the part; cache_prompt is always false
  int64_t seed = 42;
};

// From the card's parts.speed (`settings` may be null: the defaults) and the
// part's request settings (null: the card's).
SpeedOptions SpeedOptionsFromCard(const Card& card, const PartSettings* settings,
                                  const RequestSettings* request = nullptr);

// Every parameter, for results.json's "parameters".
nlohmann::json SpeedOptionsJson(const SpeedOptions& o);

// InvalidInput naming parts.speed.<key> for values the keys cannot express
// alone (an unknown step kind or prompt id).
Status CheckSpeedOptions(const SpeedOptions& o);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_OPTIONS_H_
