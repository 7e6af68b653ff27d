// IFEval end to end: re-scoring the official GPT-4 responses through
// `evalrun score` (official response format: prompt + response) gives the
// official checker's verdicts for every prompt; a live run counts cut-offs.
#include <map>
#include <set>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

class E2eIfeval : public E2eTest {};

TEST_F(E2eIfeval, ScoreOfficialResponsesGivesOfficialVerdicts) {
  const std::string fixtures = std::string(EVALRUN_SOURCE_DIR) + "/tests/fixtures/ifeval";
  std::string card = WriteCard("http://127.0.0.1:1/v1", "1", R"({"ifeval": {}})");
  BinaryResult r = RunBinary({EvalrunBinary(), "score", "--card", card, "--part", "ifeval", "--responses",
                              fixtures + "/gpt4_responses.jsonl", "--input", DatasetsDir() + "/ifeval/input_data.jsonl",
                              "--out", dir_ + "/runs", "--job", "s", "--data-dir", DatasetsDir()},
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> official;
  for (const auto& v : Lines(fixtures + "/official_verdicts.jsonl")) official[std::to_string(v["key"].get<int64_t>())] = v;
  auto samples = Samples("s", "ifeval");
  ASSERT_EQ(samples.size(), 541u);
  for (const auto& s : samples) {
    const auto& o = official.at(s["id"].get<std::string>());
    EXPECT_EQ(s["strict"]["follow_instruction_list"], o["strict"]) << "key " << s["id"];
    EXPECT_EQ(s["loose"]["follow_instruction_list"], o["loose"]) << "key " << s["id"];
  }
  auto p = Results("s")["parts"]["ifeval"];
  EXPECT_EQ(p["n"], 541);
  EXPECT_NEAR(p["prompt_strict"].get<double>(), 417.0 / 541, 1e-6);
  EXPECT_NEAR(p["prompt_loose"].get<double>(), 431.0 / 541, 1e-6);
  EXPECT_NEAR(p["inst_strict"].get<double>(), 698.0 / 834, 1e-6);
  EXPECT_NEAR(p["inst_loose"].get<double>(), 714.0 / 834, 1e-6);
  EXPECT_EQ(p["instructions"].size(), 25u);
}

TEST_F(E2eIfeval, LiveRunCountsCutOffsAsFailures) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  std::atomic<int> k{0};
  server.SetResponder([&](const nlohmann::json&) {
    FakeReply r;
    r.content = "hello world, this is an answer";
    if (++k % 4 == 0) r.finish_reason = "length";
    return r;
  });
  std::string card = WriteCard(server.base_url(), "4", R"({"ifeval": {"prompts": 20, "max_tokens": 256}})");
  BinaryResult r = Run({"--card", card, "--job", "live"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Samples("live", "ifeval");
  ASSERT_EQ(samples.size(), 20u);
  int cut = 0;
  for (const auto& s : samples) {
    if (s["finish_reason"] == "length") {
      ++cut;
      for (const auto& b : s["strict"]["follow_instruction_list"]) EXPECT_FALSE(b.get<bool>());
      for (const auto& b : s["loose"]["follow_instruction_list"]) EXPECT_FALSE(b.get<bool>());
    }
    EXPECT_TRUE(s.contains("prompt"));
    EXPECT_EQ(s["instruction_id_list"].size(), s["strict"]["follow_instruction_list"].size());
  }
  EXPECT_EQ(cut, 5);
  EXPECT_EQ(Results("live")["parts"]["ifeval"]["cut_off"], 5);
  // Two runs pick the same 20 prompts.
  ASSERT_EQ(Run({"--card", card, "--job", "live2"}).exit_code, 0);
  std::set<std::string> a, b;
  for (const auto& s : samples) a.insert(s["id"]);
  for (const auto& s : Samples("live2", "ifeval")) b.insert(s["id"]);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace evalrun::testing
