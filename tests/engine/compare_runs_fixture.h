// Hand-made run folders for the tests of `evalrun compare` (results.json and
// one samples.jsonl per part, as the runner writes them).
#ifndef EVALRUN_TESTS_ENGINE_COMPARE_RUNS_FIXTURE_H_
#define EVALRUN_TESTS_ENGINE_COMPARE_RUNS_FIXTURE_H_

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.h"

namespace evalrun::testing {

// A run folder with the given parts, each {part: samples}.
inline void MakeRun(const std::string& dir, const std::string& job,
                    const std::vector<std::pair<std::string, std::vector<nlohmann::json>>>& parts) {
  nlohmann::json ps = nlohmann::json::object();
  for (const auto& [name, lines] : parts) ps[name] = {{"n", lines.size()}};
  nlohmann::json results = {{"schema", "evalrun.results/1"}, {"job", job},
                            {"card", {{"name", "local"}, {"path", "cards/local.json"}, {"sha256", "aa11"}}},
                            {"finished_utc", "2026-01-02T03:04:05Z"}, {"parts", ps}};
  WriteText(dir + "/results.json", results.dump(2));
  for (const auto& [name, lines] : parts) {
    std::string body;
    for (const auto& l : lines) body += l.dump() + "\n";
    WriteText(dir + "/" + name + "/samples.jsonl", body);
  }
}

// n MMLU-Pro-like samples, all right (answer A), alternately math and law.
inline std::vector<nlohmann::json> AllRight(int n) {
  std::vector<nlohmann::json> v;
  for (int i = 0; i < n; ++i)
    v.push_back({{"id", "q" + std::to_string(i)}, {"category", i % 2 ? "law" : "math"},
                 {"prompt_sha256", "p" + std::to_string(i)}, {"response", "A"}, {"finish_reason", "stop"},
                 {"gold", "A"}, {"extracted", "A"}, {"correct", true}, {"cut_off", false}, {"no_answer", false}});
  return v;
}

// `v` with the answers at `ids` made wrong (answer B).
inline std::vector<nlohmann::json> Wrong(std::vector<nlohmann::json> v, const std::vector<int>& ids) {
  for (int i : ids) {
    v[i]["correct"] = false;
    v[i]["extracted"] = "B";
  }
  return v;
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_ENGINE_COMPARE_RUNS_FIXTURE_H_
