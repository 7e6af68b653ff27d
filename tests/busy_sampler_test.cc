#include "evals/watch/busy_sampler.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/fake_clock.h"
#include "tests/support/fake_proc_source.h"

namespace evalrun {
namespace {

using nlohmann::json;
using testing::FakeClock;
using testing::FakeProcSource;

// Answers nvidia-smi from the captures; each key's answers are used in turn,
// the last one repeating. Counts the calls.
class ScriptedRunner : public CommandRunner {
 public:
  std::map<std::string, std::deque<std::string>> answers;  // first argument -> stdouts
  Status fail = Status::Ok();
  int calls = 0;

  Status Run(const std::vector<std::string>& argv, std::string* out, double) override {
    ++calls;
    if (!fail.ok()) return fail;
    auto& queue = answers[argv.size() > 1 ? argv[1].substr(0, 20) : ""];
    if (queue.empty()) return Status::Unavailable("nvidia-smi: exit status 2: unscripted");
    *out = queue.front();
    if (queue.size() > 1) queue.pop_front();
    return Status::Ok();
  }
};

const std::string kQuery = "--query-gpu=index,uu";
const std::string kApps = "--query-compute-apps";

// tests/fixtures/nvidia-smi, found from the source tree (CMake defines
// EVALRUN_SOURCE_DIR; a hand build falls back on this file's own path).
std::filesystem::path FixturesDir() {
#ifdef EVALRUN_SOURCE_DIR
  return std::filesystem::path(EVALRUN_SOURCE_DIR) / "tests" / "fixtures" / "nvidia-smi";
#else
  return std::filesystem::path(__FILE__).parent_path() / "fixtures" / "nvidia-smi";
#endif
}

std::map<std::string, std::string> LoadCapture(const std::string& file) {
  std::filesystem::path path = FixturesDir() / file;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::map<std::string, std::string> out;
  std::string line, name;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      std::istringstream(line.substr(4)) >> name;
      out[name];
      continue;
    }
    if (!name.empty()) out[name] += line + "\n";
  }
  return out;
}

const char kUuid0[] = "GPU-44031c57-c03e-9498-349b-24940666ea75";
const char kUuid1[] = "GPU-7241817d-e329-fd9d-3d05-9568059f6df6";

// A machine: evalrun (100), the engine listening on 8080 (200) with a child
// (201) and grandchild (202), a busy indexer (300), sshd (400), a desktop
// indexer to ignore (500, comm cut to 15 bytes by the kernel).
struct World {
  FakeProcSource proc;
  FakeClock clock;
  std::vector<std::string> lines;

  World() {
    proc.set_self(100);
    proc.Add(1, 0, "systemd", "/sbin/init");
    proc.Add(100, 1, "evalrun", "evalrun run card.json");
    proc.Add(200, 1, "llama-server", "llama-server -m m.gguf --port 8080", 4000u << 20);
    proc.Add(201, 200, "llama-helper", "");
    proc.Add(202, 201, "sh", "sh -c true");
    proc.Add(300, 1, "indexer", "/usr/bin/indexer --all", 120u << 20);
    proc.Add(400, 1, "sshd", "sshd: me@pts/0");
    proc.Add(500, 1, "tracker-miner-f", "/usr/libexec/tracker-miner-fs-3");
    proc.Listen(8080, 200);
  }

  BusySampler::LineSink Sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
  json Line(size_t i) const { return json::parse(lines.at(i)); }
};

BusySamplerOptions EngineOnPort(int port) {
  BusySamplerOptions o;
  o.interval_s = 10;
  o.engine_port = port;
  o.ignore = {"tracker-miner-fs-3"};
  return o;
}

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

// ---- GPU ------------------------------------------------------------------

struct GpuWorld : World {
  std::map<std::string, std::string> cap = LoadCapture("capture_h200x2.txt");
  ScriptedRunner runner;
  GpuReader reader{&runner};

  GpuWorld() {
    // The capture's compute app is pid 611: make it the engine.
    proc.Add(611, 1, "llama-server");
    proc.Listen(8081, 611);
  }
  BusySamplerOptions Options(const std::string& gpu) {
    BusySamplerOptions o = EngineOnPort(8081);
    EXPECT_TRUE(GpuSelector::Parse(gpu, &o.gpu).ok());
    return o;
  }
};

TEST(BusySamplerGpuTest, ReadsTheCardNamedByIndex) {
  GpuWorld w;
  w.runner.answers[kQuery] = {w.cap["query_gpu_nounits"], w.cap["query_gpu_nounits"],
                              w.cap["query_gpu_busy_nounits"]};
  w.runner.answers[kApps] = {w.cap["apps_one_nounits"]};
  BusySampler s(w.Options("1"), &w.proc, &w.reader, &w.clock, w.Sink());
  s.SampleOnce();
  EXPECT_EQ(s.StartReport(),
            "load sampler: every 10 s, threshold 25 % CPU, guard off; engine: pid 611 "
            "(llama-server) on port 8081; GPU 1 NVIDIA H200 (bus 00000000:00:07.0, "
            "GPU-7241817d-e329-fd9d-3d05-9568059f6df6)");
  w.clock.Advance(10);
  s.SampleOnce();
  w.clock.Advance(10);
  s.SampleOnce();
  EXPECT_EQ(
      w.Line(0)["gpu"],
      json::parse(R"({"index": 1, "mem_used_mib": 0, "mem_total_mib": 143771, "util_pct": 0})"));
  EXPECT_EQ(w.Line(1)["gpu"]["mem_used_mib"], 1551.0);
  json sum = s.Summary();
  EXPECT_EQ(sum["gpu"], json::parse(R"({
    "index": 1, "uuid": "GPU-7241817d-e329-fd9d-3d05-9568059f6df6", "name": "NVIDIA H200",
    "bus_id": "00000000:00:07.0", "mem_used_mib_min": 0, "mem_used_mib_max": 1551,
    "mem_total_mib": 143771, "util_pct_max": 0, "reads": 2, "read_failures": 0})"));
  EXPECT_EQ(sum["gpu_error"], nullptr);
  EXPECT_EQ(sum["warnings"], json::array());  // the engine is on the card read
  EXPECT_EQ(w.runner.calls, 4);  // query + compute-apps at the start, then one query a sample
  EXPECT_EQ(s.SummaryLine(),
            "0 of 2 samples were above 25 % CPU (up to 0 %); engine 0 % CPU on average; GPU 1 "
            "(NVIDIA H200) memory 0-1551 of 143771 MiB, up to 0 % busy");
}

TEST(BusySamplerGpuTest, ReadsTheCardNamedByUuidAndWarnsTheEngineIsOnAnother) {
  GpuWorld w;
  w.runner.answers[kQuery] = {w.cap["query_gpu_busy_nounits"]};
  w.runner.answers[kApps] = {w.cap["apps_one_nounits"]};
  BusySampler s(w.Options(kUuid0), &w.proc, &w.reader, &w.clock, w.Sink());
  s.SampleOnce();
  w.clock.Advance(10);
  s.SampleOnce();
  json sum = s.Summary();
  EXPECT_EQ(sum["gpu"]["index"], 0);
  EXPECT_EQ(sum["gpu"]["uuid"], kUuid0);
  EXPECT_EQ(sum["gpu"]["mem_used_mib_max"], 0.0);
  EXPECT_EQ(
      sum["warnings"],
      json::parse(
          R"(["the engine (pid 611) holds memory on GPU 1 (GPU-7241817d-e329-fd9d-3d05-9568059f6df6), not on the GPU read (GPU 0, GPU-44031c57-c03e-9498-349b-24940666ea75): the GPU numbers describe another card"])"));
}

TEST(BusySamplerGpuTest, EngineOnNoGpuIsConcludedAfterThreeChecks) {
  GpuWorld w;
  w.runner.answers[kQuery] = {w.cap["query_gpu_nounits"]};
  w.runner.answers[kApps] = {w.cap["apps_none_nounits"]};
  BusySampler s(w.Options("0"), &w.proc, &w.reader, &w.clock, w.Sink());
  s.SampleOnce();
  w.clock.Advance(10);
  s.SampleOnce();
  EXPECT_EQ(s.Summary()["warnings"], json::array());  // the engine may still be loading
  for (int i = 0; i < 3; ++i) {
    w.clock.Advance(10);
    s.SampleOnce();
  }
  EXPECT_EQ(
      s.Summary()["warnings"],
      json::parse(
          R"(["the engine (pid 611) holds memory on no GPU according to nvidia-smi --query-compute-apps (a CPU-only engine, or nvidia-smi sees another PID namespace); the GPU read (GPU 0, GPU-44031c57-c03e-9498-349b-24940666ea75) may not be the engine's"])"));
  EXPECT_EQ(w.runner.calls, 5 + 3);  // 5 queries, 3 compute-apps checks, then no more
}

TEST(BusySamplerGpuTest, MissingNvidiaSmiIsNullWithTheReasonOnce) {
  GpuWorld w;
  w.runner.fail =
      Status::NotFound("nvidia-smi: cannot run it: No such file or directory (looked on PATH)");
  BusySampler s(w.Options("0"), &w.proc, &w.reader, &w.clock, w.Sink());
  s.SampleOnce();
  for (int i = 0; i < 3; ++i) {
    w.clock.Advance(10);
    s.SampleOnce();
  }
  EXPECT_EQ(w.runner.calls, 1);  // not asked again
  for (int i = 0; i < 3; ++i) EXPECT_EQ(w.Line(i)["gpu"], nullptr);
  json sum = s.Summary();
  EXPECT_EQ(sum["gpu"], nullptr);
  EXPECT_EQ(sum["gpu_error"],
            "not found: nvidia-smi: cannot run it: No such file or directory (looked on PATH)");
  EXPECT_EQ(sum["warnings"], json::array());
  EXPECT_EQ(s.SummaryLine(),
            "0 of 3 samples were above 25 % CPU (up to 0 %); engine 0 % CPU on average; GPU not "
            "read: not found: nvidia-smi: cannot run it: No such file or directory (looked on "
            "PATH)");
}

TEST(BusySamplerGpuTest, ATransientFailureIsCountedAndRetried) {
  GpuWorld w;
  w.runner.answers[kQuery] = {w.cap["query_gpu_nounits"]};
  w.runner.answers[kApps] = {w.cap["apps_one_nounits"]};
  BusySampler s(w.Options("1"), &w.proc, &w.reader, &w.clock, w.Sink());
  s.SampleOnce();
  w.clock.Advance(10);
  w.runner.fail = Status::Timeout("nvidia-smi: no answer within 10 s (killed)");
  s.SampleOnce();
  w.runner.fail = Status::Ok();
  w.clock.Advance(10);
  s.SampleOnce();
  EXPECT_EQ(w.Line(0)["gpu"], nullptr);
  EXPECT_EQ(w.Line(1)["gpu"]["index"], 1);
  json sum = s.Summary();
  EXPECT_EQ(sum["gpu"]["reads"], 1);
  EXPECT_EQ(sum["gpu"]["read_failures"], 1);
  EXPECT_EQ(
      sum["warnings"],
      json::parse(
          R"J(["nvidia-smi failed 1 time(s); first: timeout: nvidia-smi: no answer within 10 s (killed)"])J"));
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
  o.top_n = 5;
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
