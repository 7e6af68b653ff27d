// --shard I/N: parsing, and the assignment of items to shards (a hash of the
// run key and the id: disjoint, complete, balanced, independent of order and
// of which other items are selected); the merged noise summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "evals/publish/merge_load.h"
#include "evals/run/shard.h"

namespace evalrun {
namespace {

TEST(ParseShard, TakesOneBasedIOfN) {
  ShardSpec s;
  ASSERT_TRUE(ParseShard("2/8", "--shard", &s).ok());
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  EXPECT_TRUE(s.sharded());
  EXPECT_EQ(s.Text(), "2/8");
  ASSERT_TRUE(ParseShard("1/1", "--shard", &s).ok());
  ASSERT_TRUE(ParseShard("8/8", "--shard", &s).ok());
  EXPECT_FALSE(ShardSpec().sharded());
}

TEST(ParseShard, RefusesWhatIsNotIOfNNamingTheFlag) {
  for (const char* bad : {"", "3", "/3", "3/", "a/3", "1/b", "-1/3", "1/-3", "1.0/3", "1/3/4", " 1/3", "1/0"}) {
    ShardSpec s;
    Status st = ParseShard(bad, "--shard", &s);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("--shard: expected I/N"), std::string::npos) << st.message();
  }
  ShardSpec s;
  Status st = ParseShard("4/3", "--shard", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("I is larger than N"), std::string::npos) << st.message();
  st = ParseShard("0/3", "--shard", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("JOB_COMPLETION_INDEX"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("I counts from 1"), std::string::npos) << st.message();
}

std::vector<std::string> Ids(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(std::to_string(70 + 3 * i));
  return ids;
}

TEST(ShardOfItem, EveryItemHasOneShardAndTheShardsAreBalanced) {
  const std::string key = RunKeyDigest(nlohmann::json{{"card", {{"x", 1}}}, {"datasets", {}}});
  const std::vector<std::string> ids = Ids(6000);
  for (int n : {1, 2, 3, 7}) {
    std::map<int, int> per;
    for (const auto& id : ids) {
      const int s = ShardOfItem(key, id, n);
      ASSERT_GE(s, 1);
      ASSERT_LE(s, n);
      ++per[s];
    }
    ASSERT_EQ(per.size(), static_cast<size_t>(n));
    int total = 0;
    for (const auto& [s, c] : per) {
      total += c;
      // 6000 / n within 10 % (a binomial spread is far smaller).
      EXPECT_NEAR(c, 6000.0 / n, 600.0 / n + 60) << "shard " << s << " of " << n;
    }
    EXPECT_EQ(total, 6000);
  }
}

TEST(ShardOfItem, DependsOnTheIdNotItsPositionOrTheOtherItems) {
  const std::string key = RunKeyDigest(nlohmann::json{{"card", "a"}});
  std::vector<std::string> ids = Ids(500);
  std::map<std::string, int> first;
  for (const auto& id : ids) first[id] = ShardOfItem(key, id, 4);
  std::mt19937 rng(7);
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.resize(123);  // another, smaller selection in another order
  for (const auto& id : ids) EXPECT_EQ(ShardOfItem(key, id, 4), first[id]) << id;
}

TEST(ShardOfItem, AnotherRunKeyDealsTheItemsOtherwise) {
  const std::string a = RunKeyDigest(nlohmann::json{{"card", {{"max_tokens", 64}}}});
  const std::string b = RunKeyDigest(nlohmann::json{{"card", {{"max_tokens", 65}}}});
  ASSERT_NE(a, b);
  int differ = 0;
  for (const auto& id : Ids(300)) differ += ShardOfItem(a, id, 3) != ShardOfItem(b, id, 3);
  EXPECT_GT(differ, 100);  // about 2/3 of them
}

TEST(RunKeyDigest, IsTheSha256OfTheKeysSortedText) {
  // nlohmann keeps object keys sorted: insertion order does not matter.
  nlohmann::json a = nlohmann::json::object(), b = nlohmann::json::object();
  a["x"] = 1;
  a["y"] = {{"q", 2}, {"p", 3}};
  b["y"] = {{"p", 3}, {"q", 2}};
  b["x"] = 1;
  EXPECT_EQ(RunKeyDigest(a), RunKeyDigest(b));
  EXPECT_EQ(RunKeyDigest(a).size(), 64u);
}

TEST(MergeLoadSummaries, AddsCountsTakesMaximaWeighsTheEngineMeanAndKeepsEveryShard) {
  nlohmann::json one = {{"samples", 10}, {"samples_above_threshold", 2}, {"interval_s", 10}, {"threshold_pct", 25},
                        {"max_foreign_cpu_pct", 80.0}, {"max_foreign", {{"pid", 5}, {"comm", "cc1plus"}}},
                        {"above_by_comm", {{"cc1plus", 2}}}, {"max_foreign_cpu_pct_total", 120.0},
                        {"engine_cpu_pct_mean", 90.0}, {"self_cpu_pct_max", 1.5}, {"sampler_cpu_s", 0.25},
                        {"gpu", nullptr}, {"warnings", {"w1"}}, {"pauses", nlohmann::json::array()},
                        {"paused_s_total", 0.0}};
  nlohmann::json two = one;
  two["samples"] = 30;
  two["samples_above_threshold"] = 1;
  two["max_foreign_cpu_pct"] = 150.0;
  two["max_foreign"] = {{"pid", 9}, {"comm", "indexer"}};
  two["above_by_comm"] = {{"indexer", 1}, {"cc1plus", 3}};
  two["engine_cpu_pct_mean"] = 50.0;
  two["warnings"] = {"w2"};
  two["pauses"] = {{{"start_t", 1.0}, {"end_t", 4.0}, {"seconds", 3.0}, {"release", "load_fell"}}};
  two["paused_s_total"] = 3.0;
  const nlohmann::json m = MergeLoadSummaries({{1, one}, {2, two}});
  EXPECT_EQ(m["samples"], 40);
  EXPECT_EQ(m["samples_above_threshold"], 3);
  EXPECT_EQ(m["max_foreign_cpu_pct"], 150.0);
  EXPECT_EQ(m["max_foreign"]["comm"], "indexer");
  EXPECT_EQ(m["max_foreign"]["shard"], 2);
  EXPECT_EQ(m["above_by_comm"]["cc1plus"], 5);
  EXPECT_EQ(m["above_by_comm"]["indexer"], 1);
  EXPECT_DOUBLE_EQ(m["engine_cpu_pct_mean"].get<double>(), (90.0 * 10 + 50.0 * 30) / 40);
  EXPECT_DOUBLE_EQ(m["sampler_cpu_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["paused_s_total"].get<double>(), 3.0);
  ASSERT_EQ(m["pauses"].size(), 1u);
  EXPECT_EQ(m["pauses"][0]["shard"], 2);
  EXPECT_EQ(m["warnings"], nlohmann::json({"shard 1: w1", "shard 2: w2"}));
  ASSERT_EQ(m["shards"].size(), 2u);
  EXPECT_EQ(m["shards"][1]["load"], two);
  EXPECT_NE(m["text"].get<std::string>().find("3 of 40 samples"), std::string::npos) << m["text"];
}

}  // namespace
}  // namespace evalrun
