// The load sampler's GPU side: nvidia-smi answered from captures of a real
// two-H200 machine (tests/fixtures/nvidia-smi), the card chosen by index or
// UUID, the engine's card checked, failures counted.
#include "evals/watch/busy_sampler.h"

#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/engine/busy_sampler_world.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

using busy_testing::EngineOnPort;
using busy_testing::World;
using nlohmann::json;

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

std::filesystem::path FixturesDir() { return testing::FixturePath("nvidia-smi"); }

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

}  // namespace
}  // namespace evalrun
