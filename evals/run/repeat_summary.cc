#include "evals/run/repeat_summary.h"

#include <map>

#include "evals/run/verdict_kind.h"
#include "scorers/noise_floor.h"

namespace evalrun {

nlohmann::json RepeatSummary(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second,
                          const nlohmann::json& second_result) {
  nlohmann::json own;  // a kind that compares its repeats itself (verdict_kind.h)
  if (!first.empty()) own = VerdictKindOf(KindOf(first.front().verdict)).CompareRepeats(first, second);
  if (!own.is_null()) {
    nlohmann::json j = std::move(own);
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
