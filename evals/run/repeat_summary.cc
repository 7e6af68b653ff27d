#include "evals/run/repeat_summary.h"

#include <cstdio>
#include <map>
#include <variant>

#include "scorers/noise_floor.h"
#include "scorers/probe/probe_divergence.h"

namespace evalrun {
namespace {

// A probe's repeats: its distributions, not scores. "flips" are the
// positions whose top token changed; the KLD between the repeats is the A/A
// floor an A/B probe comparison is read against (compare --noise).
nlohmann::json ProbeRepeatJson(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second) {
  std::map<std::string, const LogprobsVerdict*> by_id;
  for (const auto& rec : second) by_id[rec.id] = &std::get<LogprobsVerdict>(rec.verdict);
  std::vector<double> kld;
  int64_t changed = 0;
  for (const auto& rec : first) {
    auto it = by_id.find(rec.id);
    const auto& v = std::get<LogprobsVerdict>(rec.verdict);
    if (it == by_id.end() || v.top.empty() || it->second->top.empty()) continue;
    const PositionDivergence d = ComparePosition(v.top, it->second->top);
    kld.push_back(d.kld);
    changed += !d.same_top;
  }
  const ValueSummary k = Summarize(kld);
  const int64_t n = static_cast<int64_t>(kld.size());
  nlohmann::json j;
  j["kind"] = "logprobs";
  j["pairs"] = n;
  j["flips"] = changed;
  j["flip_rate"] = n > 0 ? static_cast<double>(changed) / n : 0.0;
  j["kld"] = {{"mean", k.mean}, {"median", k.median}, {"p95", k.p95}, {"p99", k.p99}, {"max", k.max}};
  j["mde"] = nullptr;
  j["mde_below"] = nullptr;
  char text[320];
  std::snprintf(text, sizeof text,
                "KLD(repeat 1 || repeat 2) over %lld positions: mean %.3g, p99 %.3g, max %.3g; the top token changed "
                "at %lld",
                static_cast<long long>(n), k.mean, k.p99, k.max, static_cast<long long>(changed));
  j["text"] = text;
  return j;
}

}  // namespace

nlohmann::json RepeatSummary(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second,
                          const nlohmann::json& second_result) {
  if (!first.empty() && std::holds_alternative<LogprobsVerdict>(first.front().verdict)) {
    nlohmann::json j = ProbeRepeatJson(first, second);
    j["repeats"] = 2;
    j["dir"] = "repeat-2";
    j["n_repeat_2"] = second_result.value("n", nlohmann::json());
    j["complete_repeat_2"] = second_result.value("complete", nlohmann::json());
    return j;
  }
  std::map<std::string, double> by_id;
  for (const auto& rec : second) by_id[rec.id] = HeadlineScore(rec.verdict);
  std::vector<double> x, y;
  for (const auto& rec : first) {
    auto it = by_id.find(rec.id);
    if (it == by_id.end()) continue;
    x.push_back(HeadlineScore(rec.verdict));
    y.push_back(it->second);
  }
  // The floor for a comparison of as many items as both repeats answered.
  const NoiseFloor f = ComputeNoiseFloor(x, y, static_cast<int64_t>(x.size()), 0.05, kNoisePower);
  nlohmann::json j = NoiseFloorJson(f);
  j["repeats"] = 2;
  j["dir"] = "repeat-2";
  j["score_repeat_2"] = second_result.value("score", nlohmann::json());
  j["n_repeat_2"] = second_result.value("n", nlohmann::json());
  j["complete_repeat_2"] = second_result.value("complete", nlohmann::json());
  return j;
}

}  // namespace evalrun
