// End to end: the real evalrun binary against the fake llama-server.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

class E2eMmluPro : public E2eTest {
 protected:
  std::string WriteCard(const std::string& base_url, const std::string& slots, int questions,
                        const std::string& extra_part = "") {
    return E2eTest::WriteCard(base_url, slots,
                              R"({"mmlupro": {"questions": )" + std::to_string(questions) +
                                  R"(, "max_tokens": 64)" + extra_part + "}}");
  }
  std::vector<nlohmann::json> Samples(const std::string& job) { return E2eTest::Samples(job, "mmlupro"); }
};

TEST_F(E2eMmluPro, FourSlotsCutOffsAndScores) {
  FakeServerOptions o;
  o.slots = 4;
  o.health_503_count = 2;  // "loading" first
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  // Every third question is cut off at its limit; the others answer "B".
  std::atomic<int> n{0};
  server.SetResponder([&](const nlohmann::json&) {
    FakeReply r;
    r.delay_ms = 30;
    if (++n % 3 == 0) {
      r.content = "B because";
      r.finish_reason = "length";
    } else {
      r.content = "**B**";
    }
    return r;
  });
  std::string card = WriteCard(server.base_url(), "\"auto\"", 40);
  BinaryResult r = Run({"--card", card, "--out", dir_ + "/runs", "--job", "one", "--data-dir", DatasetsDir()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.max_running(), 4);
  EXPECT_EQ(server.max_waiting(), 0) << "a request waited in the server's queue";
  EXPECT_GE(server.health_requests(), 3);

  auto samples = Samples("one");
  ASSERT_EQ(samples.size(), 40u);
  int cut = 0, correct = 0, expect_correct = 0;
  std::set<std::string> ids;
  for (const auto& s : samples) {
    ids.insert(s["id"].get<std::string>());
    bool is_cut = s["finish_reason"] == "length";
    cut += is_cut;
    EXPECT_EQ(s["cut_off"].get<bool>(), is_cut);
    if (is_cut) {
      EXPECT_FALSE(s["correct"].get<bool>()) << "a cut-off answer counted as correct";
    }
    if (!is_cut && s["gold"] == "B") ++expect_correct;
    correct += s["correct"].get<bool>();
    for (const char* k : {"id", "category", "prompt_sha256", "response", "reasoning", "finish_reason",
                          "prompt_tokens", "completion_tokens", "extracted", "correct", "latency_ms", "timings"})
      EXPECT_TRUE(s.contains(k)) << k;
  }
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_EQ(correct, expect_correct);

  auto results = nlohmann::json::parse(ReadFile(dir_ + "/runs/one/results.json"));
  EXPECT_EQ(results["schema"], "evalrun.results/1");
  const auto& p = results["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 40);
  EXPECT_EQ(p["cut_off"], cut);
  EXPECT_EQ(p["correct"], correct);
  EXPECT_EQ(p["failed"], 0);
  EXPECT_NEAR(p["score"].get<double>(), correct / 40.0, 1e-6);
  EXPECT_EQ(p["max_in_flight"], 4);
  EXPECT_TRUE(p["categories"].size() >= 10) << p["categories"].dump();
  auto run = nlohmann::json::parse(ReadFile(dir_ + "/runs/one/run.json"));
  EXPECT_EQ(run["server"]["total_slots"], 4);
  EXPECT_EQ(run["server"]["build_info"], "b10470-34af94c");
  EXPECT_EQ(run["card_sha256"].get<std::string>().size(), 64u);
  EXPECT_NE(r.out.find("mmlupro"), std::string::npos) << r.out;

  // Requests carried greedy sampling and the thinking switch.
  auto reqs = server.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs[0]["temperature"], 0.0);
  EXPECT_EQ(reqs[0]["top_k"], 1);
  EXPECT_EQ(reqs[0]["seed"], 42);
  EXPECT_EQ(reqs[0]["max_tokens"], 64);
  EXPECT_EQ(reqs[0]["chat_template_kwargs"]["enable_thinking"], false);
}

TEST_F(E2eMmluPro, SameSeedSameQuestionsAndResume) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  std::string card = WriteCard(server.base_url(), "2", 25);
  ASSERT_EQ(Run({"--card", card, "--out", dir_ + "/runs", "--job", "a", "--data-dir", DatasetsDir()}).exit_code, 0);
  ASSERT_EQ(Run({"--card", card, "--out", dir_ + "/runs", "--job", "b", "--data-dir", DatasetsDir()}).exit_code, 0);
  auto a = Samples("a"), b = Samples("b");
  std::set<std::string> ia, ib;
  for (auto& s : a) ia.insert(s["id"].get<std::string>());
  for (auto& s : b) ib.insert(s["id"].get<std::string>());
  EXPECT_EQ(ia.size(), 25u);
  EXPECT_EQ(ia, ib);
  // Running job "a" again asks nothing: every id is answered.
  int before = server.chat_requests();
  BinaryResult again = Run({"--card", card, "--out", dir_ + "/runs", "--job", "a", "--data-dir", DatasetsDir()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.chat_requests(), before);
  EXPECT_EQ(Samples("a").size(), 25u);
}

TEST_F(E2eMmluPro, UnreachableServerExits2WithHowToStartOne) {
  std::string card = WriteCard("http://127.0.0.1:1/v1", "4", 5);
  BinaryResult r = Run({"--card", card, "--out", dir_ + "/runs", "--data-dir", DatasetsDir()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("llama-server"), std::string::npos) << r.err;
}

TEST_F(E2eMmluPro, BadCardExits1NamingTheField) {
  nlohmann::json card = BareCard("http://127.0.0.1:1/v1", {{"mmlupro", {{"max_tokens", "1k"}}}});
  card["name"] = "x";
  const std::string path = WriteCardFile(dir_ + "/bad.json", card);
  BinaryResult r = Run({"--card", path, "--data-dir", DatasetsDir(), "--out", dir_ + "/runs"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("parts.mmlupro.max_tokens: expected an integer, got \"1k\""), std::string::npos) << r.err;
}

TEST_F(E2eMmluPro, ScoreCommandReScoresRecordedAnswers) {
  std::string card = WriteCard("http://127.0.0.1:1/v1", "4", 5, R"(, "extract": "official")");
  std::string responses = dir_ + "/responses.jsonl";
  WriteFile(responses,
            "{\"id\": 70, \"response\": \"Let's see. The answer is (A).\"}\n"
            "{\"id\": \"71\", \"response\": \"Answer: C\", \"finish_reason\": \"stop\"}\n"
            "{\"id\": 72, \"response\": \"The answer is (B)\", \"finish_reason\": \"length\"}\n");
  BinaryResult r = RunBinary({EvalrunBinary(), "score", "--card", card, "--part", "mmlupro", "--responses",
                              responses, "--out", dir_ + "/runs", "--job", "s", "--data-dir", DatasetsDir()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto results = nlohmann::json::parse(ReadFile(dir_ + "/runs/s/results.json"));
  const auto& p = results["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 3);
  EXPECT_EQ(p["cut_off"], 1);
  auto samples = Samples("s");
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0]["extracted"], "A");
  EXPECT_EQ(samples[1]["extracted"], "C");
  EXPECT_FALSE(samples[2]["correct"].get<bool>());
}

}  // namespace
}  // namespace evalrun::testing
