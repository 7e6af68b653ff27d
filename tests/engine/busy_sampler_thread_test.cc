// The load sampler in real time: its own thread (Start, Stop, the interval)
// and a pass over the real /proc that finds a busy child process.
#include "evals/watch/busy_sampler.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "tests/engine/busy_sampler_world.h"

namespace evalrun {
namespace {

using busy_testing::World;
using nlohmann::json;

// ---- The thread -----------------------------------------------------------

TEST(BusySamplerThreadTest, StopWakesALongWait) {
  World w;
  BusySamplerOptions o;
  o.interval_s = 3600;
  BusySampler s(o, &w.proc, nullptr, &w.clock, w.Sink());
  s.Start();  // the baseline pass happens here
  EXPECT_EQ(w.proc.list_calls(), 1);
  s.Stop();  // returns at once (else this test hangs)
  EXPECT_TRUE(w.lines.empty());
  s.Stop();  // twice is fine
}

TEST(BusySamplerThreadTest, SamplesEveryInterval) {
  World w;
  std::mutex mu;
  std::condition_variable cv;
  int count = 0;
  BusySamplerOptions o;
  o.interval_s = 0.01;
  BusySampler s(o, &w.proc, nullptr, &w.clock, [&](const std::string& line) {
    EXPECT_FALSE(line.empty());
    std::lock_guard<std::mutex> lk(mu);
    ++count;
    cv.notify_all();
  });
  s.Start();
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::seconds(20), [&] { return count >= 3; });
  }
  s.Stop();
  std::lock_guard<std::mutex> lk(mu);
  EXPECT_GE(count, 3);
  EXPECT_EQ(s.Summary()["samples"], count);
}

// ---- Real /proc -----------------------------------------------------------

double ProcessCpuSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double MonotonicNow() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A child spins for 0.5 s between two real passes over /proc, 0.5 s apart.
// It reports the CPU time it got, and the sampler must find it by name with
// that CPU time over the window. (A fixed "> 50 %" would fail on a shared,
// overloaded machine: on the 2-core build box at load 6.8 the child got
// 48.8 % of a core. Its own accounting is the load-proof reference.)
TEST(BusySamplerRealProcTest, SeesABusyChildByNameWithItsCpuTime) {
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    close(go[1]);
    prctl(PR_SET_NAME, "evalrun-busy", 0, 0, 0);
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    if (read(go[0], &c, 1) != 1) _exit(1);
    double cpu0 = ProcessCpuSeconds();
    double end = MonotonicNow() + 0.5;
    volatile unsigned long spin = 0;
    while (MonotonicNow() < end) spin = spin + 1;
    double used = ProcessCpuSeconds() - cpu0;
    if (write(ready[1], &used, sizeof used) != sizeof used) _exit(1);
    (void)!read(go[0], &c, 1);  // until the parent closes it
    _exit(0);
  }
  close(ready[1]);
  close(go[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);

  RealProcSource proc;
  std::vector<std::string> lines;
  BusySamplerOptions o;
  o.interval_s = 0.5;
  o.top_n = 64;  // a loaded machine (compilers, other tests) must not push the child out of the list
  BusySampler s(o, &proc, nullptr, RealClock::Default(),
                [&](const std::string& line) { lines.push_back(line); });
  EXPECT_FALSE(s.SampleOnce());  // baseline
  c = 'g';
  ASSERT_EQ(write(go[1], &c, 1), 1);
  double child_cpu_s = -1;
  ASSERT_EQ(read(ready[0], &child_cpu_s, sizeof child_cpu_s),
            static_cast<ssize_t>(sizeof child_cpu_s));
  EXPECT_TRUE(s.SampleOnce());
  close(go[1]);
  close(ready[0]);
  int status = 0;
  waitpid(child, &status, 0);

  ASSERT_EQ(lines.size(), 1u);
  json line = json::parse(lines[0]);
  json found;
  for (const json& e : line["top"]) {
    if (e["pid"] == child) found = e;
  }
  ASSERT_FALSE(found.is_null()) << lines[0];
  EXPECT_EQ(found["comm"], "evalrun-busy");
  const double window_s = line["t"].get<double>();
  const double seen_cpu_s = found["cpu_pct"].get<double>() / 100.0 * window_s;
  // utime/stime move in clock ticks (10 ms at 100 Hz): allow a few.
  EXPECT_NEAR(seen_cpu_s, child_cpu_s, 0.05) << lines[0];
  EXPECT_GT(found["cpu_pct"].get<double>(), 0.0);
  EXPECT_EQ(line["loadavg"].size(), 3u);
  std::printf("child: %.3f s CPU; sampler: %.1f %% of %.3f s = %.3f s\n", child_cpu_s,
              found["cpu_pct"].get<double>(), window_s, seen_cpu_s);
}

}  // namespace
}  // namespace evalrun
