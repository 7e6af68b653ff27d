// The code sandbox's trust boundary, tried as a hostile model would at every
// level this machine offers (tests/fixtures/escape/ has the answers and what
// each tries): reading the tests (walking the file system, another
// process's command line), stealing an API key from another process,
// outliving the grading (a cleared parent-death signal, ptrace, setsid, a
// double-forked daemon), changing a neighbour's verdict (CPU burned by
// escaped daemons, or in children during its own run), zombies made with
// CLONE_PARENT, System V and file residue, and memory held in children and
// memory files. Each is graded beside honest answers: every hostile answer
// fails, the honest ones keep their verdicts, no grading is an error, the
// key never reaches a verdict, and once the gradings ended nothing of an
// answer is left (tests/support/escape_check.h says what is looked for).
#include <time.h>
#include <unistd.h>

#include <future>
#include <map>

#include <gtest/gtest.h>

#include "evals/sandbox/sandbox.h"
#include "scorers/livecodebench/lcb_grade.h"
#include "scorers/livecodebench/lcb_sandbox_runner.h"
#include "tests/support/escape_check.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun {
namespace {

using testing::EscapeAnswer;
using testing::EscapeKey;
using testing::EscapeLeftovers;

const char* kHonestSum = "n = int(input())\nprint(sum(map(int, input().split())))\n";
// 0.25 s of CPU per test: passes alone with a 1 s limit per test.
const char* kHonestCpu =
    "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.25:\n    pass\n"
    "n = int(input())\nprint(sum(map(int, input().split())))\n";

struct Graded {
  std::string name;
  Status status;
  LcbGrade grade;
};

std::string Describe(const Graded& g) {
  return g.name + ": " + g.status.ToString() + " " + g.grade.error_message + " " + g.grade.error + " " +
         g.grade.lost_reason + " output " + g.grade.output.substr(0, 200);
}

class LcbEscape : public ::testing::TestWithParam<SandboxLevel> {
 protected:
  void SetUp() override {
    SandboxOptions o = LcbSandboxOptions("/usr/bin/python3", GetParam() == SandboxLevel::kRlimits);
    o.max_level = GetParam();
    o.limits.total_memory_bytes = 96ull << 20;  // memory_children holds 128 MiB at once
    ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box_, &probe_).ok()) << probe_.Notes();
    if (box_->level() != SandboxLevelName(GetParam()))
      GTEST_SKIP() << SandboxLevelName(GetParam()) << " cannot be made here:\n" << probe_.Notes();
    std::map<std::string, LcbTestCases> problems;
    ASSERT_TRUE(testing::LcbFixtureProblems(&problems).ok());
    sum_ = problems.at("abc900_a");
    ASSERT_TRUE(decoy_.ok());
    ASSERT_EQ(EscapeLeftovers(), std::vector<std::string>{}) << "left by an earlier run; remove it first";
  }
  void TearDown() override { testing::RemoveEscapeFiles(); }

  // Grades each (name, code) at once, beside one another.
  std::vector<Graded> GradeTogether(const std::vector<std::pair<std::string, std::string>>& answers, int timeout_s) {
    const LcbRunner runner = SandboxLcbRunner(box_.get());
    std::vector<Graded> graded(answers.size());
    std::vector<std::future<void>> running;
    for (size_t i = 0; i < answers.size(); ++i)
      running.push_back(std::async(std::launch::async, [&, i] {
        graded[i].name = answers[i].first;
        graded[i].status =
            GradeLcbCode(answers[i].second, sum_, {timeout_s, LcbProfile::kOfficial}, runner, &graded[i].grade);
      }));
    for (auto& r : running) r.get();
    return graded;
  }

  void ExpectVerdicts(const std::vector<Graded>& graded) {
    for (const Graded& g : graded) {
      ASSERT_TRUE(g.status.ok()) << Describe(g);
      const bool honest = g.name.rfind("honest", 0) == 0;
      EXPECT_EQ(g.grade.passed(), honest) << Describe(g);
      for (const std::string& text : {g.grade.output, g.grade.error, g.grade.error_message, g.grade.lost_reason})
        EXPECT_EQ(text.find(EscapeKey()), std::string::npos) << g.name << " reached the key";
    }
  }

  SandboxProbe probe_;
  std::unique_ptr<CodeSandbox> box_;
  LcbTestCases sum_;
  testing::EscapeDecoy decoy_;
};

TEST_P(LcbEscape, HostileAnswersFailBesideHonestOnesAndLeaveNothing) {
  std::vector<std::pair<std::string, std::string>> answers = {{"honest_sum", kHonestSum}};
  for (const char* name : {"read_tests_by_walking", "read_tests_from_cmdline", "steal_api_key", "outlive_grading",
                           "clone_parent_zombies", "sysv_residue", "file_residue"})
    answers.emplace_back(name, EscapeAnswer(name));
  if (probe_.containment.find("memory") != std::string::npos)
    answers.emplace_back("memory_children", EscapeAnswer("memory_children"));
  else
    std::cout << "no control group holds the whole run's memory here: memory_children not graded ("
              << probe_.containment << ")\n";
  ExpectVerdicts(GradeTogether(answers, 3));
  EXPECT_EQ(EscapeLeftovers(), std::vector<std::string>{}) << box_->level();
}

// The CPU-share cases: an honest answer's wall-clock time limit is the
// measure, so ctest runs them alone (tests/CMakeLists.txt: RUN_SERIAL), where
// no other test's load stands in for the hostile answer's.
class LcbEscapeCpu : public LcbEscape {};

// Daemons burning CPU after their answer ended must not push the next
// answer into a time limit.
TEST_P(LcbEscapeCpu, EscapedCpuBurnersDoNotTimeOutTheNextAnswer) {
  ExpectVerdicts(GradeTogether({{"cpu_burners_escape", EscapeAnswer("cpu_burners_escape")}}, 3));
  ExpectVerdicts(GradeTogether({{"honest_cpu", kHonestCpu}}, 1));
  EXPECT_EQ(EscapeLeftovers(), std::vector<std::string>{}) << box_->level();
}

// Two at once (scoring.concurrency 2): an answer burning CPU in 8 children
// during its own run leaves its neighbour its share.
TEST_P(LcbEscapeCpu, ABurnerBesideAnHonestAnswerLeavesItItsShare) {
  ExpectVerdicts(GradeTogether({{"cpu_burn_during_run", EscapeAnswer("cpu_burn_during_run")},
                                {"honest_cpu", kHonestCpu}},
                               1));
  EXPECT_EQ(EscapeLeftovers(), std::vector<std::string>{}) << box_->level();
}

std::string LevelName(const ::testing::TestParamInfo<SandboxLevel>& i) { return SandboxLevelName(i.param); }

INSTANTIATE_TEST_SUITE_P(Levels, LcbEscape,
                         ::testing::Values(SandboxLevel::kNamespaces, SandboxLevel::kUnshare, SandboxLevel::kSeccomp,
                                           SandboxLevel::kRlimits),
                         LevelName);
INSTANTIATE_TEST_SUITE_P(Levels, LcbEscapeCpu,
                         ::testing::Values(SandboxLevel::kNamespaces, SandboxLevel::kUnshare, SandboxLevel::kSeccomp,
                                           SandboxLevel::kRlimits),
                         LevelName);

}  // namespace
}  // namespace evalrun
