// Shards and merge against real llama-servers: one card (MMLU-Pro, IFEval,
// RULER, small) run whole on one llama-server with one slot (greedy and one
// request at a time: the answers are deterministic), then as three shards at
// once on three such servers (--base-url per shard, the same model file and
// build: the same run key), merged. The merged folder has the same ids,
// answers, scores and results.json figures as the whole run, and `compare`
// finds every question paired and none flipped.
#include <map>

#include "evals/run/shard.h"
#include "tests/real/real_lane.h"
#include "tests/support/run_figures.h"

namespace evalrun::testing {
namespace {

class RealShard : public RealLaneTest {
 protected:
  std::map<std::string, nlohmann::json> ById(const std::string& job, const std::string& part) {
    std::map<std::string, nlohmann::json> m;
    for (const auto& s : Samples(job, part)) EXPECT_TRUE(m.emplace(s["id"], s).second) << job << " " << s["id"];
    return m;
  }
};

TEST_F(RealShard, ThreeShardsOnThreeServersMergedEqualOneRun) {
  const LlamaServerArgs args{.parallel = 1, .ctx = 4096};
  LlamaServer* whole = StartServer(args);
  std::vector<LlamaServer*> shard_servers;
  for (int i = 0; i < 3; ++i) shard_servers.push_back(StartServer(args));
  const nlohmann::json parts = {
      {"mmlupro", {{"questions", 15}, {"max_tokens", 24}}},
      {"ifeval", {{"prompts", 9}, {"max_tokens", 48}}},
      {"ruler", {{"lengths", {2048}}, {"tasks", {"niah_single_1", "vt"}}, {"samples_per_task", 3}}}};
  nlohmann::json server = Server(whole, 1);
  server["kv_cache"] = "per_slot";
  const std::string card = WriteCardJson(Card(server, parts));
  BinaryResult one = Run({"--card", card, "--job", "one"}, 900);
  ASSERT_EQ(one.exit_code, 0) << one.err;

  // The three shards at once, each on its own server.
  std::vector<int> pids;
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    pids.push_back(SpawnBinary({EvalrunBinary(), "--card", card, "--base-url", shard_servers[i - 1]->base_url(),
                                "--shard", n + "/3", "--job", "s" + n, "--out", dir_ + "/runs", "--data-dir",
                                DatasetsDir()},
                               dir_ + "/s" + n + ".out", dir_ + "/s" + n + ".err"));
    ASSERT_GT(pids.back(), 0);
  }
  for (int i = 1; i <= 3; ++i) {
    BinaryResult r = WaitBinary(pids[i - 1], 900);
    ASSERT_EQ(r.exit_code, 0) << ReadFile(dir_ + "/s" + std::to_string(i) + ".err");
  }
  BinaryResult m = RunBinary({EvalrunBinary(), "merge", JobDir("merged"), JobDir("s1"), JobDir("s2"), JobDir("s3")});
  ASSERT_EQ(m.exit_code, 0) << m.err;

  const nlohmann::json single = Results("one"), merged = Results("merged");
  const std::string key = RunKeyDigest(nlohmann::json::parse(ReadFile(JobDir("one") + "/run.json"))["run_key"]);
  EXPECT_EQ(merged["merged"]["run_key_sha256"], key);
  for (const char* part : {"mmlupro", "ifeval", "ruler"}) {
    const auto a = ById("one", part), b = ById("merged", part);
    ASSERT_EQ(a.size(), b.size()) << part;
    ASSERT_EQ(a.size(), single["parts"][part]["planned"].get<size_t>()) << part;
    for (const auto& [id, s] : a) {
      ASSERT_TRUE(b.count(id)) << part << " " << id;
      EXPECT_EQ(Answer(b.at(id)), Answer(s)) << part << " " << id;
    }
    size_t in_shards = 0;
    for (int i = 1; i <= 3; ++i)
      for (const auto& [id, s] : ById("s" + std::to_string(i), part)) {
        EXPECT_EQ(ShardOfItem(key, id, 3), i) << part << " " << id;
        ++in_shards;
      }
    EXPECT_EQ(in_shards, a.size()) << part;
    EXPECT_EQ(Figures(merged["parts"][part]), Figures(single["parts"][part])) << part;
    EXPECT_EQ(merged["parts"][part]["complete"], true) << part;
    EXPECT_EQ(merged["parts"][part]["failed"], 0) << part;
  }
  BinaryResult cmp = RunBinary({EvalrunBinary(), "compare", JobDir("one"), JobDir("merged"), "--json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json c = nlohmann::json::parse(cmp.out);
  ASSERT_EQ(c["parts"].size(), 3u);
  for (const auto& p : c["parts"]) {
    EXPECT_EQ(p["paired"], single["parts"][p["part"].get<std::string>()]["n"]) << p["part"];
    EXPECT_TRUE(p["flipped"].empty()) << p["part"];
  }
  BinaryResult rep = RunBinary({EvalrunBinary(), "report", JobDir("merged")});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
}

}  // namespace
}  // namespace evalrun::testing
