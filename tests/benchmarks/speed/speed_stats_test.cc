// The speed part's statistics (evals/benchmarks/speed/speed_stats.h) and its step
// plan against the server's limits (evals/benchmarks/speed/speed_plan.h).
#include <gtest/gtest.h>

#include "evals/benchmarks/speed/speed_plan.h"
#include "evals/benchmarks/speed/speed_stats.h"

namespace evalrun::testing {
namespace {

TEST(SpeedStats, MedianWithMinMaxAndN) {
  nlohmann::json s = SpreadJson({3, 1, 2});
  EXPECT_EQ(s["median"], 2.0);
  EXPECT_EQ(s["min"], 1.0);
  EXPECT_EQ(s["max"], 3.0);
  EXPECT_EQ(s["n"], 3);
  EXPECT_EQ(SpreadJson({10, 20})["median"], 15.0);  // two runs: the middle, no p99
  EXPECT_TRUE(SpreadJson({})["median"].is_null());
  EXPECT_EQ(SpreadJson({})["n"], 0);
}

TEST(SpeedStats, ChunkGapsArePercentilesWithinOneRequest) {
  std::vector<double> t;
  for (int i = 0; i <= 10; ++i) t.push_back(i * 0.01);  // 10 gaps of 10 ms
  t.push_back(0.2);                                      // one of 100 ms
  nlohmann::json g = ChunkGapsJson(t);
  EXPECT_EQ(g["n"], 11);
  EXPECT_NEAR(g["p50_ms"].get<double>(), 10, 1e-9);
  EXPECT_NEAR(g["max_ms"].get<double>(), 100, 1e-9);
  EXPECT_TRUE(g["p99_ms"].is_null());  // fewer than 100 gaps
  EXPECT_TRUE(ChunkGapsJson({0.5}).is_null());
  std::vector<double> many;
  for (int i = 0; i < 200; ++i) many.push_back(i * 0.001);
  EXPECT_NEAR(ChunkGapsJson(many)["p99_ms"].get<double>(), 1, 1e-9);
}

TEST(SpeedStats, BothClocks) {
  // 512 tokens, first at 0.5 s, last at 0.5 + 511 x 0.02 s; the server: 512 in 10220 ms.
  RequestRates r = ComputeRates(2048, 512, 0.5, 0.5 + 511 * 0.02, 2048, 400, 512, 10220);
  EXPECT_NEAR(r.client_decode_tps, 50, 1e-9);
  EXPECT_NEAR(r.server_decode_tps, 512 / 10.22, 1e-9);
  EXPECT_NEAR(r.client_prefill_tps, 4096, 1e-9);
  EXPECT_NEAR(r.server_prefill_tps, 5120, 1e-9);
  EXPECT_NEAR(*GapPct(110, 100), 10, 1e-9);
  EXPECT_FALSE(GapPct(0, 100).has_value());
  EXPECT_LT(ComputeRates(10, 1, 0.1, 0.1, 0, 0, 0, 0).client_decode_tps, 0);  // one token: no decode
}

TEST(SpeedPlan, TheFullContextDepthIsReducedToLeaveRoomForTheAnswer) {
  SpeedOptions o;
  SpeedLimits l{131072, 4, false, 0};
  std::vector<SpeedStep> steps = PlanSpeedSteps(o, l);
  const SpeedStep* last = nullptr;
  for (const auto& s : steps)
    if (s.name == "ctx/131072") last = &s;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->target_prompt_tokens, 130048);
  EXPECT_TRUE(last->refused.empty());
  EXPECT_NE(last->note.find("130048"), std::string::npos);
  for (const auto& s : steps) {
    if (s.name == "ctx/65536") {
      EXPECT_EQ(s.target_prompt_tokens, 65536);
    }
  }
}

TEST(SpeedPlan, AStepTooLongForTheSlotIsRefusedNamingIt) {
  SpeedOptions o;
  SpeedLimits l{40000, 4, false, 0};
  for (const auto& s : PlanSpeedSteps(o, l)) {
    if (s.name == "ctx/65536" || s.name == "ctx/131072") {
      EXPECT_EQ(s.refused.rfind(s.name + ": ", 0), 0u) << s.refused;
      EXPECT_NE(s.refused.find("40000"), std::string::npos);
    } else if (s.name != "conc/C8") {
      EXPECT_TRUE(s.refused.empty()) << s.name << ": " << s.refused;
    }
  }
}

TEST(SpeedPlan, LevelsAboveTheSlotsRunWithANoteAndAnOverfullSharedCacheIsRefused) {
  SpeedOptions o;
  o.steps = {"conc"};
  // 2 slots sharing 3000 cells: at most 2 requests of 1024 run at once, whatever the level.
  std::vector<SpeedStep> steps = PlanSpeedSteps(o, SpeedLimits{8192, 2, true, 3000});
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_TRUE(steps[0].refused.empty());                                 // C1: 1024 tokens
  EXPECT_TRUE(steps[1].refused.empty());                                 // C2: 2048 <= 3000
  EXPECT_TRUE(steps[1].note.empty()) << steps[1].note;
  for (int i : {2, 3}) {                                                 // C4, C8 on 2 slots: queued, not refused
    EXPECT_TRUE(steps[i].refused.empty()) << steps[i].refused;
    EXPECT_EQ(steps[i].concurrency, i == 2 ? 4 : 8);
  }
  EXPECT_EQ(steps[2].note, "4 requests at once on 2 slots: the 2 beyond the slots queue in the server, and their "
                           "time to first token includes that wait (queue time)");
  EXPECT_NE(steps[3].note.find("8 requests at once on 2 slots: the 6 beyond the slots queue"), std::string::npos)
      << steps[3].note;
  std::vector<SpeedStep> shared = PlanSpeedSteps(o, SpeedLimits{8192, 4, true, 3000});
  EXPECT_NE(shared[2].refused.find("share"), std::string::npos) << shared[2].refused;  // C4: 4096 > 3000
  EXPECT_EQ(shared[2].refused.find("assumed"), std::string::npos);
  // C8 on 4 slots: the 4 running at once need 4096 cells (the 4 queued hold none).
  EXPECT_NE(shared[3].refused.find("conc/C8: 4 requests of 1024 tokens need 4096"), std::string::npos)
      << shared[3].refused;
  std::vector<SpeedStep> assumed = PlanSpeedSteps(o, SpeedLimits{8192, 4, true, 3000, true});
  EXPECT_NE(assumed[2].refused.find("set server.kv_cache to \"per_slot\""), std::string::npos) << assumed[2].refused;
}

}  // namespace
}  // namespace evalrun::testing
