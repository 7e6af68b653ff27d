// The slurm lane (ctest label slurm): docs/shards.md's Slurm scripts
// (scripts/shards_submit.sh, shard.sbatch, merge.sbatch), run as they are
// against a live cluster (scripts/slurm_local.sh start) and a loopback fake
// server. An array of 4 shards (--shard auto) and the merge after them
// (afterok) give the same samples and results.json figures as one unsharded
// run of the same card; a task cancelled in the middle leaves the merge
// waiting, and submitted again it resumes its job folder and its new merge
// completes; a task that fails keeps the merge from starting.
//
// Skipped, saying so, only where no cluster answers (sinfo fails): the
// cluster is found by SLURM_CONF, else by the file slurm_local.sh writes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/deterministic_replies.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_figures.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

std::string ScriptPath(const std::string& name) { return SourceDir() + "/scripts/" + name; }

// SLURM_CONF of the cluster to use: the environment's, else the one
// scripts/slurm_local.sh start wrote down; empty when neither.
std::string ClusterConf() {
  if (const char* c = std::getenv("SLURM_CONF"); c && *c) return c;
  const char* e = std::getenv("EVALRUN_SLURM_ENV");
  std::ifstream in(e && *e ? e : "/tmp/evalrun-slurm.env");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SLURM_CONF=", 0) == 0) return line.substr(11);
  return "";
}

// Why the lane cannot run here ("" when a cluster answers), asked once.
std::string NoCluster(const std::string& conf) {
  if (conf.empty())
    return "SLURM_CONF is not set and /tmp/evalrun-slurm.env (EVALRUN_SLURM_ENV) is not there";
  BinaryResult s = RunBinary({"/usr/bin/env", "sinfo", "-h", "-o", "%T"}, 20, {"SLURM_CONF=" + conf});
  if (s.exit_code == 0 && !s.out.empty()) return "";
  std::string err = s.timed_out ? "no answer in 20 s" : s.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  return "sinfo with SLURM_CONF=" + conf + ": " + err;
}

class SlurmLane : public E2eTest {
 protected:
  static void SetUpTestSuite() { no_cluster_ = NoCluster(ClusterConf()); }
  void SetUp() override {
    E2eTest::SetUp();
    conf_ = ClusterConf();
    if (!no_cluster_.empty())
      GTEST_SKIP() << "no Slurm cluster answers (" << no_cluster_ << "); scripts/slurm_local.sh start starts one";
  }
  void TearDown() override {
    for (const auto& id : submitted_) Slurm({"scancel", id});
    E2eTest::TearDown();
  }

  // A Slurm client command (found on PATH) against the cluster.
  BinaryResult Slurm(std::vector<std::string> argv) {
    argv.insert(argv.begin(), "/usr/bin/env");
    return RunBinary(argv, 30, {"SLURM_CONF=" + conf_});
  }

  // scripts/shards_submit.sh N [TASKS] from the test's folder (the jobs'
  // logs land there), with evalrun's build on PATH; {array id, merge id}.
  std::pair<std::string, std::string> Submit(const std::string& job, int n, const std::string& tasks = "") {
    const std::string bin = fs::path(EvalrunBinary()).parent_path().string();
    std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir_,
                                     ScriptPath("shards_submit.sh"), std::to_string(n)};
    if (!tasks.empty()) argv.push_back(tasks);
    BinaryResult r = RunBinary(argv, 30,
                               {"SLURM_CONF=" + conf_, "CARD=" + dir_ + "/card.json", "RUNS=" + dir_ + "/runs",
                                "JOB=" + job, "EVALRUN_DATA=" + DatasetsDir(),
                                "PATH=" + bin + ":" + std::string(std::getenv("PATH"))});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const size_t sp = r.out.find(' ');
    std::string array = r.out.substr(0, sp), merge = sp == std::string::npos ? "" : r.out.substr(sp + 1);
    while (!merge.empty() && merge.back() == '\n') merge.pop_back();
    submitted_.push_back(array);
    submitted_.push_back(merge);
    return {array, merge};
  }

  // "STATE Reason" of one job (or array task "<id>_<i>") from scontrol.
  std::string State(const std::string& id) {
    BinaryResult r = Slurm({"scontrol", "-o", "show", "job", id});
    auto field = [&](const std::string& key) {
      const size_t at = r.out.find(" " + key + "=");
      if (at == std::string::npos) return std::string("?");
      const size_t from = at + key.size() + 2;
      return r.out.substr(from, r.out.find(' ', from) - from);
    };
    return field("JobState") + " " + field("Reason");
  }

  // Waits (bounded) until the job's state starts with `want`, or the job
  // has ended otherwise; its last state.
  std::string WaitFor(const std::string& id, const std::string& want, double timeout_s = 90) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    std::string s;
    do {
      s = State(id);
      if (s.rfind(want, 0) == 0) break;
      bool ended = false;
      for (const char* e : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL"})
        ended |= s.rfind(std::string(e) + " ", 0) == 0;
      if (ended) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (std::chrono::steady_clock::now() < end);
    return s;
  }

  size_t Answered(const std::string& job) {
    size_t n = 0;
    for (const char* part : {"mmlupro", "gpqa"}) n += Samples(job, part).size();
    return n;
  }

  static inline std::string no_cluster_;
  std::string conf_;
  std::vector<std::string> submitted_;
};

TEST_F(SlurmLane, ArrayOfFourMergedEqualsOneRunAndACancelledTaskResumes) {
  FakeServerOptions o;
  o.slots = 8;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  std::atomic<int> delay_ms{0};
  server.SetResponder([&](const nlohmann::json& req) {
    FakeReply r = DeterministicReply(req);
    r.delay_ms = delay_ms.load();
    return r;
  });
  WriteCard(server.base_url(), "2",
            R"({"mmlupro": {"questions": 32, "max_tokens": 64}, "gpqa": {"questions": 16, "max_tokens": 64}})");
  BinaryResult one = Run({"--card", dir_ + "/card.json", "--job", "one"}, 120);
  ASSERT_EQ(one.exit_code, 0) << one.err;

  // Slow answers, so that task 2 can be cancelled in the middle of its run.
  delay_ms = 400;
  const auto [array, merge] = Submit("big", 4);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Answered("big-2") < 2 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(Answered("big-2"), 2u) << "task 2 answered nothing in 60 s: " << State(array + "_2");
  ASSERT_EQ(Slurm({"scancel", array + "_2"}).exit_code, 0);
  // Still slow until its process has ended (no longer running nor
  // completing), so that it ends unfinished.
  EXPECT_EQ(WaitFor(array + "_2", "CANCELLED").substr(0, 9), "CANCELLED");
  for (int i = 0; i < 150 && !Slurm({"squeue", "-h", "-t", "running,completing", "-j", array + "_2"}).out.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  delay_ms = 0;
  for (const char* t : {"_1", "_3", "_4"}) EXPECT_EQ(WaitFor(array + t, "COMPLETED").substr(0, 9), "COMPLETED") << t;
  const size_t kept = Answered("big-2");
  const nlohmann::json shard2 = nlohmann::json::parse(ReadFile(dir_ + "/runs/big-2/shard.json"));
  const size_t planned = shard2["parts"]["mmlupro"]["shard_items"].get<size_t>() +
                         shard2["parts"]["gpqa"]["shard_items"].get<size_t>();
  EXPECT_LT(kept, planned) << "task 2 was not cancelled in the middle";
  // The merge waits for ever on a cancelled task; it never ran.
  EXPECT_EQ(WaitFor(merge, "PENDING DependencyNeverSatisfied"), "PENDING DependencyNeverSatisfied");
  EXPECT_FALSE(fs::exists(dir_ + "/runs/big"));
  ASSERT_EQ(Slurm({"scancel", merge}).exit_code, 0);

  // Task 2 again, alone, and a new merge after it.
  const auto [again, merge2] = Submit("big", 4, "2");
  EXPECT_EQ(WaitFor(merge2, "COMPLETED"), "COMPLETED None") << ReadFile(dir_ + "/evalrun-merge-" + merge2 + ".out");
  const std::string log2 = ReadFile(dir_ + "/evalrun-shard-" + again + "_2.out");
  EXPECT_NE(log2.find("--shard auto: shard 2/4 from SLURM_ARRAY_TASK_ID=2, EVALRUN_SHARD_COUNT=4"), std::string::npos)
      << log2;
  EXPECT_NE(log2.find("resuming job big-2: answered before:"), std::string::npos) << log2;
  for (int i : {1, 3, 4}) {
    const std::string log = ReadFile(dir_ + "/evalrun-shard-" + array + "_" + std::to_string(i) + ".out");
    EXPECT_NE(log.find("--shard auto: shard " + std::to_string(i) + "/4"), std::string::npos) << log;
  }

  // The merged job is the unsharded run: the same answers per id, the same figures.
  const nlohmann::json single = Results("one"), merged = Results("big");
  EXPECT_EQ(merged["merged"]["count"], 4);
  EXPECT_EQ(merged["merged"]["partial"], false);
  for (const char* part : {"mmlupro", "gpqa"}) {
    std::map<std::string, nlohmann::json> a, b;
    for (const auto& s : Samples("one", part)) a[s["id"]] = Answer(s);
    for (const auto& s : Samples("big", part)) EXPECT_TRUE(b.emplace(s["id"], Answer(s)).second) << s["id"];
    EXPECT_EQ(a, b) << part;
    EXPECT_EQ(Figures(merged["parts"][part]), Figures(single["parts"][part])) << part;
    EXPECT_EQ(merged["parts"][part]["complete"], true) << part;
  }
  EXPECT_EQ(Samples("one", "mmlupro").size(), 32u);
  EXPECT_GT(single["parts"]["mmlupro"]["correct"].get<int>(), 0);
  EXPECT_LT(single["parts"]["mmlupro"]["correct"].get<int>(), 32);
}

TEST_F(SlurmLane, AFailedTaskKeepsTheMergeFromStarting) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder(DeterministicReply);
  WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 8, "max_tokens": 64}})");
  // Task 3's job folder cannot be made: a file is in its place.
  fs::create_directories(dir_ + "/runs");
  std::ofstream(dir_ + "/runs/bad-3") << "not a folder\n";
  const auto [array, merge] = Submit("bad", 4);
  EXPECT_EQ(WaitFor(array + "_3", "FAILED").substr(0, 6), "FAILED");
  for (const char* t : {"_1", "_2", "_4"}) EXPECT_EQ(WaitFor(array + t, "COMPLETED").substr(0, 9), "COMPLETED") << t;
  EXPECT_EQ(WaitFor(merge, "PENDING DependencyNeverSatisfied"), "PENDING DependencyNeverSatisfied");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(State(merge), "PENDING DependencyNeverSatisfied");
  EXPECT_FALSE(fs::exists(dir_ + "/runs/bad"));
  const std::string log3 = ReadFile(dir_ + "/evalrun-shard-" + array + "_3.out");
  EXPECT_NE(log3.find("bad-3"), std::string::npos) << log3;
}

// The Slurm section of docs/shards.md shows these very scripts, each in a
// fenced block of its own, so that what the lane runs is what users read.
TEST(ShardsDoc, SlurmSectionIsTheLanesScripts) {
  const std::string doc = ReadFile(SourceDir() + "/docs/shards.md");
  for (const char* name : {"shards_submit.sh", "shard.sbatch", "merge.sbatch"}) {
    const std::string text = ReadFile(ScriptPath(name));
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_NE(doc.find("```bash\n" + text + "```\n"), std::string::npos)
        << "docs/shards.md does not show scripts/" << name << " as it is";
  }
}

}  // namespace
}  // namespace evalrun::testing
