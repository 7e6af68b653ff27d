// LiveCodeBench against a real llama-server (stories260K: its answers are
// garbage, so every verdict is a failure such as no_code; the counts and
// the resume are the point): the fixture rows (tests/fixtures/
// livecodebench) asked through a counting proxy, evalrun killed with
// SIGKILL while it grades (every answer journaled, not all graded), the
// same job again grades the rest without asking anything; then report and
// compare (McNemar on the pass/fail rows both runs have) of it and a second
// run. --unsafe-exec is given so that the lane runs on a machine without
// isolation too; the level taken is recorded and checked against the probe.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "tests/real/counting_proxy.h"
#include "tests/real/real_lane.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun::testing {
namespace {

const std::string kFix = LcbFixtureDir();
constexpr size_t kProblems = 5;

class RealLiveCodeBench : public RealLaneTest {
 protected:
  std::string MakeCard(const std::string& base_url) {
    const std::string rows = dir_ + "/rows.jsonl";
    WriteFile(rows, ReadFile(kFix + "test.jsonl") + ReadFile(kFix + "test2.jsonl"));
    nlohmann::json card = Card({{"base_url", base_url}, {"slots", 2}},
                               {{"livecodebench", {{"data_file", rows}, {"max_tokens", 64}, {"test_timeout_s", 3}}}});
    card["scoring"] = {{"concurrency", 1}};
    return WriteCardJson(card);
  }

  std::vector<std::string> Argv(const std::string& card, const std::string& job) {
    return {EvalrunBinary(), "--card", card, "--job", job, "--out", dir_ + "/runs", "--data-dir", DatasetsDir(),
            "--unsafe-exec"};
  }

  // Every answer a failure, the failures counted, the level recorded.
  void ExpectGarbageGraded(const std::string& job) {
    std::set<std::string> ids;
    for (const auto& s : Samples(job, "livecodebench")) {
      EXPECT_TRUE(ids.insert(s["id"].get<std::string>()).second) << s["id"];
      EXPECT_EQ(s["passed"], false) << s.dump();
      EXPECT_FALSE(s["failure"].get<std::string>().empty());
    }
    EXPECT_EQ(ids.size(), kProblems);
    const nlohmann::json r = Results(job)["parts"]["livecodebench"];
    EXPECT_EQ(r["n"], static_cast<int>(kProblems));
    EXPECT_EQ(r["correct"], 0);
    int failures = 0;
    for (const auto& [name, count] : r["failures"].items()) failures += count.get<int>();
    EXPECT_EQ(failures, static_cast<int>(kProblems)) << r["failures"].dump();
    const std::string level = r["sandbox"]["level"].get<std::string>();
    EXPECT_EQ(r["sandbox"]["probe"][level], "ok") << r["sandbox"].dump();
    EXPECT_EQ(r["sandbox"]["unsafe_exec"], true);
  }
};

TEST_F(RealLiveCodeBench, KilledWhileGradingResumesWithoutAskingAgainThenReportAndCompare) {
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 8192});
  CountingProxy proxy(s->origin());
  ASSERT_TRUE(proxy.Start());
  const std::string card = MakeCard(proxy.base_url());
  const std::string part = JobDir("k") + "/livecodebench";
  const int pid = SpawnBinary(Argv(card, "k"), dir_ + "/k.out", dir_ + "/k.err");
  ASSERT_GT(pid, 0);
  // Every answer journaled and not all graded: the kill lands in grading.
  bool ready = false;
  for (int i = 0; i < 12000 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ready = std::filesystem::exists(part + "/answers.jsonl") &&
            Lines(part + "/answers.jsonl").size() == kProblems;
  }
  ASSERT_TRUE(ready) << ReadFile(dir_ + "/k.err");
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitBinary(pid, 30).signal, SIGKILL);
  const size_t graded_before =
      std::filesystem::exists(part + "/samples.jsonl") ? Lines(part + "/samples.jsonl").size() : 0;
  ASSERT_LT(graded_before, kProblems) << "grading finished before the kill";
  const int asked = proxy.Count("POST /v1/chat/completions");
  EXPECT_EQ(asked, static_cast<int>(kProblems));

  BinaryResult resumed = RunBinary(Argv(card, "k"), 600);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("answered, not scored"), std::string::npos) << resumed.err;
  EXPECT_EQ(proxy.Count("POST /v1/chat/completions"), asked);  // nothing asked again
  EXPECT_FALSE(std::filesystem::exists(part + "/answers.jsonl"));
  ExpectGarbageGraded("k");

  BinaryResult second = RunBinary(Argv(card, "b"), 600);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  ExpectGarbageGraded("b");

  BinaryResult rep = RunBinary({EvalrunBinary(), "report", JobDir("k")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(ReadFile(JobDir("k") + "/report.md").find("LiveCodeBench: pass@1 by difficulty"), std::string::npos);

  BinaryResult c = RunBinary({EvalrunBinary(), "compare", JobDir("k"), JobDir("b"), "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json doc = nlohmann::json::parse(c.out.substr(c.out.find('{')));
  ASSERT_EQ(doc["parts"].size(), 1u);
  const nlohmann::json& pd = doc["parts"][0];
  EXPECT_EQ(pd["kind"], "code");
  const nlohmann::json& overall = pd["metrics"][0]["overall"];
  EXPECT_EQ(overall["a_better"], 0);  // both fail every problem: no discordant pair
  EXPECT_EQ(overall["b_better"], 0);
  EXPECT_DOUBLE_EQ(overall["p_value"].get<double>(), 1.0);
  EXPECT_EQ(overall["n"], static_cast<int>(kProblems));
}

}  // namespace
}  // namespace evalrun::testing
