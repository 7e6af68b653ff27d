// Crash safety against a real llama-server: evalrun killed with SIGKILL in
// the middle of a run, then the same job again: every question answered
// once, none lost, none asked twice beyond those in flight at the kill.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "tests/real/counting_proxy.h"
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealResume : public RealLaneTest {};

TEST_F(RealResume, KillNineMidRunThenResumeAsksOnlyTheRest) {
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 16384});
  CountingProxy proxy(s->origin());  // the real server logs no requests
  ASSERT_TRUE(proxy.Start());
  const std::string card = WriteCardJson(
      Card({{"base_url", proxy.base_url()}, {"slots", 2}}, {{"mmlupro", {{"questions", 40}, {"max_tokens", 512}}}}));
  const std::string samples = JobDir("crash") + "/mmlupro/samples.jsonl";
  std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "crash",
                                   "--out", dir_ + "/runs", "--data-dir", DatasetsDir()};
  const int pid = SpawnBinary(argv, dir_ + "/out1", dir_ + "/err1");
  ASSERT_GT(pid, 0);
  size_t seen = 0;
  for (int i = 0; i < 600 && seen < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string text = ReadFile(samples);
    seen = std::count(text.begin(), text.end(), '\n');
  }
  ASSERT_GE(seen, 6u) << ReadFile(dir_ + "/err1");
  kill(pid, SIGKILL);
  BinaryResult killed = WaitBinary(pid, 30);
  EXPECT_EQ(killed.signal, SIGKILL);
  const size_t before = Lines(samples).size();
  ASSERT_LT(before, 40u) << "the run finished before the kill; make it longer";

  BinaryResult r = Run({"--card", card, "--job", "crash"}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> ids;
  for (const auto& l : Samples("crash", "mmlupro")) EXPECT_TRUE(ids.insert(l["id"]).second) << l["id"];
  EXPECT_EQ(ids.size(), 40u);
  // Asked again at most the ones in flight at the kill (2 slots).
  EXPECT_LE(proxy.Count("POST /v1/chat/completions"), 40 + 2) << "answered questions were asked again";
}

}  // namespace
}  // namespace evalrun::testing
