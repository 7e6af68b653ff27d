// The speed part against a real llama-server with Qwen3's tokenizer and
// template (tiny-qwen3-vocab.gguf, --jinja): every prompt is exactly its target by usage.prompt_tokens; client
// and server decode agree within 2 % or the step says why; C1/C2/C4 never
// have more in flight than the slots (the server's own /metrics, polled);
// a CPU hog the test starts during one step makes the guard repeat that
// step, recorded with the hog's pid; the cold row is the first request
// after the server started (its /metrics at zero). Small depths: a minute
// or two on 2 CPU cores.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class SpeedReal : public RealLaneTest {};

// A busy child process named "speedhog", stopped by its PID.
class CpuHog {
 public:
  void Start() {
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_NAME, "speedhog");
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      volatile unsigned long x = 0;
      for (;;) x = x + 1;
    }
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  ~CpuHog() { Stop(); }
  int pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// The records of samples.jsonl written so far (a torn last line left out).
std::vector<nlohmann::json> RecordsSoFar(const std::string& path) {
  std::vector<nlohmann::json> out;
  const std::string text = ReadFile(path);
  size_t at = 0;
  for (size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    nlohmann::json j = nlohmann::json::parse(text.substr(at, nl - at), nullptr, false);
    if (j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

TEST_F(SpeedReal, ExactPromptsBothClocksSlotsColdRowAndTheGuardRepeatingAHoggedStep) {
  LlamaServer* s = StartServer({.model = "tiny-qwen3-vocab.gguf", .parallel = 4, .ctx = 8192, .metrics = true,
                                .extra = {"--jinja"}, .chat_template = ""});
  ASSERT_TRUE(s->running());
  MetricsPoller poller(s->origin());
  poller.Start();
  nlohmann::json speed = {{"prompt_ids", {"code", "prose"}}, {"decode_prompt_tokens", 320}, {"runs", 12},
                          {"warmups", 1}, {"max_tokens", 192}, {"prefill_depths", {512, 1024}},
                          {"prefill_runs", 2}, {"conc_levels", {1, 2, 4}}, {"conc_rounds", 1},
                          {"ctx_depths", {768, 2048}}, {"ctx_runs", 1}, {"guard_interval_s", 0.05},
                          {"guard_samples", 2}, {"guard_tries", 2}, {"guard_threshold_pct", 50},
                          // Other builds on a shared test machine are not what this test plants.
                          {"guard_ignore", {"cc1plus", "ninja", "c++", "g++", "ld", "collect2", "as", "cmake",
                                            "ccache", "cc1", "make", "lto1"}}};
  const std::string card = WriteCardJson(Card(Server(s, 4), {{"speed", speed}}));
  const std::string job = JobDir("sp");
  const int pid = SpawnBinary({EvalrunBinary(), "--card", card, "--job", "sp", "--parts", "speed", "--out",
                               dir_ + "/runs", "--data-dir", DatasetsDir()},
                              dir_ + "/out.txt", dir_ + "/err.txt");
  ASSERT_GT(pid, 0);
  // The hog: from the first record of decode/code until its second attempt begins (or the run ends).
  CpuHog hog;
  int hog_pid = -1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (std::chrono::steady_clock::now() < until) {
    bool started = false, second = false;
    for (const auto& r : RecordsSoFar(job + "/speed/samples.jsonl")) {
      started |= r["step"] == "decode/code";
      second |= r["step"] == "decode/code" && r["attempt"] == 2;
      second |= r["step"] == "decode/prose";
    }
    if (started && hog_pid < 0) {
      hog.Start();
      hog_pid = hog.pid();
    }
    if (second || access((job + "/results.json").c_str(), F_OK) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  hog.Stop();
  BinaryResult r = WaitBinary(pid, 300);
  poller.Stop();
  ASSERT_EQ(r.exit_code, 0) << ReadFile(dir_ + "/err.txt");
  ASSERT_GT(hog_pid, 0) << "decode/code never started";
  const nlohmann::json res = Results("sp")["parts"]["speed"];
  ASSERT_TRUE(res["complete"].get<bool>()) << res["error"];

  // Exact prompts, by the server's own usage.
  const auto samples = Lines(job + "/speed/samples.jsonl");
  ASSERT_FALSE(samples.empty());
  for (const auto& x : samples) {
    EXPECT_EQ(x["status"], "ok") << x.dump();
    EXPECT_EQ(x["prompt_tokens"], x["target_prompt_tokens"]) << x.dump();
    EXPECT_EQ(x["completion_tokens"], x["max_tokens"]) << x.dump();
    EXPECT_EQ(x["timings"]["cache_n"], 0) << x.dump();
  }
  // The cold row: the first request after the start, the server's counters at zero before it.
  EXPECT_EQ(samples[0]["role"], "cold");
  EXPECT_TRUE(res["cold"]["cold"].get<bool>()) << res["cold"].dump();
  EXPECT_TRUE(res["cold"]["decode_cold_to_warm"].is_number());

  for (const auto& step : res["steps"]) {
    if (!step["result"].is_object()) continue;
    const nlohmann::json g = step["result"].value("decode_gap_pct", nlohmann::json());
    if (g.is_number() && std::fabs(g.get<double>()) > 2) {
      EXPECT_TRUE(step["result"]["decode_gap_why"].is_string()) << step.dump();
    }
    if (step["kind"] == "conc") {
      EXPECT_LE(step["result"]["peak_in_flight"].get<int>(), step["concurrency"].get<int>());
    }
  }
  EXPECT_LE(poller.max_processing(), 4);
  EXPECT_GT(poller.polls(), 0);

  // The hogged step: repeated, its first attempt disturbed by the hog, recorded.
  nlohmann::json hogged;
  for (const auto& step : res["steps"])
    if (step["name"] == "decode/code") hogged = step;
  ASSERT_TRUE(hogged.is_object());
  ASSERT_GE(hogged["attempts"].size(), 2u) << hogged.dump();
  EXPECT_TRUE(hogged["attempts"][0]["disturbed"].get<bool>()) << hogged["attempts"][0].dump();
  bool saw_hog = false;
  for (const auto& x : hogged["attempts"][0]["load_samples"])
    saw_hog |= x["disturbed"].get<bool>() && x["busiest"].is_object() && x["busiest"]["pid"] == hog_pid &&
               x["busiest"]["comm"] == "speedhog";
  EXPECT_TRUE(saw_hog) << "pid " << hog_pid << ": " << hogged["attempts"][0].dump();
  int attempt2 = 0;
  for (const auto& x : samples) attempt2 += x["step"] == "decode/code" && x["attempt"] == 2;
  EXPECT_EQ(attempt2, 12);  // every attempt kept
}

TEST_F(SpeedReal, AManagedEngineIsStartedByThePartSoItsFirstRequestIsCold) {
  const int port = FreeLoopbackPort();
  LlamaServerArgs a{.model = "tiny-qwen3-vocab.gguf", .parallel = 0, .ctx = 0,
                    .extra = {"-c", "{context}", "-np", "{slots}", "--jinja"}, .chat_template = ""};
  nlohmann::json server = {{"base_url", "http://127.0.0.1:" + std::to_string(port) + "/v1"}, {"slots", 2},
                           {"context", 4096}, {"command", LlamaServerArgv(a, port, "{port}")}, {"stop_grace_s", 10}};
  const std::string card = WriteCardJson(Card(server, {{"speed", {{"steps", {"decode"}}, {"prompt_ids", {"prose"}},
                                                                  {"decode_prompt_tokens", 320}, {"runs", 2},
                                                                  {"warmups", 1}, {"max_tokens", 32},
                                                                  {"guard_threshold_pct", 99999}}}}));
  BinaryResult r = Run({"--card", card, "--job", "m", "--parts", "speed"}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json res = Results("m")["parts"]["speed"];
  ASSERT_TRUE(res["complete"].get<bool>()) << res["error"];
  EXPECT_TRUE(res["engine"]["managed"].get<bool>());
  EXPECT_EQ(res["engine"]["n_ctx_slot"], 2048);  // 4096 over 2 slots, from /props after the part's own start
  EXPECT_TRUE(res["cold"]["cold"].get<bool>()) << res["cold"].dump();
  const auto samples = Lines(JobDir("m") + "/speed/samples.jsonl");
  ASSERT_EQ(samples.size(), 4u);  // cold, warm-up, 2 measured
  EXPECT_EQ(samples[0]["role"], "cold");
  EXPECT_EQ(samples[1]["role"], "warmup");
  for (const auto& x : samples) EXPECT_EQ(x["prompt_tokens"], x["target_prompt_tokens"]) << x.dump();
  // The engine the part started was stopped: nothing answers on its port.
  EXPECT_NE(ReadFile(JobDir("m") + "/server.log").find("=== evalrun"), std::string::npos);
  std::string err;
  LlamaServer probe({.model = "tiny-qwen3-vocab.gguf", .parallel = 1, .ctx = 512});
  EXPECT_TRUE(probe.Start(dir_ + "/probe.log", &err, port)) << "the port is still taken: " << err;
}

}  // namespace
}  // namespace evalrun::testing
