// Long prompts on a real llama-server whose slots share one KV cache
// (-c 8192 -np 4 --kv-unified): ~4K RULER prompts run at most two at a time
// and all answer (the server log free of "failed to find free space in the
// KV cache"); 1K prompts run four at once.
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealKvCache : public RealLaneTest {
 protected:
  nlohmann::json Ruler(int length, int samples) {
    return {{"ruler", {{"lengths", {length}}, {"tasks", {"niah_single_1", "niah_multikey_2"}},
                       {"samples_per_task", samples}}}};
  }
};

TEST_F(RealKvCache, FourKPromptsOnAnEightKSharedCacheAllAnswer) {
  LlamaServer* s = StartServer({.parallel = 4, .ctx = 8192, .kv_unified = true});
  MetricsPoller poll(s->origin());
  poll.Start();
  const std::string card = WriteCardJson(Card(Server(s), Ruler(4096, 4)));
  BinaryResult r = Run({"--card", card, "--job", "kv4k"}, 900);
  poll.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = Results("kv4k")["parts"]["ruler"];
  EXPECT_EQ(p["n"], 8);
  EXPECT_EQ(p["failed"], 0);
  EXPECT_EQ(p["complete"], true);
  EXPECT_EQ(p["admission"]["kv_cache"], "shared") << p["admission"].dump();
  EXPECT_EQ(p["admission"]["admission"], true);
  EXPECT_EQ(p["admission"]["capacity_returns"], 0) << "a request overflowed the cache";
  EXPECT_LE(p["max_in_flight"].get<int>(), 2);
  EXPECT_LE(poll.max_processing(), 2);
  EXPECT_EQ(s->Log().find("failed to find free space in the KV cache"), std::string::npos);
  EXPECT_EQ(s->Log().find("Context size has been exceeded"), std::string::npos);
  for (const auto& l : Samples("kv4k", "ruler")) {
    ASSERT_TRUE(l["prompt_tokens"].is_number()) << l.dump();
    EXPECT_LE(l["prompt_tokens"].get<int>() + l["max_tokens"].get<int>(), 4096) << l["id"];
  }
}

TEST_F(RealKvCache, OneKPromptsRunFourAtOnce) {
  LlamaServer* s = StartServer({.parallel = 4, .ctx = 8192, .kv_unified = true});
  MetricsPoller poll(s->origin());
  poll.Start();
  const std::string card = WriteCardJson(Card(Server(s), Ruler(1024, 8)));
  BinaryResult r = Run({"--card", card, "--job", "kv1k"}, 900);
  poll.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = Results("kv1k")["parts"]["ruler"];
  EXPECT_EQ(p["n"], 16);
  EXPECT_EQ(p["failed"], 0);
  EXPECT_EQ(p["admission"]["admission"], false) << "4 x 1024 fit in 8192: nothing to admit";
  EXPECT_EQ(p["max_in_flight"], 4);
  EXPECT_EQ(poll.max_processing(), 4);
  EXPECT_EQ(poll.max_deferred(), 0);
}

}  // namespace
}  // namespace evalrun::testing
