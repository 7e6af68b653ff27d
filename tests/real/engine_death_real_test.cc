// against a real llama-server: the managed engine of a fit
// step killed with SIGBUS while it processes the step's request. The step
// must be a failed step naming the signal and the log's last lines, never
// "answered" with an empty answer.
#include <dirent.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "tests/real/real_lane.h"
#include "tests/support/raw_http.h"

namespace evalrun::testing {
namespace {

class RealEngineDeath : public RealLaneTest {};

// The pid of the llama-server listening on `port` (its command line names
// the port), or -1.
int EnginePid(int port) {
  DIR* d = opendir("/proc");
  if (!d) return -1;
  int found = -1;
  while (struct dirent* e = readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream f("/proc/" + std::string(e->d_name) + "/cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find("llama-server") != std::string::npos && cmd.find(" " + std::to_string(port) + " ") != std::string::npos)
      found = pid;
  }
  closedir(d);
  return found;
}

// Polls the engine's /slots until a slot is processing, then SIGBUS to it.
// Bounded: gives up after `limit_s`. True when the signal was sent.
bool KillWhileProcessing(int port, double limit_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RawHttp http;
    if (!http.Connect(port)) continue;
    const RawReply r = http.Request("GET", "/slots", "", 2);
    if (r.status != 200 || r.body.find("\"is_processing\":true") == std::string::npos) continue;
    const int pid = EnginePid(port);
    if (pid > 0 && kill(pid, SIGBUS) == 0) return true;
  }
  return false;
}

TEST_F(RealEngineDeath, AFitStepWhoseEngineDiesMidRequestIsAFailedStepWithTheSignal) {
  const int port = FreeLoopbackPort();
  LlamaServerArgs a{.model = "stories260K-ctx128k.gguf", .parallel = 1, .ctx = 0, .extra = {"-c", "{context}"}};
  const std::vector<std::string> cmd = LlamaServerArgv(a, port, "{port}");
  nlohmann::json server = {{"base_url", "http://127.0.0.1:" + std::to_string(port) + "/v1"},
                           {"slots", 1}, {"command", cmd}, {"stop_grace_s", 10}};
  // A prompt of ~14,700 tokens takes seconds to read on one thread: time
  // enough to see the slot busy and kill the engine under it.
  const std::string card =
      WriteCardJson(Card(server, {{"fit", {{"contexts", {16384}}, {"fill", 0.9}, {"max_tokens", 16}}}}));
  std::atomic<bool> killed{false};
  std::thread killer([&] { killed = KillWhileProcessing(port, 240); });
  BinaryResult r = Run({"--card", card, "--job", "die"}, 300);
  killer.join();
  ASSERT_TRUE(killed) << "the engine was never seen processing; " << r.err;
  const auto fit = Results("die")["parts"]["fit"];
  ASSERT_EQ(fit["steps"].size(), 1u) << fit.dump();
  const auto& step = fit["steps"][0];
  EXPECT_EQ(step["answered"], false) << step.dump();
  EXPECT_NE(step.value("engine_exit", std::string()).find("SIGBUS"), std::string::npos) << step.dump();
  EXPECT_TRUE(step["log_tail"].is_string()) << step.dump();
  EXPECT_NE(step.value("error", std::string()).find("the engine died during the request"), std::string::npos)
      << step.dump();
  EXPECT_TRUE(fit["largest"].is_null() || fit["largest"] != 16384) << fit.dump();
}

}  // namespace
}  // namespace evalrun::testing
