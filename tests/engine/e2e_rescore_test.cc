// End to end: a hand edit of samples.jsonl that flips a
// verdict does not change the score unseen on resume. Resume scores every
// stored answer again (evals/run/rescore_stored.h), warns naming the file
// and the id, and the re-scored verdict counts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

class E2eRescore : public E2eTest {};

TEST_F(E2eRescore, AFlippedVerdictIsRescoredOnResumeWithAWarning) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) { return FakeReply{"Answer: A", "", "stop"}; });
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 6, "max_tokens": 64}})");
  BinaryResult first = Run({"--card", card, "--job", "v"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json score = Results("v")["parts"]["mmlupro"]["score"];

  const std::string path = dir_ + "/runs/v/mmlupro/samples.jsonl";
  std::vector<nlohmann::json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 6u);
  lines[2]["correct"] = !lines[2]["correct"].get<bool>();
  std::string edited;
  for (const auto& l : lines) edited += l.dump() + "\n";
  WriteFile(path, edited);
  const int asked = server.chat_requests();

  BinaryResult again = Run({"--card", card, "--job", "v"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.chat_requests(), asked) << "nothing was left to ask";
  EXPECT_NE(again.err.find("warning: " + path + ": 1 stored verdict differs from the score of the stored answer (id " +
                           lines[2]["id"].get<std::string>() + "); the re-scored verdict counts"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(Results("v")["parts"]["mmlupro"]["score"], score) << "the hand edit changed the score";
  EXPECT_EQ(ReadFile(path), edited) << "the file is left as it is";

  // Untouched answers resume without a word about verdicts.
  BinaryResult third = Run({"--card", card, "--job", "w"});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  BinaryResult resumed = Run({"--card", card, "--job", "w"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.err.find("stored verdict"), std::string::npos) << resumed.err;
}

}  // namespace
}  // namespace evalrun::testing
