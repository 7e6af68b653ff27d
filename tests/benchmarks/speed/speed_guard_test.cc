// The speed part's load guard (evals/benchmarks/speed/speed_guard.h) and its steps
// (evals/benchmarks/speed/speed_steps.h) with a fake sender and a planted load: a
// disturbed step is repeated, every attempt kept, one still disturbed after
// the last try marked; conc rounds never have more in flight than asked.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "evals/benchmarks/speed/speed_guard.h"
#include "evals/benchmarks/speed/speed_steps.h"
#include "tests/support/counting_tokenizer.h"
#include "tests/support/fake_tokenizer.h"

namespace evalrun::testing {
namespace {

int ChatCount(std::string_view c) { return FakeTokenCount(c) + 7; }

LoadSample Busy(bool disturbed) {
  LoadSample s;
  s.disturbed = disturbed;
  s.busiest_pid = 42;
  s.busiest_comm = "hog";
  s.busiest_cpu_pct = disturbed ? 99 : 1;
  return s;
}

TEST(SpeedGuard, TwoDisturbedSamplesInARowDisturbAStepOneDoesNot) {
  EXPECT_FALSE(DecideLoad({Busy(true), Busy(false), Busy(true), Busy(false)}, 2).disturbed);
  GuardDecision d = DecideLoad({Busy(false), Busy(true), Busy(true), Busy(true), Busy(false)}, 2);
  EXPECT_TRUE(d.disturbed);
  EXPECT_EQ(d.longest_run, 3);
  EXPECT_NE(d.why.find("hog (pid 42) at 99 % CPU"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("3 samples in a row"), std::string::npos) << d.why;
  EXPECT_FALSE(DecideLoad({Busy(true), Busy(true)}, 3).disturbed);
  EXPECT_FALSE(DecideLoad({}, 2).disturbed);
  LoadSample gpu;
  gpu.foreign_gpu_pids = {77};
  gpu.disturbed = true;
  EXPECT_NE(DecideLoad({gpu, gpu}, 2).why.find("pid 77 on the GPU"), std::string::npos);
}

// A probe whose readings are scripted: attempt k (from 1) is busy when
// busy_attempts says so.
class ScriptedProbe : public LoadProbe {
 public:
  explicit ScriptedProbe(std::vector<bool> busy_attempts) : busy_(std::move(busy_attempts)) {}
  void Begin() override {
    ++attempt_;
    samples_ = 0;
  }
  bool Sample(LoadSample* out) override {
    ++samples_;
    const bool busy = attempt_ - 1 < static_cast<int>(busy_.size()) && busy_[attempt_ - 1];
    out->busiest_pid = busy ? 42 : 7;
    out->busiest_comm = busy ? "hog" : "idle";
    out->busiest_cpu_pct = busy ? 100 : 0;
    return true;
  }

 private:
  std::vector<bool> busy_;
  int attempt_ = 0;

 public:
  std::atomic<int> samples_{0};  // in this attempt
};

// Answers like a server with planted rates; counts the most in flight.
class FakeSender : public SpeedSender {
 public:
  FakeSender(std::atomic<int>* in_flight, std::atomic<int>* most, double cache_n, ScriptedProbe* probe)
      : in_flight_(in_flight), most_(most), cache_n_(cache_n), probe_(probe) {}
  StreamedReply Send(const Prompt& p, const nlohmann::json& extra, double, CancelToken*) override {
    EXPECT_EQ(extra.value("ignore_eos", false), true);
    EXPECT_EQ(p.params.cache_prompt, std::optional<bool>(false));
    const int now = ++*in_flight_;
    for (int m = most_->load(); now > m && !most_->compare_exchange_weak(m, now);) {}
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // With a scripted probe: answer once the guard has sampled this attempt
    // three times (a loaded test machine may be slow to run its thread).
    for (int i = 0; probe_ && probe_->samples_.load() < 3 && i < 1000; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --*in_flight_;
    StreamedReply r;
    r.status = CallStatus::kOk;
    r.http_status = 200;
    Completion& c = r.completion;
    c.prompt_tokens = ChatCount(p.messages[0].content);
    c.completion_tokens = p.params.max_tokens;
    c.timings = {true, double(c.prompt_tokens), c.prompt_tokens * 0.1, 0, double(c.completion_tokens),
                 c.completion_tokens * 10.0, 0, cache_n_};
    r.timing.first_token_s = c.prompt_tokens * 0.0001;
    r.timing.last_token_s = r.timing.first_token_s + (c.completion_tokens - 1) * 0.01;
    r.timing.done_s = r.timing.last_token_s + 0.001;
    r.chunks = c.completion_tokens;
    return r;
  }

 private:
  std::atomic<int>*in_flight_, *most_;
  double cache_n_;
  ScriptedProbe* probe_;
};

struct Rig {
  SpeedOptions o;
  std::atomic<int> in_flight{0}, most{0};
  std::vector<nlohmann::json> records;
  double cache_n = 0;
  ScriptedProbe* probe = nullptr;

  SpeedRunner Make(LoadGuard* guard) {
    SpeedRunner::Deps d;
    d.senders = [this] { return std::make_unique<FakeSender>(&in_flight, &most, cache_n, probe); };
    d.tokenizer = std::make_unique<CountingTokenizer>(FakeTokenCount, ChatCount);
    d.guard = guard;
    d.sink = [this](const nlohmann::json& r) { records.push_back(r); };
    d.nonce = 5;
    return SpeedRunner(o, std::move(d));
  }
};

SpeedStep DecodeStep(int rounds, int concurrency) {
  SpeedStep s;
  s.name = concurrency > 1 ? "conc/C" + std::to_string(concurrency) : "decode/code";
  s.kind = concurrency > 1 ? "conc" : "decode";
  s.prompt_ids = {"code", "prose"};
  s.target_prompt_tokens = 600;
  s.max_tokens = 32;
  s.rounds = rounds;
  s.concurrency = concurrency;
  return s;
}

TEST(SpeedGuard, ADisturbedStepIsRepeatedAndEveryAttemptKept) {
  Rig rig;
  auto probe = std::make_unique<ScriptedProbe>(std::vector<bool>{true, false});
  rig.probe = probe.get();
  LoadGuard guard(std::move(probe), 0.01, 50, 2);
  SpeedRunner runner = rig.Make(&guard);
  nlohmann::json step;
  ASSERT_TRUE(runner.RunStep(DecodeStep(2, 1), &step).ok());
  ASSERT_EQ(step["attempts"].size(), 2u) << step.dump();
  EXPECT_TRUE(step["attempts"][0]["disturbed"].get<bool>());
  EXPECT_NE(step["attempts"][0]["why"].get<std::string>().find("hog"), std::string::npos);
  EXPECT_GE(step["attempts"][0]["load_samples"].size(), 2u);
  EXPECT_FALSE(step["attempts"][1]["disturbed"].get<bool>());
  EXPECT_FALSE(step["disturbed"].get<bool>());
  EXPECT_EQ(rig.records.size(), 4u);  // both attempts' requests are in samples.jsonl
  EXPECT_EQ(rig.records[0]["attempt"], 1);
  EXPECT_EQ(rig.records[3]["attempt"], 2);
  EXPECT_EQ(step["result"]["requests"], 2);
  EXPECT_NEAR(step["result"]["decode_client_tps"]["median"].get<double>(), 100, 1e-6);
  EXPECT_NEAR(step["result"]["decode_server_tps"]["median"].get<double>(), 100, 1e-6);
  for (const auto& r : rig.records) EXPECT_EQ(r["prompt_tokens"], r["target_prompt_tokens"]);
}

TEST(SpeedGuard, AStepStillDisturbedAfterTheLastTryIsMarkedNotDropped) {
  Rig rig;
  auto probe = std::make_unique<ScriptedProbe>(std::vector<bool>{true, true, true});
  rig.probe = probe.get();
  LoadGuard guard(std::move(probe), 0.01, 50, 2);
  SpeedRunner runner = rig.Make(&guard);
  nlohmann::json step;
  ASSERT_TRUE(runner.RunStep(DecodeStep(1, 1), &step).ok());
  EXPECT_EQ(step["attempts"].size(), 3u);
  EXPECT_TRUE(step["disturbed"].get<bool>());
  EXPECT_TRUE(step["result"].is_object());
  EXPECT_NE(step["marks"].dump().find("still disturbed by load after 3 tries"), std::string::npos) << step["marks"];
}

TEST(SpeedGuard, ConcRoundsNeverHaveMoreInFlightThanTheLevelAndCacheReuseIsMarked) {
  Rig rig;
  rig.cache_n = 64;
  SpeedRunner runner = rig.Make(nullptr);
  nlohmann::json step;
  ASSERT_TRUE(runner.RunStep(DecodeStep(2, 3), &step).ok());
  EXPECT_EQ(rig.records.size(), 6u);
  EXPECT_LE(rig.most.load(), 3);
  EXPECT_EQ(step["result"]["peak_in_flight"].get<int>(), rig.most.load());
  EXPECT_EQ(step["result"]["total_tps"]["n"], 2);
  EXPECT_NE(step["marks"].dump().find("the server reused its cache (cache_n = 64) (6 requests)"), std::string::npos)
      << step["marks"];
}

}  // namespace
}  // namespace evalrun::testing
