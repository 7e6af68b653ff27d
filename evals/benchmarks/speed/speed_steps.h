// Running the speed part's steps (evals/benchmarks/speed/speed_plan.h): each attempt
// of a step under the load guard (evals/benchmarks/speed/speed_guard.h), its requests
// built to their exact prompt length before they are sent, sent one at a
// time (decode, prefill, ctx) or n at once from n threads released
// together (conc/Cn, never more than the step's concurrency in flight),
// every request's record handed to the sink (speed/samples.jsonl) and its
// body to the request sink (speed/requests.jsonl) as it ends. A disturbed
// attempt is repeated up to guard_tries; every attempt is kept in the
// step's `attempts`, and the step's figures come from its last
// attempt (evals/benchmarks/speed/speed_results.h).
//
// Thread-safety: a SpeedRunner is driven by one thread; a conc round runs
// its requests on threads of its own, each with its own sender, and the
// record sinks are called from them (under the runner's lock).
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_STEPS_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_STEPS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/cancel.h"
#include "evals/benchmarks/speed/speed_guard.h"
#include "evals/benchmarks/speed/speed_options.h"
#include "evals/benchmarks/speed/speed_plan.h"
#include "evals/benchmarks/speed/speed_prompt.h"
#include "evals/benchmarks/speed/speed_request.h"
#include "evals/server/server_config.h"
#include "evals/server/tokenizer.h"

namespace evalrun {

class SpeedRunner {
 public:
  struct Deps {
    SpeedSenderFactory senders;
    std::unique_ptr<Tokenizer> tokenizer;
    ServerConfig server;             // request timeouts
    CancelToken* cancel = nullptr;
    LoadGuard* guard = nullptr;      // may be null: no guard
    std::function<void(const nlohmann::json&)> sink;  // each request's record
    // Each request's exact body (RequestBodyRecord), after it was answered; may be empty.
    std::function<void(const nlohmann::json&)> request_sink;
    std::function<void(const std::string&)> log;      // may be empty
    uint64_t nonce = 0;              // the salts' run nonce
  };
  SpeedRunner(const SpeedOptions& o, Deps deps);

  // One request outside the steps (the cold row, the warm-ups), unguarded
  // by repeats: its record, also handed to the sink. Error: the prompt
  // could not be built.
  Status SendSingle(const std::string& step, const std::string& role, const std::string& prompt_id,
                    int target, int max_tokens, nlohmann::json* record);

  // Every attempt of `step` (a refused step is returned as planned, with no
  // request). *out: the step's object of results.json. Cancelled when the
  // run was interrupted.
  Status RunStep(const SpeedStep& step, nlohmann::json* out);

  // The guard's samples of a stretch run outside the steps (the cold row).
  LoadGuard* guard() { return deps_.guard; }

 private:
  Status Build(const std::string& step, const std::string& role, const std::string& prompt_id, int target,
               int max_tokens, SpeedRequest* out);
  nlohmann::json Send(SpeedSender* sender, const SpeedRequest& req, double round_start);
  // One round of a step; its records appended, *wall_s its wall time.
  Status RunRound(const SpeedStep& step, int attempt, int round, std::vector<nlohmann::json>* records,
                  double* wall_s, int* peak);
  Status RunAttempt(const SpeedStep& step, int attempt, nlohmann::json* attempt_json,
                    std::vector<nlohmann::json>* records, std::vector<double>* walls, int* peak);

  const SpeedOptions& o_;
  Deps deps_;
  std::unique_ptr<SpeedSender> sender_;  // the one-at-a-time steps'
  std::map<std::pair<std::string, int>, ExactPrompt> hints_;
  uint64_t salts_ = 0;
  std::mutex sink_mu_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_STEPS_H_
