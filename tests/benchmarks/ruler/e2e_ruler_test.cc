// RULER end to end: prompts sized with the fake server's tokenizer.
#include <map>

#include "scorers/ruler/ruler_metrics.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

class E2eRuler : public E2eTest {};

// The `fit` profile: every sample sized on its own, within ~5 % of its length.
TEST_F(E2eRuler, TheFitProfileFillsItsLengthsTightlyAndScoresMatchTheMetric) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  std::atomic<int> k{0};
  server.SetResponder([&](const nlohmann::json&) {
    FakeReply r;
    r.content = (++k % 2) ? "I do not know." : "1234567";
    if (k % 5 == 0) r.finish_reason = "length";
    return r;
  });
  std::string card = WriteCard(server.base_url(), "4", R"({"ruler": {
      "lengths": [2048, 4096], "tasks": ["niah_single_1", "niah_multikey_2", "vt", "cwe", "fwe"],
      "samples_per_task": 2, "profile": "fit"}})");
  BinaryResult r = Run({"--card", card, "--job", "r"}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Samples("r", "ruler");
  ASSERT_EQ(samples.size(), 5u * 2 * 2);
  std::map<std::string, int> per;
  for (const auto& s : samples) {
    int length = s["length"], prompt = s["prompt_tokens"], budget = s["max_tokens"];
    EXPECT_LE(prompt + budget, length) << s["id"];
    EXPECT_GE(prompt + budget, length * 0.95) << s["id"] << " does not fill its length";
    EXPECT_EQ(s["prompt_tokens_counted"], prompt) << "the server's usage disagrees with its tokenizer";
    std::vector<std::string> gold = s["gold"];
    EXPECT_DOUBLE_EQ(s["score"].get<double>(), StringMatchAll(s["response"].get<std::string>(), gold));
    EXPECT_EQ(s["cut_off"].get<bool>(), s["finish_reason"] == "length");
    ++per[s["task"].get<std::string>() + "/" + std::to_string(length)];
  }
  EXPECT_EQ(per.size(), 10u);
  auto res = Results("r")["parts"]["ruler"];
  EXPECT_EQ(res["n"], 20);
  ASSERT_TRUE(res["lengths"].contains("2048"));
  ASSERT_TRUE(res["lengths"].contains("4096"));
  EXPECT_EQ(res["lengths"]["4096"]["tasks"].size(), 5u);
  EXPECT_GT(res["info"]["tokenizer_calls"].get<int>(), 0);

  // Same seed: the same prompts (by sha256) in a second job.
  ASSERT_EQ(Run({"--card", card, "--job", "r2"}, 300).exit_code, 0);
  std::map<std::string, std::string> sha;
  for (const auto& s : samples) sha[s["id"]] = s["prompt_sha256"];
  for (const auto& s : Samples("r2", "ruler")) EXPECT_EQ(sha[s["id"]], s["prompt_sha256"]) << s["id"];
}

// The default profile, NVIDIA's prepare.py sizing: every prompt + its answer
// budget within its length (not always tight: NVIDIA steps down by whole
// increments), the profile recorded.
TEST_F(E2eRuler, TheDefaultProfileIsNvidiasAndEveryPromptFits) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  std::string card = WriteCard(server.base_url(), "4", R"({"ruler": {
      "lengths": [2048, 4096], "tasks": ["niah_single_1", "niah_multikey_2", "vt", "cwe", "fwe"],
      "samples_per_task": 2}})");
  BinaryResult r = Run({"--card", card, "--job", "n"}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto res = Results("n")["parts"]["ruler"];
  EXPECT_EQ(res["info"]["profile"], "nvidia");
  int scored = 0;
  for (const auto& s : Samples("n", "ruler")) {
    int length = s["length"], prompt = s["prompt_tokens"], budget = s["max_tokens"];
    EXPECT_LE(prompt + budget, length) << s["id"];
    EXPECT_GE(prompt + budget, length * 0.75) << s["id"];
    EXPECT_EQ(s["prompt_tokens_counted"], prompt) << "the server's usage disagrees with its tokenizer";
    ++scored;
  }
  // What cannot be prepared at a length is skipped with its reason, never silently.
  const int skipped = static_cast<int>(res["info"]["skipped"].size());
  EXPECT_EQ(scored + 2 * skipped, 5 * 2 * 2) << res["info"].dump();
  for (const auto& sk : res["info"]["skipped"]) EXPECT_FALSE(sk["reason"].get<std::string>().empty());
}

TEST_F(E2eRuler, ServerThatCannotCountFailsClearly) {
  FakeServerOptions o;
  o.tokenize_endpoints = false;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  std::string card = WriteCard(server.base_url(), "2", R"({"ruler": {"lengths": [2048], "tasks": ["vt"]}})");
  BinaryResult r = Run({"--card", card, "--job", "x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot count tokens"), std::string::npos) << r.err;
  EXPECT_EQ(server.chat_requests(), 0);
}

}  // namespace
}  // namespace evalrun::testing
