// RULER against a real llama-server with the tiny-vocabulary model: all 13
// tasks at 2,048 and 4,096, each scored or skipped with its reason; every
// scored prompt plus its answer budget within its length by the server's
// own count (usage.prompt_tokens); and the prompts byte-identical to what
// NVIDIA's prepare.py made with this model's tokenizer
// (tests/fixtures/ruler/nvidia_reference.json, made by the harness in
// tests/fixtures/ruler/harness), with the tokenizer asked live.
#include <map>
#include <set>

#include "tests/real/real_lane.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

class RealRuler : public RealLaneTest {};

TEST_F(RealRuler, AllThirteenTasksAtTwoAndFourKScoredOrSkippedAndAsNvidiaMadeThem) {
  // 4 slots of 4,096 tokens each (no unified cache: the card says so).
  LlamaServer* s = StartServer({.parallel = 4, .ctx = 16384});
  const std::vector<std::string> tasks = {"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
                                          "niah_multikey_2", "niah_multikey_3", "niah_multivalue",
                                          "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2"};
  constexpr int kSamples = 3;  // sample i does not depend on later ones: NVIDIA's first 3
  nlohmann::json server = Server(s);
  server["kv_cache"] = "per_slot";
  const std::string card = WriteCardJson(
      Card(server, {{"ruler", {{"lengths", {2048, 4096}}, {"tasks", tasks}, {"samples_per_task", kSamples}}}}));
  BinaryResult r = Run({"--card", card, "--job", "ruler"}, 1200);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto part = Results("ruler")["parts"]["ruler"];
  EXPECT_EQ(part["info"]["profile"], "nvidia");
  EXPECT_EQ(part["failed"], 0);

  // Scored or skipped with a reason, for every task and length.
  std::map<std::string, std::string> skipped;  // "task@length" (or "task@*") -> reason
  for (const auto& sk : part["info"]["skipped"]) {
    const std::string at = sk.contains("length") ? std::to_string(sk["length"].get<int>()) : "*";
    skipped[sk["task"].get<std::string>() + "@" + at] = sk["reason"];
  }
  std::map<std::string, int> scored;
  for (const auto& l : Samples("ruler", "ruler")) {
    ++scored[l["task"].get<std::string>() + "@" + std::to_string(l["length"].get<int>())];
    ASSERT_TRUE(l["prompt_tokens"].is_number()) << l.dump();
    EXPECT_LE(l["prompt_tokens"].get<int>() + l["max_tokens"].get<int>(), l["length"].get<int>()) << l["id"];
    EXPECT_EQ(l["prompt_tokens"], l["prompt_tokens_counted"]) << "evalrun's count differs from the server's usage";
  }
  for (const auto& t : tasks) {
    for (int len : {2048, 4096}) {
      const std::string key = t + "@" + std::to_string(len);
      const bool is_skipped = skipped.count(key) || skipped.count(t + "@*");
      EXPECT_NE(scored.count(key) > 0, is_skipped) << key << ": neither (or both) scored and skipped";
      if (scored.count(key)) {
        EXPECT_EQ(scored[key], kSamples) << key;
      }
      if (is_skipped) {
        EXPECT_FALSE((skipped.count(key) ? skipped[key] : skipped[t + "@*"]).empty()) << key;
      }
    }
  }
  for (const char* qa : {"qa_1", "qa_2"}) EXPECT_TRUE(skipped.count(std::string(qa) + "@*")) << qa;

  // Byte for byte NVIDIA's prompts where its script finished; skipped where it loops.
  const auto ref = nlohmann::json::parse(ReadFile(FixturePath("ruler/nvidia_reference.json")));
  std::map<std::string, std::string> sha;  // id -> prompt_sha256
  for (const auto& l : Samples("ruler", "ruler")) sha[l["id"]] = l["prompt_sha256"];
  int compared = 0;
  for (const auto& run : ref["runs"]) {
    const std::string task = run["task"];
    const int len = run["length"];
    const std::string key = task + "@" + std::to_string(len);
    if (!run["finished"].get<bool>()) {
      EXPECT_TRUE(skipped.count(key)) << key << ": NVIDIA's script loops here, evalrun must skip it";
      continue;
    }
    for (const auto& smp : run["samples"]) {
      const int idx = smp["index"];
      if (idx >= kSamples) continue;
      const std::string id = task + "/" + std::to_string(len) + "/" + std::to_string(idx);
      ASSERT_TRUE(sha.count(id)) << id << " was not asked";
      EXPECT_EQ(sha[id], smp["input_sha256"].get<std::string>()) << id << " differs from NVIDIA's prompt";
      ++compared;
    }
  }
  EXPECT_GE(compared, 14 * kSamples - 3) << "fewer NVIDIA samples compared than its finished runs hold";
}

}  // namespace
}  // namespace evalrun::testing
