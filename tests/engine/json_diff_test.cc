#include "evals/base/json_diff.h"

#include <gtest/gtest.h>

namespace evalrun {
namespace {

TEST(JsonChangesTest, OneLinePerChangedLeaf) {
  const auto a = nlohmann::json::parse(R"({"card": {"parts": {"mmlupro": {"max_tokens": 64}}, "thinking": false},
                                           "model_path": "a.gguf", "datasets": {"mmlupro": "x"}})");
  const auto b = nlohmann::json::parse(R"({"card": {"parts": {"mmlupro": {"max_tokens": 32}}, "thinking": false,
                                           "max_failed": 2}, "model_path": "b.gguf", "datasets": {"mmlupro": "x"}})");
  EXPECT_EQ(JsonChanges(a, b), (std::vector<std::string>{"card.max_failed: (absent) -> 2",
                                                          "card.parts.mmlupro.max_tokens: 64 -> 32",
                                                          "model_path: \"a.gguf\" -> \"b.gguf\""}));
  EXPECT_TRUE(JsonChanges(a, a).empty());
  EXPECT_EQ(JsonChanges(nullptr, a), (std::vector<std::string>{"(top level): null -> " + a.dump().substr(0, 57) + "..."}));
}

TEST(JsonChangesTest, LongListsAreCut) {
  nlohmann::json a, b;
  for (int i = 0; i < 15; ++i) {
    a["k" + std::to_string(i + 10)] = i;
    b["k" + std::to_string(i + 10)] = i + 1;
  }
  auto c = JsonChanges(a, b, 3);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], "k10: 0 -> 1");
  EXPECT_EQ(c[3], "... and 12 more");
}

}  // namespace
}  // namespace evalrun
