#include "evals/run/results.h"

#include <cmath>
#include <map>

namespace evalrun {

nlohmann::json CommonSampleFields(const Item& item, const CallResult& r) {
  const Completion& c = r.completion;
  nlohmann::json s;
  s["id"] = item.id;
  s["category"] = item.category;
  s["prompt_sha256"] = item.prompt_sha256;
  s["max_tokens"] = item.prompt.params.max_tokens;
  s["response"] = c.content;
  s["reasoning"] = c.reasoning;
  if (c.unclosed_think) s["unclosed_think"] = true;
  s["finish_reason"] = c.finish_reason;
  s["prompt_tokens"] = c.prompt_tokens >= 0 ? nlohmann::json(c.prompt_tokens) : nlohmann::json();
  s["completion_tokens"] = c.completion_tokens >= 0 ? nlohmann::json(c.completion_tokens) : nlohmann::json();
  s["latency_ms"] = Round(r.latency_ms, 1);
  s["attempts"] = r.attempts;
  if (c.timings.present) {
    s["timings"] = {{"prompt_n", c.timings.prompt_n},
                    {"prompt_ms", c.timings.prompt_ms},
                    {"prompt_per_second", c.timings.prompt_per_second},
                    {"predicted_n", c.timings.predicted_n},
                    {"predicted_ms", c.timings.predicted_ms},
                    {"predicted_per_second", c.timings.predicted_per_second},
                    {"cache_n", c.timings.cache_n}};
  } else {
    s["timings"] = nullptr;
  }
  for (auto it = item.fields.begin(); it != item.fields.end(); ++it) s[it.key()] = *it;
  return s;
}

Completion CompletionFromSample(const nlohmann::json& s) {
  Completion c;
  auto str = [&](const char* k) {
    auto it = s.find(k);
    return it != s.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  c.content = str("response");
  c.reasoning = str("reasoning");
  c.finish_reason = str("finish_reason");
  c.unclosed_think = s.value("unclosed_think", false);
  auto num = [&](const char* k) {
    auto it = s.find(k);
    return it != s.end() && it->is_number() ? it->get<int>() : -1;
  };
  c.prompt_tokens = num("prompt_tokens");
  c.completion_tokens = num("completion_tokens");
  auto t = s.find("timings");
  if (t != s.end() && t->is_object()) {
    c.timings.present = true;
    c.timings.prompt_n = t->value("prompt_n", 0.0);
    c.timings.prompt_ms = t->value("prompt_ms", 0.0);
    c.timings.prompt_per_second = t->value("prompt_per_second", 0.0);
    c.timings.predicted_n = t->value("predicted_n", 0.0);
    c.timings.predicted_ms = t->value("predicted_ms", 0.0);
    c.timings.predicted_per_second = t->value("predicted_per_second", 0.0);
    c.timings.cache_n = t->value("cache_n", 0.0);
  }
  return c;
}

void ScoreChoiceSample(char letter, const std::string& gold, const std::string& finish_reason,
                       nlohmann::json* s) {
  const bool cut = finish_reason == "length";
  (*s)["extracted"] = letter ? nlohmann::json(std::string(1, letter)) : nlohmann::json();
  (*s)["cut_off"] = cut;
  (*s)["no_answer"] = !cut && letter == 0;
  (*s)["correct"] = !cut && letter != 0 && std::string(1, letter) == gold;
}

double BinomialStderr(double p, int n) { return n > 0 ? std::sqrt(p * (1 - p) / n) : 0.0; }

double Round(double x, int digits) {
  double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

void AddSpeeds(const std::vector<nlohmann::json>& samples, nlohmann::json* out) {
  double pn = 0, pms = 0, dn = 0, dms = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  int timed = 0;
  for (const auto& s : samples) {
    if (s.contains("prompt_tokens") && s["prompt_tokens"].is_number()) prompt_tokens += s["prompt_tokens"].get<int64_t>();
    if (s.contains("completion_tokens") && s["completion_tokens"].is_number())
      completion_tokens += s["completion_tokens"].get<int64_t>();
    auto t = s.find("timings");
    if (t == s.end() || !t->is_object()) continue;
    ++timed;
    pn += t->value("prompt_n", 0.0);
    pms += t->value("prompt_ms", 0.0);
    dn += t->value("predicted_n", 0.0);
    dms += t->value("predicted_ms", 0.0);
  }
  nlohmann::json sp;
  sp["prompt_tokens"] = prompt_tokens;
  sp["completion_tokens"] = completion_tokens;
  sp["timed_samples"] = timed;
  sp["prompt_tokens_per_s"] = pms > 0 ? nlohmann::json(Round(pn / (pms / 1000.0), 1)) : nlohmann::json();
  sp["decode_tokens_per_s"] = dms > 0 ? nlohmann::json(Round(dn / (dms / 1000.0), 1)) : nlohmann::json();
  (*out)["speeds"] = sp;
}

nlohmann::json AggregateChoice(const std::vector<nlohmann::json>& samples, int failed,
                               const std::string& category_key) {
  int n = 0, correct = 0, cut = 0, none = 0;
  std::map<std::string, std::pair<int, int>> cats;  // n, correct
  for (const auto& s : samples) {
    ++n;
    bool ok = s.value("correct", false);
    correct += ok;
    cut += s.value("cut_off", false);
    none += s.value("no_answer", false);
    auto& c = cats[s.value(category_key, std::string())];
    ++c.first;
    c.second += ok;
  }
  nlohmann::json r;
  double p = n ? static_cast<double>(correct) / n : 0.0;
  r["score"] = Round(p, 6);
  r["n"] = n;
  r["correct"] = correct;
  r["cut_off"] = cut;
  r["no_answer"] = none;
  r["failed"] = failed;
  r["stderr"] = Round(BinomialStderr(p, n), 6);
  nlohmann::json per = nlohmann::json::object();
  for (const auto& [name, c] : cats)
    per[name] = {{"n", c.first}, {"correct", c.second},
                 {"score", Round(c.first ? static_cast<double>(c.second) / c.first : 0.0, 6)}};
  r["categories"] = per;
  AddSpeeds(samples, &r);
  return r;
}

}  // namespace evalrun
