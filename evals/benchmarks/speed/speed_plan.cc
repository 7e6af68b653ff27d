#include "evals/benchmarks/speed/speed_plan.h"

#include <algorithm>

namespace evalrun {
namespace {

bool Wants(const SpeedOptions& o, const std::string& kind) {
  return std::find(o.steps.begin(), o.steps.end(), kind) != o.steps.end();
}

std::string N(int64_t v) { return std::to_string(v); }

// Refuses a step that does not fit the slot context (or, shared, the pool).
void CheckFits(const SpeedLimits& l, SpeedStep* s) {
  if (!s->refused.empty() || l.n_ctx_slot <= 0) return;
  const int64_t need = static_cast<int64_t>(s->target_prompt_tokens) + s->max_tokens;
  if (need > l.n_ctx_slot) {
    s->refused = s->name + ": a prompt of " + N(s->target_prompt_tokens) + " tokens and an answer of " +
                 N(s->max_tokens) + " need " + N(need) + " tokens, more than the " + N(l.n_ctx_slot) +
                 " of one slot (/props n_ctx); refused before any request";
    return;
  }
  // Requests beyond the slots wait in the server's queue: at most `slots` hold the pool at once.
  const int64_t running = std::min<int64_t>(s->concurrency, std::max(1, l.slots));
  if (l.kv_shared && l.kv_pool > 0 && need * running > l.kv_pool)
    s->refused = s->name + ": " + N(running) + " requests of " + N(need) + " tokens need " +
                 N(need * running) + ", more than the " + N(l.kv_pool) +
                 " tokens of the KV cache the slots share" +
                 (l.kv_assumed ? std::string(" (assumed: the server does not say; set server.kv_cache to "
                                             "\"per_slot\" if each slot has its own)")
                               : std::string()) +
                 "; refused before any request";
}

SpeedStep Step(std::string kind, std::string name, const std::vector<std::string>& ids, int64_t target, int max_tokens,
               int rounds) {
  SpeedStep s;
  s.kind = std::move(kind);
  s.name = std::move(name);
  s.prompt_ids = ids;
  s.target_prompt_tokens = static_cast<int>(target);
  s.depth = target;
  s.max_tokens = max_tokens;
  s.rounds = rounds;
  return s;
}

// A ctx depth that is the slot context itself leaves room for the answer.
void ReduceToFit(const SpeedLimits& l, SpeedStep* s) {
  const int64_t n = l.n_ctx_slot;
  if (n <= 0 || s->depth > n || s->depth + s->max_tokens <= n) return;
  const int64_t reduced = (n - s->max_tokens) / 1024 * 1024;
  if (reduced <= 0) return;
  s->target_prompt_tokens = static_cast<int>(reduced);
  s->note = "prompt reduced from " + N(s->depth) + " to " + N(reduced) + " tokens so that it and the " +
            N(s->max_tokens) + "-token answer fit the slot's " + N(n);
}

}  // namespace

std::vector<SpeedStep> PlanSpeedSteps(const SpeedOptions& o, const SpeedLimits& limits) {
  std::vector<SpeedStep> out;
  if (Wants(o, "decode"))
    for (const std::string& id : o.prompt_ids)
      out.push_back(Step("decode", "decode/" + id, {id}, o.decode_prompt_tokens, o.max_tokens, o.runs));
  if (Wants(o, "prefill"))
    for (int64_t d : o.prefill_depths)
      out.push_back(Step("prefill", "prefill/" + N(d), o.prompt_ids, d, o.prefill_max_tokens, o.prefill_runs));
  if (Wants(o, "conc"))
    for (int64_t c : o.conc_levels) {
      SpeedStep s = Step("conc", "conc/C" + N(c), o.prompt_ids, o.decode_prompt_tokens, o.max_tokens, o.conc_rounds);
      s.concurrency = static_cast<int>(c);
      s.depth = 0;
      if (c > limits.slots)
        s.note = N(c) + " requests at once on " + N(limits.slots) + " slots: the " +
                 N(c - limits.slots) + " beyond the slots queue in the server, and their time to first token "
                 "includes that wait (queue time)";
      out.push_back(std::move(s));
    }
  if (Wants(o, "ctx"))
    for (int64_t d : o.ctx_depths) {
      SpeedStep s = Step("ctx", "ctx/" + N(d), o.prompt_ids, d, o.max_tokens, o.ctx_runs);
      ReduceToFit(limits, &s);
      out.push_back(std::move(s));
    }
  for (SpeedStep& s : out) CheckFits(limits, &s);
  return out;
}

nlohmann::json SpeedStepJson(const SpeedStep& s) {
  nlohmann::json j;
  j["name"] = s.name;
  j["kind"] = s.kind;
  j["prompt_ids"] = s.prompt_ids;
  j["target_prompt_tokens"] = s.target_prompt_tokens;
  j["depth"] = s.depth > 0 ? nlohmann::json(s.depth) : nlohmann::json(nullptr);
  j["max_tokens"] = s.max_tokens;
  j["concurrency"] = s.concurrency;
  j["rounds"] = s.rounds;
  j["refused"] = s.refused.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.refused);
  j["note"] = s.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.note);
  return j;
}

}  // namespace evalrun
