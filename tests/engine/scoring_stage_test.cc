// The scoring stage (evals/run/scoring_stage.h) and what rests on it: the
// answer journal, resume of answers not yet scored, and the part-owned
// request settings (evals/run/request_settings.h) as the server sees them.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "evals/run/answer_journal.h"
#include "evals/run/scoring_stage.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

FakeServerOptions WithSlots(int slots) {
  FakeServerOptions o;
  o.slots = slots;
  return o;
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

TEST(ScoringStage, SubmitReturnsAtOnceScoresAtItsConcurrencyAndSinksOneAtATime) {
  std::atomic<int> scoring{0}, most{0}, in_sink{0};
  bool sink_overlapped = false;
  std::vector<size_t> sunk;
  std::mutex mu;
  ScoringStage stage(
      {3, 0},
      [&](size_t i, UnscoredAnswer a) {
        const int now = ++scoring;
        int m = most.load();
        while (now > m && !most.compare_exchange_weak(m, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        --scoring;
        SampleRecord r = std::move(a.record);
        r.id = std::to_string(i);
        return r;
      },
      [&](size_t i, SampleRecord r) {
        if (++in_sink > 1) sink_overlapped = true;
        EXPECT_EQ(r.id, std::to_string(i));
        std::lock_guard<std::mutex> l(mu);
        sunk.push_back(i);
        --in_sink;
      },
      nullptr);
  const double t0 = Now();
  for (size_t i = 0; i < 9; ++i) stage.Submit(i, UnscoredAnswer());
  EXPECT_LT(Now() - t0, 0.05);  // nine 100 ms scorings were handed over, none waited for
  stage.Wait();
  const double took = Now() - t0;
  EXPECT_EQ(stage.sunk(), 9);
  EXPECT_EQ(stage.backlog(), 0);
  EXPECT_EQ(most.load(), 3);
  EXPECT_FALSE(sink_overlapped);
  EXPECT_GE(took, 0.29);  // three rounds of three
  std::sort(sunk.begin(), sunk.end());
  EXPECT_EQ(sunk, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

// One scoring thread wakes once for answers that come close together (the
// first at once, the rest gathered), and Wait does not wait out a gathering.
TEST(ScoringStage, AnswersComingCloseTogetherShareAWakeUpAndWaitEndsTheGathering) {
  std::atomic<int> sunk{0};
  ScoringStage stage(
      {1, 0}, [](size_t, UnscoredAnswer a) { return std::move(a.record); }, [&](size_t, SampleRecord) { ++sunk; },
      nullptr);
  stage.Submit(0, UnscoredAnswer());
  for (int k = 0; k < 200 && sunk.load() < 1; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(sunk.load(), 1);  // the first answer woke the feeder at once
  for (size_t i = 1; i <= 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stage.Submit(i, UnscoredAnswer());
  }
  const double t0 = Now();
  stage.Wait();
  EXPECT_LT(Now() - t0, 0.25);  // not the 0.4 s left of the gathering
  EXPECT_EQ(sunk.load(), 11);
  // 11 answers 10 ms apart: the first alone, the rest in one or two more.
  EXPECT_LE(stage.feeder_batches(), 4);
  EXPECT_GE(stage.feeder_batches(), 2);
}

TEST(ScoringStage, ACancelledStageSkipsWhatHasNotStarted) {
  CancelToken cancel;
  std::atomic<int> scored{0};
  ScoringStage stage(
      {1, 0},
      [&](size_t, UnscoredAnswer a) {
        ++scored;
        cancel.Cancel();  // e.g. Ctrl-C while the first is scored
        return std::move(a.record);
      },
      [](size_t, SampleRecord) {}, &cancel);
  for (size_t i = 0; i < 5; ++i) stage.Submit(i, UnscoredAnswer());
  stage.Wait();
  EXPECT_EQ(scored.load(), 1);
  EXPECT_EQ(stage.sunk(), 1);
  EXPECT_EQ(stage.backlog(), 0);
}

TEST(ScoringStage, WorkersRunAtTheirNiceValue) {
  std::atomic<int> seen{-100};
  ScoringStage stage(
      {1, 7},
      [&](size_t, UnscoredAnswer a) {
        errno = 0;
        seen = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
        return std::move(a.record);
      },
      [](size_t, SampleRecord) {}, nullptr);
  stage.Submit(0, UnscoredAnswer());
  stage.Wait();
  EXPECT_EQ(seen.load(), 7);
}

TEST(ScoringOptions, NicedByDefaultOnlyWhenTheServerSharesTheMachine) {
  EXPECT_EQ(ScoringOptionsFor(0, nullptr, true).nice, 10);
  EXPECT_EQ(ScoringOptionsFor(0, nullptr, false).nice, 0);
  EXPECT_EQ(ScoringOptionsFor(0, nullptr, true).concurrency, 1);
  const int five = 5;
  EXPECT_EQ(ScoringOptionsFor(3, &five, true).nice, 5);
  EXPECT_EQ(ScoringOptionsFor(3, &five, true).concurrency, 3);
}

TEST(AnswerJournal, AnAnswerReadsBackAsWritten) {
  UnscoredAnswer a;
  a.record.id = "q1";
  a.record.response = "B) because";
  a.record.reasoning = "hmm";
  a.record.finish_reason = "length";
  a.record.prompt_tokens = 12;
  a.record.completion_tokens = 7;
  a.record.latency_ms = 3.5;
  a.record.attempts = 2;
  a.record.endpoint = "http://127.0.0.1:9/v1";
  a.record.too_long = {true, "too long", 900, 512};
  a.completion.top_logprobs = {{5, "a", -0.1}, {-1, "b", -2.5}};
  UnscoredAnswer b;
  ASSERT_TRUE(DecodeAnswer(EncodeAnswer(a), "x:1", &b).ok());
  EXPECT_EQ(b.record.id, "q1");
  EXPECT_EQ(b.completion.content, "B) because");
  EXPECT_EQ(b.completion.reasoning, "hmm");
  EXPECT_EQ(b.completion.finish_reason, "length");
  EXPECT_EQ(b.completion.prompt_tokens, 12);
  EXPECT_EQ(b.record.attempts, 2);
  EXPECT_EQ(b.record.endpoint, "http://127.0.0.1:9/v1");
  EXPECT_TRUE(b.record.too_long.refused);
  EXPECT_EQ(b.record.too_long.server_n_ctx, 512);
  ASSERT_EQ(b.completion.top_logprobs.size(), 2u);
  EXPECT_EQ(b.completion.top_logprobs[1].id, -1);
  EXPECT_DOUBLE_EQ(b.completion.top_logprobs[1].logprob, -2.5);
  UnscoredAnswer bad;
  EXPECT_FALSE(DecodeAnswer(nlohmann::json{{"id", "q"}, {"prompt_tokens", "x"}}, "f:3", &bad).ok());
}

// ---- End to end: evalrun-test-parts (tests/parts/) against the fake server ----

class E2eScoringStage : public E2eTest {
 protected:
  // The model answers right after `ms` in its slot; each request's start is
  // logged to compute how busy the slots were.
  void Serve(FakeServer* server, int ms) {
    server->SetResponder([this, ms](const nlohmann::json& req) {
      {
        std::lock_guard<std::mutex> l(mu_);
        starts_.push_back(Now());
      }
      const std::string t = req["messages"][0]["content"].get<std::string>();
      const size_t at = t.find("pick the letter ");
      FakeReply r;
      r.content = at == std::string::npos ? "A" : t.substr(at + 16, 1);
      r.delay_ms = ms;
      return r;
    });
  }
  // The slots' busy share over the run: n * service / (slots * span).
  double Occupancy(int slots, int ms) {
    std::lock_guard<std::mutex> l(mu_);
    const double span = *std::max_element(starts_.begin(), starts_.end()) + ms / 1e3 -
                        *std::min_element(starts_.begin(), starts_.end());
    const double occ = starts_.size() * (ms / 1e3) / (slots * span);
    starts_.clear();
    return occ;
  }
  std::vector<std::string> Argv(const std::string& card, const std::string& job) {
    return {TestPartsBinary(), "--card", card, "--job", job, "--out", dir_ + "/runs", "--data-dir", DatasetsDir()};
  }
  static std::string TestPartsBinary() { return evalrun::testing::TestPartsBinary(); }

  std::mutex mu_;
  std::vector<double> starts_;
};

TEST_F(E2eScoringStage, ASlowScorerLeavesTheServerAsBusyAsAnInstantOne) {
  FakeServer server(WithSlots(4));
  ASSERT_TRUE(server.Start());
  const int ms = 250;
  Serve(&server, ms);
  const std::string scoring = R"("scoring": {"concurrency": 4},)";
  std::string card = WriteCard(server.base_url(), "4", R"({"slowscore": {"score_seconds": 0}})", scoring);
  BinaryResult fast = RunBinary(Argv(card, "instant"), 120);
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const double occ_instant = Occupancy(4, ms);
  card = WriteCard(server.base_url(), "4", R"({"slowscore": {"score_seconds": 1}})", scoring);
  const double t0 = Now();
  BinaryResult slow = RunBinary(Argv(card, "slow"), 120);
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const double occ_slow = Occupancy(4, ms);
  EXPECT_GE(Now() - t0, 10.0);  // 40 answers x 1 s on 4 scorers: the scoring took its time...
  // ...and the slots were as busy as with an instant scorer (within 2 %).
  EXPECT_GT(occ_instant, 0.85) << occ_instant;
  EXPECT_NEAR(occ_slow, occ_instant, 0.02) << "instant " << occ_instant << ", slow " << occ_slow;
  auto r = Results("slow")["parts"]["slowscore"];
  EXPECT_EQ(r["n"], 40);
  EXPECT_EQ(r["correct"], 40);
  EXPECT_EQ(Samples("slow", "slowscore").size(), 40u);
  // Every answer scored: the journal is gone, each answer is kept once.
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/slow/slowscore/answers.jsonl"));
}

TEST_F(E2eScoringStage, KilledWhileScoringResumesWithoutAskingAgain) {
  FakeServer server(WithSlots(4));
  ASSERT_TRUE(server.Start());
  Serve(&server, 10);
  const std::string card = WriteCard(server.base_url(), "4", R"({"slowscore": {"score_seconds": 1}})",
                                     R"("scoring": {"concurrency": 2},)");
  const int pid = SpawnBinary(Argv(card, "k"), dir_ + "/k.out", dir_ + "/k.err");
  ASSERT_GT(pid, 0);
  // Wait until every answer is journaled and a few are scored, then kill -9.
  const std::string part = dir_ + "/runs/k/slowscore";
  bool ready = false;
  for (int i = 0; i < 600 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ready = Lines(part + "/answers.jsonl").size() == 40 && std::filesystem::exists(part + "/samples.jsonl") &&
            Lines(part + "/samples.jsonl").size() >= 2;
  }
  ASSERT_TRUE(ready) << ReadFile(dir_ + "/k.err");
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitBinary(pid, 30).signal, SIGKILL);
  const size_t scored_before = Lines(part + "/samples.jsonl").size();
  ASSERT_LT(scored_before, 40u);
  const int asked = server.chat_requests();
  EXPECT_EQ(asked, 40);

  BinaryResult resumed = RunBinary(Argv(card, "k"), 120);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(server.chat_requests(), asked);  // nothing asked again
  EXPECT_NE(resumed.err.find("answered, not scored"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("scoring " + std::to_string(40 - scored_before) + " answers"), std::string::npos)
      << resumed.err;
  auto samples = Samples("k", "slowscore");
  ASSERT_EQ(samples.size(), 40u);
  std::set<std::string> ids;
  for (const auto& s : samples) ids.insert(s["id"].get<std::string>());
  EXPECT_EQ(ids.size(), 40u);
  auto r = Results("k")["parts"]["slowscore"];
  EXPECT_EQ(r["n"], 40);
  EXPECT_EQ(r["correct"], 40);
  EXPECT_EQ(r["complete"], true);
  EXPECT_FALSE(std::filesystem::exists(part + "/answers.jsonl"));
}

// One job asks MMLU-Pro with thinking off and GPQA with thinking on and a
// reasoning budget: each request carries its own part's settings.
TEST_F(E2eScoringStage, EachPartAsksWithItsOwnRequestSettings) {
  FakeServer server(WithSlots(2));
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) { return FakeReply{"The answer is (A)", "", "stop"}; });
  const std::string parts = R"({"mmlupro": {"questions": 6, "max_tokens": 16},
      "gpqa": {"questions": 4, "max_tokens": 16, "thinking": "on", "reasoning_budget": 64,
               "sampling": {"temperature": 0.6, "top_k": 20, "top_p": 0.95, "seed": 7}}})";
  const std::string card = WriteCard(server.base_url(), "2", parts);
  BinaryResult r = Run({"--card", card, "--job", "t"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int mmlu = 0, gpqa = 0;
  for (const nlohmann::json& q : server.requests()) {
    ASSERT_TRUE(q.contains("cache_prompt")) << q.dump();
    EXPECT_EQ(q["cache_prompt"], false);
    const bool thinking = q["chat_template_kwargs"]["enable_thinking"].get<bool>();
    if (thinking) {
      ++gpqa;
      EXPECT_EQ(q["reasoning_budget_tokens"], 64);
      EXPECT_EQ(q["max_tokens"], 64 + 16);
      EXPECT_EQ(q["temperature"], 0.6);
      EXPECT_EQ(q["top_k"], 20);
      EXPECT_EQ(q["seed"], 7);
    } else {
      ++mmlu;
      EXPECT_FALSE(q.contains("reasoning_budget_tokens")) << q.dump();
      EXPECT_EQ(q["max_tokens"], 16);
      EXPECT_EQ(q["temperature"], 0);
      EXPECT_EQ(q["top_k"], 1);
    }
  }
  EXPECT_EQ(mmlu, 6);
  EXPECT_EQ(gpqa, 4);
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/t/run.json"));
  EXPECT_EQ(run["part_requests"]["mmlupro"]["thinking"], "off");
  EXPECT_EQ(run["part_requests"]["mmlupro"]["cache_prompt"], false);
  EXPECT_EQ(run["part_requests"]["gpqa"]["thinking"], "on");
  EXPECT_EQ(run["part_requests"]["gpqa"]["reasoning_budget"], 64);
  EXPECT_EQ(run["part_requests"]["gpqa"]["sampling"]["top_p"], 0.95);
  const nlohmann::json res = Results("t");
  EXPECT_EQ(res["parts"]["gpqa"]["request"]["reasoning_budget"], 64);
  EXPECT_EQ(res["parts"]["mmlupro"]["request"]["thinking"], "off");
}

TEST_F(E2eScoringStage, CompareNamesAPartAskedWithOtherSettings) {
  FakeServer server(WithSlots(2));
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) { return FakeReply{"The answer is (A)", "", "stop"}; });
  std::string card = WriteCard(server.base_url(), "2", R"({"gpqa": {"questions": 4, "max_tokens": 16}})");
  ASSERT_EQ(Run({"--card", card, "--job", "off"}).exit_code, 0);
  card = WriteCard(server.base_url(), "2",
                   R"({"gpqa": {"questions": 4, "max_tokens": 16, "thinking": "on", "reasoning_budget": 32}})");
  ASSERT_EQ(Run({"--card", card, "--job", "on"}).exit_code, 0);
  BinaryResult c = RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/off", dir_ + "/runs/on", "--json"});
  ASSERT_TRUE(c.exit_code == 0 || c.exit_code == 4) << c.err;
  const nlohmann::json doc = nlohmann::json::parse(c.out.substr(c.out.find('{')));
  bool named = false;
  for (const auto& row : doc["setup"])
    if (row["field"] == "request settings: gpqa") {
      named = true;
      EXPECT_EQ(row["differs"], true);
      EXPECT_NE(row["b"].get<std::string>().find("\"reasoning_budget\":32"), std::string::npos) << row.dump();
    }
  EXPECT_TRUE(named) << doc["setup"].dump();
}

TEST_F(E2eScoringStage, ABudgetWithThinkingOffIsRefusedNamingTheKey) {
  const std::string card = WriteCard("http://127.0.0.1:1/v1", "1", R"({"gpqa": {"reasoning_budget": 64}})");
  BinaryResult r = Run({"--card", card, "--job", "bad"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("parts.gpqa.reasoning_budget"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("thinking on"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace evalrun::testing
