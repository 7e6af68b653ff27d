#include "evals/server/kv_capacity.h"

#include <gtest/gtest.h>

#include "evals/run/context_check.h"

namespace evalrun {
namespace {

ServerProps LlamaProps(int n_ctx, int slots) {
  ServerProps p;
  p.has_props = true;
  p.n_ctx = n_ctx;
  p.total_slots = slots;
  return p;
}

TEST(KvCapacity, ManagedEngineFlagsSayWhetherTheCacheIsShared) {
  EXPECT_EQ(KvUnifiedFromFlags({"llama-server", "-c", "{context}", "-np", "4", "--kv-unified"}), 1);
  EXPECT_EQ(KvUnifiedFromFlags({"llama-server", "-c", "{context}", "-np", "4", "-kvu"}), 1);
  EXPECT_EQ(KvUnifiedFromFlags({"llama-server", "-c", "{context}", "-np", "{slots}"}), -1);
  EXPECT_EQ(KvUnifiedFromFlags({"llama-server", "-np", "4", "--no-kv-unified"}), -1);
  // No -np: llama-server runs 4 slots on a unified cache.
  EXPECT_EQ(KvUnifiedFromFlags({"llama-server", "-c", "131072"}), 1);
  ServerConfig s;
  KvCapacity k = ResolveKvCapacity(s, {"llama-server", "-c", "{context}", "-np", "4", "--kv-unified"}, 131072,
                                   LlamaProps(131072, 4), nullptr);
  EXPECT_TRUE(k.shared);
  EXPECT_EQ(k.tokens, 131072);
  EXPECT_FALSE(k.assumed);
  k = ResolveKvCapacity(s, {"llama-server", "-c", "{context}", "-np", "{slots}"}, 131072, LlamaProps(32768, 4),
                        nullptr);
  EXPECT_FALSE(k.shared);
}

TEST(KvCapacity, TheCardDecidesFirst) {
  ServerConfig s;
  s.kv_cache = "per_slot";
  EXPECT_FALSE(ResolveKvCapacity(s, {}, 0, LlamaProps(8192, 4), nullptr).shared);
  s.kv_cache = "shared";
  KvCapacity k = ResolveKvCapacity(s, {}, 0, LlamaProps(8192, 4), nullptr);
  EXPECT_TRUE(k.shared);
  EXPECT_EQ(k.tokens, 8192);
  s.kv_cache_tokens = 524288;
  EXPECT_EQ(ResolveKvCapacity(s, {}, 0, LlamaProps(262144, 4), nullptr).tokens, 524288);
}

TEST(KvCapacity, AnExternalLlamaServerWithSeveralSlotsIsAssumedShared) {
  ServerConfig s;
  KvCapacity k = ResolveKvCapacity(s, {}, 0, LlamaProps(8192, 4), nullptr);
  EXPECT_TRUE(k.shared);
  EXPECT_TRUE(k.assumed);
  EXPECT_EQ(k.tokens, 8192);
  EXPECT_FALSE(ResolveKvCapacity(s, {}, 0, LlamaProps(8192, 1), nullptr).shared);
}

TEST(KvCapacity, VllmCacheConfigInfo) {
  const std::string text =
      "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
      "# TYPE vllm:cache_config_info gauge\n"
      "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",gpu_memory_utilization=\"0.9\","
      "num_cpu_blocks=\"2048\",num_gpu_blocks=\"27343\",num_gpu_blocks_override=\"None\"} 1.0\n";
  EXPECT_EQ(VllmKvTokens(text), 16 * 27343);
  EXPECT_EQ(VllmKvTokens("vllm:num_requests_running 0\n"), 0);
}

TEST(ContextCheck, LengthsOverTheRequestContextFailOrAreSkipped) {
  std::vector<int64_t> kept;
  nlohmann::json skipped = nlohmann::json::array();
  Status st = CheckLengths("ruler", {4096, 32768}, 16384, false, &kept, &skipped);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("32768"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("16384"), std::string::npos) << st.message();
  ASSERT_TRUE(CheckLengths("ruler", {4096, 32768}, 16384, true, &kept, &skipped).ok());
  EXPECT_EQ(kept, std::vector<int64_t>({4096}));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0]["length"], 32768);
  ASSERT_TRUE(CheckLengths("ruler", {4096, 32768}, 0, false, &kept, &skipped).ok());  // unknown: kept
  EXPECT_EQ(kept.size(), 2u);
}

TEST(ContextCheck, CountedPromptsPlusTheirBudgetMustFit) {
  std::vector<Item> items(2);
  items[0].id = "a";
  items[0].counted_prompt_tokens = 4000;
  items[0].prompt.params.max_tokens = 128;
  items[1].id = "b";
  items[1].counted_prompt_tokens = 4100;
  items[1].prompt.params.max_tokens = 128;
  nlohmann::json skipped = nlohmann::json::array();
  Status st = CheckItemsFit("ruler", 4196, false, &items, &skipped);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("b: 4100 prompt tokens + 128 answer tokens = 4228, more than the 4196"),
            std::string::npos)
      << st.message();
  ASSERT_TRUE(CheckItemsFit("ruler", 4196, true, &items, &skipped).ok());
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].id, "a");
  EXPECT_EQ(ReserveTokens(items[0]), 4128);
}

TEST(ContextCheck, UncountedPromptsReserveTheirBytesAsAnUpperBound) {
  Item it;
  it.prompt.messages.push_back({"user", std::string(1000, 'x')});
  it.prompt.params.max_tokens = 500;
  EXPECT_EQ(ReserveTokens(it), 64 + 1000 + 8 + 500);
}

}  // namespace
}  // namespace evalrun
