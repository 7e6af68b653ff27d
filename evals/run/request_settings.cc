#include "evals/run/request_settings.h"

#include "evals/base/json_fields.h"

namespace evalrun {
namespace {

Status ParseSampling(const nlohmann::json& obj, const std::string& src, const std::string& path, SamplingConfig* s) {
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(obj, src, path));
  JsonFields f(obj, src, path);
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("temperature", 0, 100, &s->temperature));
  EVALRUN_RETURN_IF_ERROR(f.IntIn("top_k", 0, JsonFields::kNoLimit, &s->top_k));
  EVALRUN_RETURN_IF_ERROR(f.DoubleIn("top_p", 0, 1, &s->top_p, true));
  // llama.cpp takes a seed of -1 or 0xFFFFFFFF as "random": never sent.
  EVALRUN_RETURN_IF_ERROR(f.IntIn("seed", 0, 4294967294LL, &s->seed));
  return f.Finish();
}

// true/false or "on"/"off".
Status ParseThinking(const nlohmann::json& v, const JsonFields& f, bool* out) {
  if (v.is_boolean()) *out = v.get<bool>();
  else if (v.is_string() && (v == "on" || v == "off")) *out = v == "on";
  else return f.Error(kThinkingKey, "expected true, false, \"on\" or \"off\", got " + DescribeJsonValue(v));
  return Status::Ok();
}

std::string Joined(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

}  // namespace

const std::vector<std::string>& RequestSettingKeys() {
  static const std::vector<std::string> kKeys = {"sampling", kThinkingKey, "reasoning_budget", "cache_prompt"};
  return kKeys;
}

void RequestSettings::ApplyTo(GenParams* p) const {
  p->temperature = sampling.temperature;
  p->top_k = sampling.top_k;
  p->top_p = sampling.top_p;
  p->seed = sampling.seed;
  p->enable_thinking = thinking;
  p->reasoning_budget.reset();
  if (thinking && reasoning_budget) {
    p->reasoning_budget = *reasoning_budget;
    p->max_tokens += *reasoning_budget;
  }
  p->cache_prompt = cache_prompt;
}

nlohmann::json RequestSettings::ToJson() const {
  return {{"sampling",
           {{"temperature", sampling.temperature}, {"top_k", sampling.top_k}, {"top_p", sampling.top_p},
            {"seed", sampling.seed}}},
          {kThinkingKey, thinking ? "on" : "off"},
          {"reasoning_budget", reasoning_budget ? nlohmann::json(*reasoning_budget) : nlohmann::json()},
          {"cache_prompt", cache_prompt}};
}

Status ParseRequestSettings(const nlohmann::json& obj, const std::string& source, const std::string& path,
                            RequestSettings* out) {
  JsonFields f(obj, source, path);
  const nlohmann::json* sampling = nullptr;
  EVALRUN_RETURN_IF_ERROR(f.Object("sampling", &sampling));
  if (sampling) EVALRUN_RETURN_IF_ERROR(ParseSampling(*sampling, source, Joined(path, "sampling"), &out->sampling));
  if (f.Has(kThinkingKey)) EVALRUN_RETURN_IF_ERROR(ParseThinking(obj[kThinkingKey], f, &out->thinking));
  if (f.Has("reasoning_budget")) {
    int budget = 0;
    EVALRUN_RETURN_IF_ERROR(f.IntIn("reasoning_budget", 1, 10'000'000, &budget));
    out->reasoning_budget = budget;
  }
  EVALRUN_RETURN_IF_ERROR(f.Bool("cache_prompt", &out->cache_prompt));
  // A budget given here for thinking that is off would be dropped silently;
  // one inherited by a part that switches thinking off does not apply.
  if (out->reasoning_budget && !out->thinking) {
    if (f.Has("reasoning_budget"))
      return f.Error("reasoning_budget", "a reasoning budget needs thinking on (\"thinking\": \"on\")");
    out->reasoning_budget.reset();
  }
  return Status::Ok();
}

}  // namespace evalrun
