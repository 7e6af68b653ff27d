// End to end: `--shard 1/3`, `2/3`, `3/3` of a card with all four question
// parts, merged with `evalrun merge`, give the same ids, answers, scores and
// results.json figures as one unsharded run of it against the same
// (deterministic) fake server; `report` and `compare` read the merged folder
// as a single run's.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "evals/run/shard.h"
#include "tests/support/deterministic_replies.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_figures.h"

namespace evalrun::testing {
namespace {

const char* const kParts[] = {"mmlupro", "gpqa", "ifeval", "ruler"};

class E2eShard : public E2eTest {
 protected:
  std::map<std::string, nlohmann::json> ById(const std::string& job, const std::string& part) {
    std::map<std::string, nlohmann::json> m;
    for (const auto& s : Samples(job, part)) EXPECT_TRUE(m.emplace(s["id"], s).second) << job << " " << s["id"];
    return m;
  }
  nlohmann::json RunJson(const std::string& job) {
    return nlohmann::json::parse(ReadFile(dir_ + "/runs/" + job + "/run.json"));
  }
};

TEST_F(E2eShard, ThreeShardsMergedEqualOneRunOfAllFourParts) {
  FakeServerOptions o;
  o.slots = 4;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder(DeterministicReply);
  // Load samples every 0.2 s, so that there are some to merge.
  const std::string card = WriteCard(server.base_url(), "4", R"({
      "mmlupro": {"questions": 45, "max_tokens": 64},
      "gpqa": {"questions": 24, "max_tokens": 64},
      "ifeval": {"prompts": 24, "max_tokens": 64},
      "ruler": {"lengths": [2048], "tasks": ["niah_single_1", "niah_multikey_2", "vt"], "samples_per_task": 4}})",
                                     R"("load_sampling": {"interval_s": 0.2},)");
  BinaryResult one = Run({"--card", card, "--job", "one"}, 300);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (int i = 1; i <= 3; ++i) {
    BinaryResult r = Run({"--card", card, "--job", "s" + std::to_string(i), "--shard", std::to_string(i) + "/3"}, 300);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("shard " + std::to_string(i) + "/3"), std::string::npos) << r.err;
  }
  const nlohmann::json single = Results("one");
  const nlohmann::json run_key = RunJson("one")["run_key"];
  const std::string key_sha = RunKeyDigest(run_key);

  // Each shard: the unsharded run's run key, its shard recorded in run.json,
  // results.json and shard.json, and exactly the ids that hash to it
  // (computed here, in another process than the one that chose them).
  std::map<std::string, std::map<std::string, int>> owner;  // part -> id -> shard
  for (int i = 1; i <= 3; ++i) {
    const std::string job = "s" + std::to_string(i);
    const nlohmann::json run = RunJson(job), res = Results(job);
    EXPECT_EQ(run["run_key"], run_key) << job;
    const nlohmann::json shard = {{"index", i}, {"count", 3}, {"run_key_sha256", key_sha}};
    EXPECT_EQ(run["shard"], shard);
    EXPECT_EQ(res["shard"], shard);
    const nlohmann::json file = nlohmann::json::parse(ReadFile(dir_ + "/runs/" + job + "/shard.json"));
    EXPECT_EQ(file["schema"], kShardSchema);
    for (const char* part : kParts) {
      const nlohmann::json& p = res["parts"][part];
      EXPECT_EQ(p["shard"]["selected"], single["parts"][part]["planned"]) << job << " " << part;
      EXPECT_EQ(file["parts"][part]["selected"].size(), single["parts"][part]["planned"].get<size_t>());
      EXPECT_EQ(p["planned"], file["parts"][part]["shard_items"]);
      for (const auto& [id, s] : ById(job, part)) {
        EXPECT_EQ(ShardOfItem(key_sha, id, 3), i) << part << " " << id;
        EXPECT_TRUE(owner[part].emplace(id, i).second) << part << " " << id << " in two shards";
      }
    }
  }
  // Disjoint (above) and together the whole selection. (The card's
  // base_url, in the run key, has the fake server's port: each run of this
  // test deals the items otherwise.)
  std::set<int> used;
  for (const char* part : kParts) {
    const auto all = ById("one", part);
    ASSERT_EQ(owner[part].size(), all.size()) << part;
    for (const auto& [id, s] : all) {
      ASSERT_TRUE(owner[part].count(id)) << part << " " << id << " in no shard";
      used.insert(owner[part][id]);
    }
  }
  EXPECT_EQ(used.size(), 3u) << "every shard has some items";

  const std::string merged = dir_ + "/runs/merged";
  BinaryResult m = RunBinary({EvalrunBinary(), "merge", merged, dir_ + "/runs/s1", dir_ + "/runs/s2", dir_ + "/runs/s3"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("merged 3 of 3 shards"), std::string::npos) << m.out;
  const nlohmann::json res = Results("merged");
  EXPECT_EQ(res["schema"], single["schema"]);
  EXPECT_EQ(res["job"], "merged");
  EXPECT_EQ(res["merged"]["count"], 3);
  EXPECT_EQ(res["merged"]["partial"], false);
  EXPECT_EQ(res["merged"]["shards"].size(), 3u);
  EXPECT_FALSE(res.contains("shard"));
  EXPECT_EQ(RunJson("merged")["run_key"], run_key);
  EXPECT_EQ(RunJson("merged")["slots"], 12);
  int single_samples = 0;
  for (const char* part : kParts) {
    // The same answers, verdicts and item fields for every id ...
    const auto a = ById("one", part), b = ById("merged", part);
    ASSERT_EQ(a.size(), b.size()) << part;
    single_samples += static_cast<int>(a.size());
    for (const auto& [id, s] : a) {
      ASSERT_TRUE(b.count(id)) << part << " " << id;
      EXPECT_EQ(Answer(b.at(id)), Answer(s)) << part << " " << id;
    }
    // ... and the same figures of results.json.
    const nlohmann::json& p = res["parts"][part];
    EXPECT_EQ(Figures(p), Figures(single["parts"][part])) << part;
    EXPECT_EQ(p["complete"], true);
    EXPECT_EQ(p["merged"]["absent_n"], 0);
    EXPECT_EQ(p["slots"], 12);
  }
  // Not every answer is the same (the test would show nothing): scores vary.
  EXPECT_GT(single["parts"]["mmlupro"]["correct"].get<int>(), 0);
  EXPECT_LT(single["parts"]["mmlupro"]["correct"].get<int>(), 45);
  EXPECT_GT(single["parts"]["mmlupro"]["cut_off"].get<int>(), 0);
  EXPECT_GT(single["parts"]["ruler"]["score"].get<double>(), 0);
  EXPECT_GT(single["parts"]["ifeval"]["inst_loose"].get<double>(), 0);
  EXPECT_EQ(res["load"]["shards"].size(), 3u);
  int load_samples = 0;
  for (const auto& s : res["load"]["shards"]) load_samples += s["load"]["samples"].get<int>();
  EXPECT_EQ(res["load"]["samples"], load_samples);
  // Every shard's load samples, each with its shard.
  std::map<int, size_t> load_lines;
  for (const auto& l : Lines(merged + "/load.jsonl")) ++load_lines[l["shard"].get<int>()];
  for (int i = 1; i <= 3; ++i) {
    const std::string path = dir_ + "/runs/s" + std::to_string(i) + "/load.jsonl";
    EXPECT_EQ(load_lines[i], Lines(path).size()) << path;
  }
  EXPECT_EQ(load_lines.size(), 3u) << "a line with a shard other than 1, 2, 3";

  // report reads it as any run.
  BinaryResult rep = RunBinary({EvalrunBinary(), "report", merged});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string md = ReadFile(merged + "/report.md");
  for (const char* name : {"MMLU-Pro", "GPQA", "IFEval", "RULER"}) EXPECT_NE(md.find(name), std::string::npos) << name;
  BinaryResult rep1 = RunBinary({EvalrunBinary(), "report", dir_ + "/runs/one"});
  ASSERT_EQ(rep1.exit_code, 0) << rep1.err;
  // compare: every question paired, nothing flipped, no regression.
  BinaryResult cmp = RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/one", merged, "--json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json c = nlohmann::json::parse(cmp.out);
  ASSERT_EQ(c["parts"].size(), 4u);
  int paired = 0;
  for (const auto& p : c["parts"]) {
    EXPECT_EQ(p["only_in_a"], 0) << p["part"];
    EXPECT_EQ(p["only_in_b"], 0) << p["part"];
    EXPECT_TRUE(p["flipped"].empty()) << p["part"];
    paired += p["paired"].get<int>();
  }
  EXPECT_EQ(paired, single_samples);
}

// A shard chosen by hash keeps its items when the question count changes
// (the count is not in the run key), and a job cannot be resumed as another
// shard.
TEST_F(E2eShard, ShardItemsDoNotDependOnTheCountAndAResumeKeepsItsShard) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder(DeterministicReply);
  const std::string small = dir_ + "/small.json";
  std::filesystem::rename(WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 30, "max_tokens": 16}})"),
                          small);
  ASSERT_EQ(Run({"--card", small, "--job", "small", "--shard", "2/4"}).exit_code, 0);
  ASSERT_EQ(Run({"--card", small, "--job", "all30"}).exit_code, 0);
  const std::string big = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 60, "max_tokens": 16}})");
  ASSERT_EQ(Run({"--card", big, "--job", "big", "--shard", "2/4"}).exit_code, 0);
  // The count is not in the run key: both runs deal the ids alike.
  const std::string key = Results("small")["shard"]["run_key_sha256"];
  EXPECT_EQ(Results("big")["shard"]["run_key_sha256"], key);
  std::set<std::string> in_small, in_big, sel60;
  for (const auto& s : Samples("small", "mmlupro")) in_small.insert(s["id"]);
  for (const auto& s : Samples("big", "mmlupro")) in_big.insert(s["id"]);
  const nlohmann::json big_shard = nlohmann::json::parse(ReadFile(dir_ + "/runs/big/shard.json"));
  for (const auto& id : big_shard["parts"]["mmlupro"]["selected"]) sel60.insert(id.get<std::string>());
  ASSERT_FALSE(in_small.empty());
  // Of the ids both selections have, shard 2 holds the same in both runs.
  std::set<std::string> both_small, both_big;
  for (const auto& s : Samples("all30", "mmlupro")) {
    const std::string id = s["id"];
    if (!sel60.count(id)) continue;
    if (in_small.count(id)) both_small.insert(id);
    if (in_big.count(id)) both_big.insert(id);
  }
  EXPECT_FALSE(both_small.empty());
  EXPECT_EQ(both_small, both_big);
  for (const auto& id : in_big) EXPECT_EQ(ShardOfItem(key, id, 4), 2) << id;

  BinaryResult r = Run({"--card", small, "--job", "small", "--shard", "3/4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("started as shard 2/4, now --shard is 3/4"), std::string::npos) << r.err;
  r = Run({"--card", small, "--job", "small"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("now --shard is not sharded"), std::string::npos) << r.err;
  r = Run({"--card", small, "--job", "small", "--shard", "2/4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming job small"), std::string::npos) << r.err;

  r = Run({"--card", small, "--job", "bad", "--shard", "0/4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("JOB_COMPLETION_INDEX"), std::string::npos) << r.err;
  r = Run({"--card", small, "--job", "bad", "--shard", "5/4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--shard: expected I/N"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace evalrun::testing
