// Machine noise end to end: a planted busy process is named and counted
// above the threshold; the engine's own CPU (here: the test process, which
// serves the fake llama-server) is never counted as foreign.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

class E2eLoad : public E2eTest {};

TEST_F(E2eLoad, PlantedBusyProcessIsNamedAndTheEngineIsNot) {
  // The busy process must not descend from the engine (this process), or it
  // would rightly count as the engine's: fork twice so it is re-parented.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t mid = fork();
  if (mid == 0) {
    pid_t g = fork();
    if (g == 0) {
      prctl(PR_SET_NAME, "busyplant", 0, 0, 0);
      volatile unsigned long x = 0;
      for (;;) x = x + 1;  // killed by the test
    }
    (void)!write(fds[1], &g, sizeof g);
    _exit(0);
  }
  pid_t busy = 0;
  ASSERT_EQ(read(fds[0], &busy, sizeof busy), static_cast<ssize_t>(sizeof busy));
  waitpid(mid, nullptr, 0);
  close(fds[0]);
  close(fds[1]);
  ASSERT_GT(busy, 0);
  FakeServer server;
  ASSERT_TRUE(server.Start());
  // The engine burns CPU while it answers: a spinning thread in this process.
  std::atomic<bool> spin{true};
  std::thread engine_load([&] {
    volatile unsigned long y = 0;
    while (spin.load(std::memory_order_relaxed)) y = y + 1;
  });
  server.SetResponder([](const nlohmann::json&) {
    FakeReply r;
    r.content = "A";
    r.delay_ms = 150;
    return r;
  });
  std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 28, "max_tokens": 8}})",
                               R"("load_sampling": {"interval_s": 0.25, "threshold_pct": 10},)");
  BinaryResult r = Run({"--card", card, "--job", "n"});
  spin = false;
  engine_load.join();
  kill(busy, SIGKILL);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  auto lines = Lines(dir_ + "/runs/n/load.jsonl");
  ASSERT_GE(lines.size(), 4u);
  const int self = getpid();
  int named = 0, engine_busy = 0;
  for (const auto& l : lines) {
    // Named among the busiest (on a loaded CI machine another process may
    // top it, and the spinners get a smaller share of the cores: hence the
    // low thresholds, well above an idle process's 0 %).
    for (const auto& t : l["top"])
      if (t["comm"] == "busyplant" && t["cpu_pct"].get<double>() > 10) ++named;
    if (l["engine_cpu_pct"].is_number() && l["engine_cpu_pct"].get<double>() > 20) ++engine_busy;
    for (const auto& t : l["top"]) EXPECT_NE(t["pid"].get<int>(), self) << "the engine counted as foreign: " << l.dump();
    if (l["busiest"].is_object() && l["busiest"]["pid"].is_number()) {
      EXPECT_NE(l["busiest"]["pid"].get<int>(), self);
    }
  }
  EXPECT_GE(named, 2) << "the busy process was not named";
  EXPECT_GE(engine_busy, 1) << "the engine's own CPU was not seen";
  auto noise = Results("n")["load"];
  EXPECT_GE(noise["samples_above_threshold"].get<int>(), 2) << noise.dump();
  EXPECT_NE(r.out.find("samples were above 10 % CPU"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace evalrun::testing
