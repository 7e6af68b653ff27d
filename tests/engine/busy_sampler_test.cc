// The load sampler over a fake /proc and a fake clock: what one sample
// holds, the summary and its texts, and the guard that pauses a run while
// the machine is busy. GPU reads: busy_sampler_gpu_test.cc; the thread and
// the real /proc: busy_sampler_thread_test.cc.
#include "evals/watch/busy_sampler.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/engine/busy_sampler_world.h"

namespace evalrun {
namespace {

using busy_testing::EngineOnPort;
using busy_testing::World;
using nlohmann::json;

TEST(BusySamplerTest, OneSampleNamesTheBusyProcessAndSeparatesTheEngine) {
  World w;
  BusySampler s(EngineOnPort(8080), &w.proc, nullptr, &w.clock, w.Sink());
  EXPECT_FALSE(s.SampleOnce());  // the baseline: no line
  EXPECT_TRUE(w.lines.empty());

  w.clock.Advance(10);
  w.proc.AddTicks(300, 1900, 70);  // 19.7 s of CPU in 10 s: 197 %
  w.proc.AddTicks(200, 800);       // the engine: 80 + 15 + 5 = 100 %
  w.proc.AddTicks(201, 100, 50);
  w.proc.AddTicks(202, 50);
  w.proc.AddTicks(100, 4);     // evalrun itself: 0.4 %, never foreign
  w.proc.AddTicks(400, 20);    // sshd 2 %
  w.proc.AddTicks(500, 5000);  // ignored, though the busiest of all
  w.proc.AddTicks(1, 1);       // systemd 0.1 %
  ASSERT_TRUE(s.SampleOnce());
  ASSERT_EQ(w.lines.size(), 1u);
  json expected = json::parse(R"({
    "t": 10.0, "utc": "2025-11-30T04:10:10.000Z", "procs": 8,
    "busiest": {"pid": 300, "comm": "indexer", "cpu_pct": 197.0, "rss_mb": 120.0},
    "top": [
      {"pid": 300, "comm": "indexer", "cpu_pct": 197.0, "rss_mb": 120.0, "cmd": "/usr/bin/indexer --all"},
      {"pid": 400, "comm": "sshd", "cpu_pct": 2.0, "rss_mb": 10.0, "cmd": "sshd: me@pts/0"},
      {"pid": 1, "comm": "systemd", "cpu_pct": 0.1, "rss_mb": 10.0, "cmd": "/sbin/init"}
    ],
    "foreign_cpu_pct_total": 199.1, "engine_cpu_pct": 100.0, "self_cpu_pct": 0.4,
    "loadavg": [0.5, 0.25, 0.125], "gpu": null, "paused": false
  })");
  EXPECT_EQ(w.Line(0), expected) << w.lines[0];
  // Keys in the documented order.
  EXPECT_EQ(w.lines[0].substr(0, 48), R"({"t":10.0,"utc":"2025-11-30T04:10:10.000Z","proc)");

  json sum = s.Summary();
  EXPECT_EQ(sum["samples"], 1);
  EXPECT_EQ(sum["threshold_pct"], 25.0);
  EXPECT_EQ(sum["samples_above_threshold"], 1);
  EXPECT_EQ(sum["max_foreign_cpu_pct"], 197.0);
  EXPECT_EQ(sum["max_foreign"], json::parse(R"({"pid": 300, "comm": "indexer"})"));
  EXPECT_EQ(sum["above_by_comm"], json::parse(R"({"indexer": 1})"));
  EXPECT_EQ(sum["engine_cpu_pct_mean"], 100.0);
  EXPECT_EQ(sum["engine_pids"], json::parse("[200, 201, 202]"));
  EXPECT_EQ(sum["self_cpu_pct_max"], 0.4);
  EXPECT_EQ(sum["gpu"], nullptr);
  EXPECT_EQ(sum["gpu_error"], "no GPU selected");
  EXPECT_EQ(sum["warnings"], json::array());
  EXPECT_EQ(sum["pauses"], json::array());
  EXPECT_EQ(s.SummaryLine(),
            "1 of 1 samples were above 25 % CPU (up to 197 %, indexer), 1 of them indexer; "
            "engine 100 % CPU on average");
  EXPECT_EQ(sum["text"], s.SummaryLine());
  EXPECT_EQ(s.StartReport(),
            "load sampler: every 10 s, threshold 25 % CPU, guard off; engine: pid 200 "
            "(llama-server), 201 (llama-helper), 202 (sh) on port 8080; GPU: none selected");
}

TEST(BusySamplerTest, OnePassPerSampleAndTheListenerLookedUpOnce) {
  World w;
  BusySampler s(EngineOnPort(8080), &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  for (int i = 0; i < 3; ++i) {
    w.clock.Advance(10);
    w.proc.AddTicks(300, 100);
    w.proc.AddTicks(400, 10);
    s.SampleOnce();
  }
  EXPECT_EQ(w.proc.list_calls(), 4);         // one listing per pass
  EXPECT_EQ(w.proc.stat_calls(), 4 * 8);     // one stat per process per pass
  EXPECT_EQ(w.proc.cmdline_calls(), 3 * 2);  // only the top entries' command lines
  EXPECT_EQ(w.proc.listen_calls(), 1);       // the engine stayed: no second fd scan

  // The engine restarts under a new pid: looked up again, and found.
  w.proc.Remove(202);
  w.proc.Remove(201);
  w.proc.Remove(200);
  w.proc.Add(210, 1, "llama-server");
  w.proc.Listen(8080, 210);
  w.clock.Advance(10);
  w.proc.AddTicks(210, 500);
  s.SampleOnce();
  EXPECT_EQ(w.proc.listen_calls(), 2);
  EXPECT_EQ(w.Line(3)["engine_cpu_pct"], 50.0);
  EXPECT_EQ(s.Summary()["engine_pids"], json::parse("[210]"));
}

TEST(BusySamplerTest, CpuPercentFromDeltasOverTheFakeClock) {
  World w;
  BusySamplerOptions o;
  o.interval_s = 0.5;
  BusySampler s(o, &w.proc, nullptr, &w.clock, w.Sink());
  w.proc.AddTicks(300, 1000);  // before the baseline: not counted
  s.SampleOnce();
  w.clock.Advance(0.5);
  w.proc.AddTicks(300, 25);  // 0.25 s of CPU in 0.5 s
  s.SampleOnce();
  EXPECT_EQ(w.Line(0)["busiest"]["cpu_pct"], 50.0);
  w.clock.Advance(0.25);
  w.proc.AddTicks(300, 25, 25);  // 0.5 s in 0.25 s: two cores
  s.SampleOnce();
  EXPECT_EQ(w.Line(1)["busiest"]["cpu_pct"], 200.0);
  EXPECT_EQ(w.Line(1)["t"], 0.75);
  // No engine given: engine_cpu_pct is null, and nothing is excluded but self.
  EXPECT_EQ(w.Line(1)["engine_cpu_pct"], nullptr);
  w.clock.Advance(1);  // nobody busy
  s.SampleOnce();
  EXPECT_EQ(w.Line(2)["busiest"], nullptr);
  EXPECT_EQ(w.Line(2)["top"], json::array());
}

TEST(BusySamplerTest, VanishedNewAndReusedPids) {
  World w;
  BusySampler s(EngineOnPort(8080), &w.proc, nullptr, &w.clock, w.Sink());
  w.proc.AddTicks(400, 7000);
  s.SampleOnce();
  w.proc.VanishOnRead(600);    // listed, gone before its stat is read
  w.proc.Remove(300);          // ended between the passes
  w.proc.Add(700, 1, "make");  // born between the passes: counts from zero
  w.proc.AddTicks(700, 300);
  w.proc.Add(400, 1, "cc1plus");  // pid 400 reused: counts from zero, not from sshd's 7000
  w.proc.AddTicks(400, 100);
  w.clock.Advance(10);
  ASSERT_TRUE(s.SampleOnce());
  json line = w.Line(0);
  EXPECT_EQ(line["procs"], 8);
  EXPECT_EQ(line["top"][0]["pid"], 700);
  EXPECT_EQ(line["top"][0]["cpu_pct"], 30.0);
  EXPECT_EQ(line["top"][1]["comm"], "cc1plus");
  EXPECT_EQ(line["top"][1]["cpu_pct"], 10.0);
  EXPECT_EQ(line["top"].size(), 2u);
  EXPECT_EQ(s.Summary()["warnings"], json::array());
}

TEST(BusySamplerTest, SelfIsExcludedButItsChildrenCount) {
  World w;
  BusySampler s(EngineOnPort(8080), &w.proc, nullptr, &w.clock, w.Sink());
  w.proc.Add(150, 100, "busy-child");
  s.SampleOnce();
  w.clock.Advance(10);
  w.proc.AddTicks(100, 5000);  // evalrun at 500 %
  w.proc.AddTicks(150, 400);
  s.SampleOnce();
  EXPECT_EQ(w.Line(0)["busiest"]["comm"], "busy-child");
  EXPECT_EQ(w.Line(0)["busiest"]["cpu_pct"], 40.0);
  EXPECT_EQ(w.Line(0)["self_cpu_pct"], 500.0);
  EXPECT_EQ(s.Summary()["self_cpu_pct_max"], 500.0);
}

TEST(BusySamplerTest, EngineByPidAndIgnoreList) {
  World w;
  BusySamplerOptions o;
  o.engine_pid = 200;
  o.ignore = {"indexer", "tracker-miner-fs-3"};
  BusySampler s(o, &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  w.clock.Advance(10);
  w.proc.AddTicks(300, 5000);
  w.proc.AddTicks(500, 5000);
  w.proc.AddTicks(202, 3000);  // the engine's grandchild
  w.proc.AddTicks(400, 300);
  s.SampleOnce();
  EXPECT_EQ(w.Line(0)["busiest"]["comm"], "sshd");
  EXPECT_EQ(w.Line(0)["foreign_cpu_pct_total"], 30.0);
  EXPECT_EQ(w.Line(0)["engine_cpu_pct"], 300.0);
  EXPECT_EQ(w.proc.listen_calls(), 0);
}

TEST(BusySamplerTest, EngineNotFoundIsAWarningAndItsLoadIsForeign) {
  World w;
  BusySampler s(EngineOnPort(9999), &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  EXPECT_EQ(s.StartReport(),
            "load sampler: every 10 s, threshold 25 % CPU, guard off; engine: not found (no "
            "process listens on TCP port 9999) on port 9999; GPU: none selected");
  w.clock.Advance(10);
  w.proc.AddTicks(200, 900);
  s.SampleOnce();
  EXPECT_EQ(w.Line(0)["engine_cpu_pct"], nullptr);
  EXPECT_EQ(w.Line(0)["busiest"]["comm"], "llama-server");
  EXPECT_EQ(w.proc.listen_calls(), 2);  // nothing listened: asked again each pass
  EXPECT_EQ(s.Summary()["engine_cpu_pct_mean"], nullptr);
  EXPECT_EQ(
      s.Summary()["warnings"],
      json::parse(
          R"(["the engine (TCP port 9999) was never found (no process listens on TCP port 9999): its CPU counted as foreign load"])"));
}

TEST(BusySamplerTest, UnreadableListenerIsNotScannedAgain) {
  World w;
  w.proc.ListenUnreadable(7777);
  BusySampler s(EngineOnPort(7777), &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  w.clock.Advance(10);
  s.SampleOnce();
  w.clock.Advance(10);
  s.SampleOnce();
  EXPECT_EQ(w.proc.listen_calls(), 1);
  EXPECT_EQ(s.Summary()["warnings"][0],
            "the engine (TCP port 7777) was never found (TCP port 7777 has 1 listening socket(s) "
            "but no readable fd table holds one): its CPU counted as foreign load");
}

TEST(BusySamplerTest, SummaryLineCountsByName) {
  World w;
  BusySamplerOptions o;
  o.interval_s = 10;
  BusySampler s(o, &w.proc, nullptr, &w.clock, w.Sink());
  w.proc.Add(800, 1, "backup");
  s.SampleOnce();
  const std::vector<std::pair<int, int>> busy = {{300, 1970}, {300, 500}, {800, 300}, {400, 10}};
  for (auto [pid, ticks] : busy) {
    w.clock.Advance(10);
    w.proc.AddTicks(pid, ticks);
    s.SampleOnce();
  }
  EXPECT_EQ(s.SummaryLine(),
            "3 of 4 samples were above 25 % CPU (up to 197 %, indexer), 2 of them indexer");
  json sum = s.Summary();
  EXPECT_EQ(sum["above_by_comm"], json::parse(R"({"indexer": 2, "backup": 1})"));
  EXPECT_EQ(sum["max_foreign"]["pid"], 300);
}

TEST(BusySamplerTest, NamesThatAreNotUtf8AreMadeValid) {
  World w;
  BusySampler s(BusySamplerOptions(), &w.proc, nullptr, &w.clock, w.Sink());
  w.proc.Add(900, 1, "bad\xff\xc3", "caf\xc3\xa9 \xed\xa0\x80 --x");  // valid é, a surrogate
  s.SampleOnce();
  w.clock.Advance(10);
  w.proc.AddTicks(900, 500);
  s.SampleOnce();
  json line = w.Line(0);
  EXPECT_EQ(line["busiest"]["comm"], "bad\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(line["top"][0]["cmd"], "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd --x");
  json sum = s.Summary();
  EXPECT_EQ(sum["max_foreign"]["comm"], "bad\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_NO_THROW(sum.dump());
}

TEST(BusySamplerTest, NoSamplesYet) {
  World w;
  BusySampler s(BusySamplerOptions(), &w.proc, nullptr, &w.clock, w.Sink());
  EXPECT_EQ(s.SummaryLine(), "no load samples were taken");
  json sum = s.Summary();
  EXPECT_EQ(sum["samples"], 0);
  EXPECT_EQ(sum["max_foreign_cpu_pct"], nullptr);
  EXPECT_EQ(sum["max_foreign"], nullptr);
}

// ---- Guard ----------------------------------------------------------------

struct GuardWorld : World {
  BusySamplerOptions Options() {
    BusySamplerOptions o;
    o.interval_s = 10;
    o.guard = true;
    o.guard_max_wait_s = 60;
    return o;
  }
  void Step(BusySampler* s, int indexer_ticks) {
    clock.Advance(10);
    proc.AddTicks(300, indexer_ticks);
    s->SampleOnce();
  }
};

TEST(BusySamplerGuardTest, PausesAfterTwoHighSamplesAndReleasesWhenLoadFalls) {
  GuardWorld w;
  BusySampler s(w.Options(), &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  w.Step(&s, 500);                // t=10: 50 %
  EXPECT_FALSE(s.ShouldPause());  // one high sample is not enough
  w.Step(&s, 100);                // t=20: 10 %
  w.Step(&s, 500);                // t=30
  EXPECT_FALSE(s.ShouldPause());
  w.Step(&s, 500);  // t=40: second in a row
  EXPECT_TRUE(s.ShouldPause());
  EXPECT_EQ(w.Line(3)["paused"], true);
  w.Step(&s, 500);  // t=50: still high
  EXPECT_TRUE(s.ShouldPause());
  w.Step(&s, 10);  // t=60: 1 %: released
  EXPECT_FALSE(s.ShouldPause());
  EXPECT_EQ(w.Line(5)["paused"], false);
  json sum = s.Summary();
  EXPECT_EQ(sum["pauses"],
            json::parse(
                R"([{"start_t": 40.0, "end_t": 60.0, "seconds": 20.0, "release": "load_fell"}])"));
  EXPECT_EQ(sum["paused_s_total"], 20.0);
  EXPECT_EQ(sum["guard"], json::parse(R"({"enabled": true, "max_wait_s": 60.0})"));
  EXPECT_EQ(s.SummaryLine(),
            "4 of 6 samples were above 25 % CPU (up to 50 %, indexer), 4 of them indexer; paused "
            "1 time(s), 20 s");
}

TEST(BusySamplerGuardTest, AWaitIsBoundedAndDoesNotRearmUntilLoadFalls) {
  GuardWorld w;
  BusySampler s(w.Options(), &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  w.Step(&s, 500);
  w.Step(&s, 500);  // t=20: paused
  EXPECT_TRUE(s.ShouldPause());
  w.clock.Advance(59);  // t=79: still within 60 s
  EXPECT_TRUE(s.ShouldPause());
  w.clock.Advance(1);  // t=80: released by ShouldPause itself, no sample needed
  EXPECT_FALSE(s.ShouldPause());
  w.Step(&s, 500);  // t=90: high, but the guard stays released
  w.Step(&s, 500);
  EXPECT_FALSE(s.ShouldPause());
  w.Step(&s, 10);  // t=110: load fell: re-armed
  w.Step(&s, 500);
  w.Step(&s, 500);  // t=130: paused again
  EXPECT_TRUE(s.ShouldPause());
  s.Stop();  // closes the open pause
  EXPECT_FALSE(s.ShouldPause());
  EXPECT_EQ(s.Summary()["pauses"], json::parse(R"([
    {"start_t": 20.0, "end_t": 80.0, "seconds": 60.0, "release": "max_wait"},
    {"start_t": 130.0, "end_t": 130.0, "seconds": 0.0, "release": "stopped"}])"));
}

TEST(BusySamplerGuardTest, MaxWaitAlsoEndsAtASample) {
  GuardWorld w;
  BusySampler s(w.Options(), &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  for (int i = 0; i < 9; ++i) w.Step(&s, 500);  // paused at t=20, high to t=90
  EXPECT_FALSE(s.ShouldPause());
  EXPECT_EQ(
      s.Summary()["pauses"],
      json::parse(R"([{"start_t": 20.0, "end_t": 80.0, "seconds": 60.0, "release": "max_wait"}])"));
}

TEST(BusySamplerGuardTest, OffNeverPauses) {
  World w;
  BusySamplerOptions o;
  BusySampler s(o, &w.proc, nullptr, &w.clock, w.Sink());
  s.SampleOnce();
  for (int i = 0; i < 3; ++i) {
    w.clock.Advance(10);
    w.proc.AddTicks(300, 5000);
    s.SampleOnce();
    EXPECT_FALSE(s.ShouldPause());
  }
  EXPECT_EQ(s.Summary()["samples_above_threshold"], 3);
}

}  // namespace
}  // namespace evalrun
