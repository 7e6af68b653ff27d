#include "evals/benchmarks/speed/speed_options.h"

#include <algorithm>

#include "evals/run/request_settings.h"

namespace evalrun {

SpeedOptions SpeedOptionsFromCard(const Card& card, const PartSettings* settings, const RequestSettings* request) {
  SpeedOptions o;
  if (settings) {
    o.steps = settings->NameList("steps");
    o.prompt_ids = settings->NameList("prompt_ids");
    o.decode_prompt_tokens = static_cast<int>(settings->Int("decode_prompt_tokens", o.decode_prompt_tokens));
    o.runs = static_cast<int>(settings->Int("runs", o.runs));
    o.warmups = static_cast<int>(settings->Int("warmups", o.warmups));
    o.max_tokens = static_cast<int>(settings->Int("max_tokens", o.max_tokens));
    o.prefill_depths = settings->IntList("prefill_depths");
    o.prefill_runs = static_cast<int>(settings->Int("prefill_runs", o.prefill_runs));
    o.conc_levels = settings->IntList("conc_levels");
    o.conc_rounds = static_cast<int>(settings->Int("conc_rounds", o.conc_rounds));
    o.ctx_depths = settings->IntList("ctx_depths");
    o.ctx_runs = static_cast<int>(settings->Int("ctx_runs", o.ctx_runs));
    o.guard_interval_s = settings->Number("guard_interval_s", o.guard_interval_s);
    o.guard_samples = static_cast<int>(settings->Int("guard_samples", o.guard_samples));
    o.guard_tries = static_cast<int>(settings->Int("guard_tries", o.guard_tries));
    o.guard_threshold_pct = settings->Number("guard_threshold_pct", o.guard_threshold_pct);
    if (settings->Has("guard_ignore")) o.guard_ignore = settings->NameList("guard_ignore");
  }
  for (auto* list : {&o.prefill_depths, &o.conc_levels, &o.ctx_depths}) std::sort(list->begin(), list->end());
  const RequestSettings& req = request ? *request : card.request;
  req.ApplyTo(&o.params);
  o.params.max_tokens = 0;       // set per request
  o.params.cache_prompt = false; // always: every request computes its whole prompt
  o.seed = req.sampling.seed;
  return o;
}

nlohmann::json SpeedOptionsJson(const SpeedOptions& o) {
  nlohmann::json j;
  j["steps"] = o.steps;
  j["prompt_ids"] = o.prompt_ids;
  j["decode_prompt_tokens"] = o.decode_prompt_tokens;
  j["runs"] = o.runs;
  j["warmups"] = o.warmups;
  j["max_tokens"] = o.max_tokens;
  j["prefill_depths"] = o.prefill_depths;
  j["prefill_runs"] = o.prefill_runs;
  j["prefill_max_tokens"] = o.prefill_max_tokens;
  j["conc_levels"] = o.conc_levels;
  j["conc_rounds"] = o.conc_rounds;
  j["ctx_depths"] = o.ctx_depths;
  j["ctx_runs"] = o.ctx_runs;
  j["guard"] = {{"interval_s", o.guard_interval_s},
                {"samples_in_a_row", o.guard_samples},
                {"tries", o.guard_tries},
                {"threshold_pct", o.guard_threshold_pct},
                {"ignore", o.guard_ignore}};
  j["cache_prompt"] = false;
  j["ignore_eos"] = true;
  j["stream"] = true;
  j["seed"] = o.seed;
  return j;
}

Status CheckSpeedOptions(const SpeedOptions& o) {
  if (o.guard_samples < 1 || o.guard_tries < 1)
    return Status::InvalidInput("parts.speed: guard_samples and guard_tries must be at least 1");
  if (o.steps.empty()) return Status::InvalidInput("parts.speed.steps: expected at least one step kind");
  if (o.prompt_ids.empty()) return Status::InvalidInput("parts.speed.prompt_ids: expected at least one prompt id");
  return Status::Ok();
}

}  // namespace evalrun
