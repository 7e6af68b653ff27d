// A real llama-server killed with SIGKILL in the middle of a run: started
// again on the same port with the same model, evalrun waits for it, records
// the outage and carries on (nothing answered lost or asked twice); started
// again with another model, evalrun stops with exit 3 naming both instead of
// mixing two models' answers.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealEngine : public RealLaneTest {
 protected:
  // Starts evalrun on `card` in the background, waits until `n` answers are
  // on disk; returns its pid (or -1).
  int SpawnAndWait(const std::string& card, const std::string& job, size_t n) {
    std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", job,
                                     "--out", dir_ + "/runs", "--data-dir", DatasetsDir()};
    const int pid = SpawnBinary(argv, dir_ + "/" + job + ".out", dir_ + "/" + job + ".err");
    const std::string samples = JobDir(job) + "/mmlupro/samples.jsonl";
    for (int i = 0; i < 1200; ++i) {
      const std::string text = ReadFile(samples);
      if (static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) >= n) return pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pid;
  }
  nlohmann::json MmluCard(const LlamaServer* s, int questions) {
    nlohmann::json c = Card(Server(s, 2), {{"mmlupro", {{"questions", questions}, {"max_tokens", 512}}}});
    c["server"]["ready_timeout_s"] = 60;
    return c;
  }
};

TEST_F(RealEngine, KilledMidRunAndStartedAgainTheRunWaitsAndCarriesOn) {
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 16384});
  const int port = s->port();
  const std::string card = WriteCardJson(MmluCard(s, 40));
  const int pid = SpawnAndWait(card, "crash", 5);
  ASSERT_GT(pid, 0);
  s->Kill();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  LlamaServer* again = StartServer({.parallel = 2, .ctx = 16384}, port);
  ASSERT_TRUE(again->running());
  BinaryResult r = WaitBinary(pid, 600);
  ASSERT_EQ(r.exit_code, 0) << ReadFile(dir_ + "/crash.err");
  std::set<std::string> ids;
  for (const auto& l : Samples("crash", "mmlupro")) EXPECT_TRUE(ids.insert(l["id"]).second) << "asked twice: " << l["id"];
  EXPECT_EQ(ids.size(), 40u);
  const auto p = Results("crash")["parts"]["mmlupro"];
  EXPECT_EQ(p["failed"], 0);
  ASSERT_GE(p["outages"].size(), 1u) << p.dump();
  EXPECT_EQ(p["outages"][0]["recovered"], true);
  EXPECT_GE(p["outages"][0]["seconds"].get<double>(), 2.0);
  EXPECT_NE(ReadFile(dir_ + "/crash.err").find("answers again"), std::string::npos);
}

TEST_F(RealEngine, StartedAgainWithAnotherModelTheRunStopsWithExitThree) {
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 16384});
  const int port = s->port();
  const std::string card = WriteCardJson(MmluCard(s, 40));
  const int pid = SpawnAndWait(card, "swap", 5);
  ASSERT_GT(pid, 0);
  s->Kill();
  const size_t before = Lines(JobDir("swap") + "/mmlupro/samples.jsonl").size();
  LlamaServer* other = StartServer({.model = "stories260K.gguf", .parallel = 2, .ctx = 4096}, port);
  ASSERT_TRUE(other->running());
  BinaryResult r = WaitBinary(pid, 600);
  const std::string err = ReadFile(dir_ + "/swap.err");
  EXPECT_EQ(r.exit_code, 3) << err;
  EXPECT_NE(err.find("stories260K-ctx128k.gguf"), std::string::npos) << err;
  EXPECT_NE(err.find("stories260K.gguf\""), std::string::npos) << err;
  // Nothing the second model said was kept.
  EXPECT_EQ(Lines(JobDir("swap") + "/mmlupro/samples.jsonl").size(), before);
}

}  // namespace
}  // namespace evalrun::testing
