// IFEval end to end: re-scoring the official GPT-4 responses through
// `evalrun score` (official response format: prompt + response) gives the
// official checker's verdicts for every prompt; a live run counts cut-offs.
#include <filesystem>
#include <map>
#include <set>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

class E2eIfeval : public E2eTest {};

TEST_F(E2eIfeval, ScoreOfficialResponsesGivesOfficialVerdicts) {
  const std::string fixtures = FixturePath("ifeval");
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

// Upstream's current GPT-4 response file was made from an older wording of
// one prompt (line 340, key 2785: "at least one placeholder" where the
// shipped dataset says "at least 3 placeholders"). Lines are matched by
// exact prompt text, so the error names the line and says that --input
// takes the responses' own revision of the dataset.
TEST_F(E2eIfeval, ResponsesOfAnotherDatasetRevisionNameTheLineAndInput) {
  const std::string fixtures = FixturePath("ifeval");
  std::string text = ReadFile(fixtures + "/gpt4_responses.jsonl");
  size_t line_start = 0;
  for (int i = 1; i < 340; ++i) line_start = text.find('\n', line_start) + 1;
  const std::string old_wording = "must also contain at least 3 placeholders";
  const size_t at = text.find(old_wording, line_start);
  ASSERT_LT(at, text.find('\n', line_start));
  text.replace(at, old_wording.size(), "must also contain at least one placeholder");
  const std::string responses = dir_ + "/input_response_data_gpt4_20231107_145030.jsonl";
  WriteFile(responses, text);
  std::string card = WriteCard("http://127.0.0.1:1/v1", "1", R"({"ifeval": {}})");
  BinaryResult r = RunBinary({EvalrunBinary(), "score", "--card", card, "--part", "ifeval", "--responses", responses,
                              "--out", dir_ + "/runs", "--job", "s", "--data-dir", DatasetsDir()},
                             300);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(responses + ":340: no prompt of " + DatasetsDir() +
                       "/ifeval/input_data.jsonl has this line's prompt text"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("another revision of the dataset: pass that revision's file with --input FILE"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/s"));
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
