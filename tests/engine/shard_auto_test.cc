// --shard auto (evals/run/shard_auto.h): the shard of a Slurm array task or
// a Kubernetes Indexed Job pod from the variables each engine sets, and the
// refusals where they do not tell I or N; and evalrun --shard auto itself.
#include "evals/run/shard_auto.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/deterministic_replies.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun {
namespace {

struct Env {
  std::map<std::string, std::string> vars;
  EnvLookup Lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

// The shard "I/N", or "error: <message>".
std::string Resolve(const std::map<std::string, std::string>& vars, std::string* from = nullptr) {
  Env env{vars};
  ShardSpec s;
  std::string f;
  Status st = ResolveAutoShard(env.Lookup(), &s, &f);
  if (from) *from = f;
  return st.ok() ? s.Text() : "error: " + st.message();
}

TEST(ShardAuto, SlurmArrayTaskIsTheShardOfTheWholeArray) {
  std::string from;
  EXPECT_EQ(Resolve({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "8"},
                     {"SLURM_ARRAY_TASK_COUNT", "8"}},
                    &from),
            "3/8");
  EXPECT_EQ(from, "SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_MAX=8");
  // COUNT is optional; MIN/MAX alone tell a whole 1-N array.
  EXPECT_EQ(Resolve({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "4"}}),
            "1/4");
}

TEST(ShardAuto, TaskSubmittedAgainAloneNeedsTheCount) {
  // sbatch --array=3: Slurm sets MIN = MAX = 3, COUNT = 1.
  const std::map<std::string, std::string> alone = {{"SLURM_ARRAY_TASK_ID", "3"},
                                                    {"SLURM_ARRAY_TASK_MIN", "3"},
                                                    {"SLURM_ARRAY_TASK_MAX", "3"},
                                                    {"SLURM_ARRAY_TASK_COUNT", "1"}};
  const std::string e = Resolve(alone);
  EXPECT_NE(e.find("error: --shard auto: the job array (3-3, 1 tasks) is not a whole 1-N array"), std::string::npos)
      << e;
  EXPECT_NE(e.find("set EVALRUN_SHARD_COUNT=N"), std::string::npos) << e;
  std::string from;
  EXPECT_EQ(Resolve({{"SLURM_ARRAY_TASK_ID", "3"},
                     {"SLURM_ARRAY_TASK_MIN", "3"},
                     {"SLURM_ARRAY_TASK_MAX", "3"},
                     {"SLURM_ARRAY_TASK_COUNT", "1"},
                     {"EVALRUN_SHARD_COUNT", "4"}},
                    &from),
            "3/4");
  EXPECT_EQ(from, "SLURM_ARRAY_TASK_ID=3, EVALRUN_SHARD_COUNT=4");
  // A gapped array (--array=1,2,4) is not whole either.
  EXPECT_NE(Resolve({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "4"},
                     {"SLURM_ARRAY_TASK_COUNT", "3"}})
                .find("not a whole 1-N array"),
            std::string::npos);
}

TEST(ShardAuto, WholeArrayAndCountMustAgree) {
  const std::string e = Resolve({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "1"},
                                 {"SLURM_ARRAY_TASK_MAX", "4"}, {"EVALRUN_SHARD_COUNT", "8"}});
  EXPECT_EQ(e, "error: --shard auto: the job array is 1-4 but EVALRUN_SHARD_COUNT is 8; make them agree");
  EXPECT_EQ(Resolve({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "4"},
                     {"EVALRUN_SHARD_COUNT", "4"}}),
            "2/4");
}

TEST(ShardAuto, SlurmArrayCountsFromOne) {
  const std::string e = Resolve({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "0"},
                                 {"SLURM_ARRAY_TASK_MAX", "3"}});
  EXPECT_NE(e.find("SLURM_ARRAY_TASK_ID is 0: the array must count from 1 (sbatch --array=1-N)"), std::string::npos)
      << e;
  EXPECT_NE(Resolve({{"SLURM_ARRAY_TASK_ID", "5"}, {"EVALRUN_SHARD_COUNT", "4"}}).find("the index is past the count"),
            std::string::npos);
}

TEST(ShardAuto, KubernetesIndexIsZeroBasedAndNeedsTheCount) {
  std::string from;
  EXPECT_EQ(Resolve({{"JOB_COMPLETION_INDEX", "0"}, {"EVALRUN_SHARD_COUNT", "8"}}, &from), "1/8");
  EXPECT_EQ(from, "JOB_COMPLETION_INDEX=0, EVALRUN_SHARD_COUNT=8");
  EXPECT_EQ(Resolve({{"JOB_COMPLETION_INDEX", "7"}, {"EVALRUN_SHARD_COUNT", "8"}}), "8/8");
  EXPECT_NE(Resolve({{"JOB_COMPLETION_INDEX", "8"}, {"EVALRUN_SHARD_COUNT", "8"}}).find("shard 9 of 8"),
            std::string::npos);
  const std::string e = Resolve({{"JOB_COMPLETION_INDEX", "2"}});
  EXPECT_NE(e.find("JOB_COMPLETION_INDEX is set but EVALRUN_SHARD_COUNT is not"), std::string::npos) << e;
  EXPECT_NE(e.find("spec.completions"), std::string::npos) << e;
}

TEST(ShardAuto, RefusedWithoutAnIndexOrWithBoth) {
  const std::string none = Resolve({{"EVALRUN_SHARD_COUNT", "4"}});
  EXPECT_EQ(none, "error: --shard auto: neither SLURM_ARRAY_TASK_ID (a task of a Slurm job array) nor "
                  "JOB_COMPLETION_INDEX (a pod of a Kubernetes Indexed Job) is set; give the shard as --shard I/N");
  EXPECT_NE(Resolve({{"SLURM_ARRAY_TASK_ID", "1"}, {"JOB_COMPLETION_INDEX", "0"}, {"EVALRUN_SHARD_COUNT", "2"}})
                .find("both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set"),
            std::string::npos);
}

TEST(ShardAuto, ValuesThatAreNotCountsAreNamed) {
  EXPECT_EQ(Resolve({{"SLURM_ARRAY_TASK_ID", "x3"}}),
            "error: --shard auto: SLURM_ARRAY_TASK_ID is \"x3\", not a whole number 0 to 100000");
  EXPECT_NE(Resolve({{"JOB_COMPLETION_INDEX", "0"}, {"EVALRUN_SHARD_COUNT", "-2"}}).find("EVALRUN_SHARD_COUNT is \"-2\""),
            std::string::npos);
  EXPECT_NE(Resolve({{"JOB_COMPLETION_INDEX", "0"}, {"EVALRUN_SHARD_COUNT", "0"}}).find("must be at least 1"),
            std::string::npos);
}

}  // namespace
}  // namespace evalrun

namespace evalrun::testing {
namespace {

// The real binary: refused before anything is asked where no index is set
// (the variables set empty count as not set, whatever ctest runs inside),
// and a Kubernetes pod's index taken as shard index + 1.
class ShardAutoRun : public E2eTest {};

TEST_F(ShardAutoRun, RefusedWithoutAnIndexAndTakenFromAPodsIndex) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder(DeterministicReply);
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 6, "max_tokens": 64}})");
  const std::vector<std::string> none = {"SLURM_ARRAY_TASK_ID=", "JOB_COMPLETION_INDEX=", "EVALRUN_SHARD_COUNT="};
  BinaryResult r = RunBinary({EvalrunBinary(), "--card", card, "--shard", "auto", "--out", dir_ + "/runs",
                              "--data-dir", DatasetsDir(), "--job", "a"},
                             60, none);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("evalrun: --shard auto: neither SLURM_ARRAY_TASK_ID"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/a"));

  BinaryResult k = RunBinary({EvalrunBinary(), "--card", card, "--shard", "auto", "--out", dir_ + "/runs",
                              "--data-dir", DatasetsDir(), "--job", "k"},
                             60, {"SLURM_ARRAY_TASK_ID=", "JOB_COMPLETION_INDEX=1", "EVALRUN_SHARD_COUNT=2"});
  ASSERT_EQ(k.exit_code, 0) << k.err;
  EXPECT_NE(k.err.find("--shard auto: shard 2/2 from JOB_COMPLETION_INDEX=1, EVALRUN_SHARD_COUNT=2"),
            std::string::npos)
      << k.err;
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/k/run.json"));
  EXPECT_EQ(run["shard"]["index"], 2);
  EXPECT_EQ(run["shard"]["count"], 2);
}

}  // namespace
}  // namespace evalrun::testing
