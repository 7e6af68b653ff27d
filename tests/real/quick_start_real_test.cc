// The quick-start card's shape against a real llama-server: every part at
// small counts, run end to end by the real binary.
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealQuickStart : public RealLaneTest {};

TEST_F(RealQuickStart, EveryPartAtSmallCounts) {
  LlamaServer* s = StartServer({.parallel = 4, .ctx = 32768});
  nlohmann::json parts = {
      {"mmlupro", {{"questions", 8}, {"max_tokens", 64}, {"prompt", "letter"}, {"extract", "first-letter"}}},
      {"gpqa", {{"questions", 4}, {"max_tokens", 64}}},
      {"ifeval", {{"prompts", 4}, {"max_tokens", 128}}},
      {"ruler", {{"lengths", {2048}}, {"tasks", {"niah_single_1", "niah_multikey_2", "cwe", "fwe"}},
                 {"samples_per_task", 1}}}};
  const std::string card = WriteCardJson(Card(Server(s), parts));
  BinaryResult r = Run({"--card", card, "--job", "qs"}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto res = Results("qs");
  for (const char* p : {"mmlupro", "gpqa", "ifeval", "ruler"}) {
    ASSERT_TRUE(res["parts"].contains(p)) << p;
    EXPECT_EQ(res["parts"][p]["complete"], true) << p;
    EXPECT_EQ(res["parts"][p]["failed"], 0) << p;
  }
  EXPECT_EQ(res["server"]["build_info"].get<std::string>().rfind("b", 0), 0u);
  EXPECT_EQ(res["server"]["total_slots"], 4);
  EXPECT_NE(r.out.find("mmlupro"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace evalrun::testing
