// The context one request can have, checked before any request, and the
// real server's refusal of a prompt longer than it counted apart.
#include "tests/real/counting_proxy.h"
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealContext : public RealLaneTest {};

TEST_F(RealContext, ARulerLengthOverTheSlotContextStopsBeforeAnyRequest) {
  // stories260K has a 2,048-token training context: each slot gets 2048.
  LlamaServer* s = StartServer({.model = "stories260K.gguf", .parallel = 1, .ctx = 2048});
  CountingProxy proxy(s->origin());
  ASSERT_TRUE(proxy.Start());
  const std::string card = WriteCardJson(
      Card({{"base_url", proxy.base_url()}, {"slots", "auto"}},
           {{"ruler", {{"lengths", {4096}}, {"tasks", {"niah_single_1"}}, {"samples_per_task", 2}}}}));
  BinaryResult r = Run({"--card", card, "--job", "over"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("length 4096"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2048"), std::string::npos) << r.err;
  EXPECT_EQ(proxy.Count("POST /v1/chat/completions"), 0);
  EXPECT_EQ(proxy.Count("POST /tokenize"), 0) << "nothing is prepared for a length that cannot run";
}

TEST_F(RealContext, OverContextSkipLeavesTheLengthOutAndRunsTheRest) {
  LlamaServer* s = StartServer({.model = "stories260K.gguf", .parallel = 1, .ctx = 2048});
  const std::string card = WriteCardJson(Card(
      Server(s), {{"ruler", {{"lengths", {1024, 4096}}, {"tasks", {"niah_single_1"}}, {"samples_per_task", 1},
                             {"over_context", "skip"}}}}));
  BinaryResult r = Run({"--card", card, "--job", "skip"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = Results("skip")["parts"]["ruler"];
  EXPECT_EQ(p["n"], 1);
  bool skipped_4096 = false;
  for (const auto& sk : p["info"]["skipped"]) skipped_4096 |= sk.value("length", 0) == 4096;
  EXPECT_TRUE(skipped_4096) << p["info"].dump();
}

TEST_F(RealContext, APromptTheServerRefusesAsTooLongIsCountedApartAndNotAskedAgain) {
  // 512 tokens a slot: with the tiny vocabulary many MMLU-Pro prompts are longer.
  LlamaServer* s = StartServer({.parallel = 1, .ctx = 512});
  CountingProxy proxy(s->origin());
  ASSERT_TRUE(proxy.Start());
  const std::string card = WriteCardJson(Card({{"base_url", proxy.base_url()}, {"slots", "auto"}},
                                              {{"mmlupro", {{"questions", 12}, {"max_tokens", 8}}}}));
  BinaryResult r = Run({"--card", card, "--job", "tl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = Results("tl")["parts"]["mmlupro"];
  ASSERT_GT(p["too_long"].get<int>(), 0) << "no prompt was longer than 512 tokens; make the slot smaller";
  EXPECT_EQ(p["failed"], 0);
  EXPECT_EQ(p["n"], 12);
  EXPECT_EQ(proxy.Count("POST /v1/chat/completions"), 12) << "a too-long prompt was asked again";
  int too_long = 0;
  for (const auto& l : Samples("tl", "mmlupro")) {
    if (!l.value("too_long", false)) continue;
    ++too_long;
    EXPECT_EQ(l["correct"], false);
    EXPECT_EQ(l["no_answer"], false);
    EXPECT_EQ(l["server_n_ctx"], 512);
    EXPECT_GT(l["server_prompt_tokens"].get<int>(), 512 - 8);
    EXPECT_EQ(l["attempts"], 1);
  }
  EXPECT_EQ(too_long, p["too_long"].get<int>());
  // Asked again on resume? No: the job is complete.
  BinaryResult again = Run({"--card", card, "--job", "tl"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(proxy.Count("POST /v1/chat/completions"), 12);
}

}  // namespace
}  // namespace evalrun::testing
