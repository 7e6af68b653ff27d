// `evalrun compare` splits a run whose samples came from several endpoints
// (server.endpoints, e.g. two builds side by side: endpoints_differ) by the
// endpoint that answered, beside the part's own groups.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "evals/publish/compare.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

using testing::TempDir;
using testing::WriteText;

// A run folder of one mmlupro part: 40 questions; `endpoint(i)` names the
// endpoint of question i ("" for none), `correct(i)` its verdict.
template <class Endpoint, class Correct>
void MakeRun(const std::string& dir, const std::string& job, Endpoint endpoint, Correct correct) {
  nlohmann::json results = {{"schema", "evalrun.results/1"}, {"job", job},
                            {"card", {{"name", "c"}, {"path", "c.json"}, {"sha256", "aa"}}},
                            {"finished_utc", "2026-01-02T03:04:05Z"}, {"parts", {{"mmlupro", {{"n", 40}}}}}};
  WriteText(dir + "/results.json", results.dump());
  std::string body;
  for (int i = 0; i < 40; ++i) {
    nlohmann::json s = {{"id", "q" + std::to_string(i)}, {"category", i % 2 ? "law" : "math"},
                        {"prompt_sha256", "p" + std::to_string(i)}, {"response", "A"}, {"finish_reason", "stop"},
                        {"gold", "A"}, {"extracted", correct(i) ? "A" : "B"}, {"correct", correct(i)},
                        {"cut_off", false}, {"no_answer", false}};
    if (!endpoint(i).empty()) s["endpoint"] = endpoint(i);
    body += s.dump() + "\n";
  }
  WriteText(dir + "/mmlupro/samples.jsonl", body);
}

TEST(CompareEndpoints, ARunOnTwoEndpointsIsSplitByEndpoint) {
  TempDir t("evalrun_compare_ep");
  auto none = [](int) { return std::string(); };
  auto two = [](int i) { return std::string(i < 20 ? "http://a:1/v1" : "http://b:1/v1"); };
  MakeRun(t.path() + "/a", "a", two, [](int) { return true; });
  // B is wrong where endpoint b answered A's question 20..29.
  MakeRun(t.path() + "/b", "b", none, [](int i) { return i < 20 || i >= 30; });
  CompareOptions o;
  o.run_a = t.path() + "/a";
  o.run_b = t.path() + "/b";
  nlohmann::json j;
  ASSERT_TRUE(BuildComparison(o, &j).ok());
  const nlohmann::json& groups = j["parts"][0]["metrics"][0]["groups"];
  const nlohmann::json* by_endpoint = nullptr;
  for (const auto& g : groups)
    if (g["dimension"] == "endpoint") by_endpoint = &g;
  ASSERT_NE(by_endpoint, nullptr) << groups.dump();
  ASSERT_EQ((*by_endpoint)["rows"].size(), 2u);
  EXPECT_EQ((*by_endpoint)["rows"][0]["name"], "http://a:1/v1");
  EXPECT_EQ((*by_endpoint)["rows"][0]["n"], 20);
  EXPECT_DOUBLE_EQ((*by_endpoint)["rows"][0]["delta"].get<double>(), 0.0);
  EXPECT_EQ((*by_endpoint)["rows"][1]["name"], "http://b:1/v1");
  EXPECT_NEAR((*by_endpoint)["rows"][1]["delta"].get<double>(), -0.5, 1e-9);

  // A run without endpoints (or with one) has no such split.
  nlohmann::json back;
  o.run_a = t.path() + "/b";
  o.run_b = t.path() + "/a";
  ASSERT_TRUE(BuildComparison(o, &back).ok());
  for (const auto& g : back["parts"][0]["metrics"][0]["groups"]) EXPECT_NE(g["dimension"], "endpoint");
}

}  // namespace
}  // namespace evalrun
