// What must be equal between two runs of the same answers (a run and its
// shards merged, say): results.json part objects and sample lines without
// what depends on time, speed, concurrency or the job's own name. Tests only.
#ifndef EVALRUN_TESTS_SUPPORT_RUN_FIGURES_H_
#define EVALRUN_TESTS_SUPPORT_RUN_FIGURES_H_

#include <nlohmann/json.hpp>

namespace evalrun::testing {

// parts.<p> without speeds, admission, outages, max_in_flight, slots, the
// shard / merged keys and info.tokenizer_calls.
inline nlohmann::json Figures(nlohmann::json part) {
  for (const char* k : {"speeds", "admission", "outages", "max_in_flight", "slots", "merged", "shard"}) part.erase(k);
  if (part.contains("info") && part["info"].is_object()) part["info"].erase("tokenizer_calls");
  return part;
}

// A samples.jsonl line without latency_ms, timings and attempts.
inline nlohmann::json Answer(nlohmann::json sample) {
  for (const char* k : {"latency_ms", "timings", "attempts"}) sample.erase(k);
  return sample;
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_RUN_FIGURES_H_
