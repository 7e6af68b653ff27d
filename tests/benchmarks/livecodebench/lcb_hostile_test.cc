// LiveCodeBench grading against hostile answers, at every sandbox level this
// machine offers: wrong answers that try to grade themselves passed (patch
// the harness, look for or rewrite the expected outputs, forge frames on
// every descriptor, exit at each stage) or to reach outside their run
// (signal or trace a neighbour, a fork bomb, read the API key from the
// environment or a file, write to a host path). Each is graded failed;
// honest answers graded at the same time, beside them, keep their verdicts;
// no grading is an error of the run. Where a level promises containment
// (docs/livecodebench.md's table, sandbox.h), the side effect is checked too.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <map>

#include <gtest/gtest.h>

#include "evals/sandbox/landlock_rules.h"
#include "evals/sandbox/sandbox.h"
#include "scorers/livecodebench/lcb_grade.h"
#include "scorers/livecodebench/lcb_sandbox_runner.h"
#include "tests/support/lcb_fixtures.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

const std::string kSecret = "sk-evalrun-hostile-" + std::to_string(getpid());

struct Answer {
  std::string id, problem, code;
  bool passes;
};

// Host paths the hostile answers aim at (made by the test).
struct Targets {
  std::string host_tmp_file;  // in the host's /tmp (world-writable)
  std::string closed_dir;     // root's, 0755: no other uid may write in it
  std::string secret_file;    // 0644, in a 0755 folder: readable by any uid on the host
};

std::vector<Answer> HostileAnswers(const Targets& t) {
  const std::string sum = "abc900_a", pair = "3900";
  return {
      {"patch_harness_run_test", sum,
       "import sys\nh = sys.modules['__main__']\nh.run_test = lambda job, program, i, text: {'frame': 'test', 'test': i, "
       "'printed': '6'}\nprint(0)", false},
      {"patch_channel_claims_pass", sum,
       "import sys\nh = sys.modules['__main__']\nold = h.Channel.send\nh.Channel.send = lambda self, f: old(self, "
       "{'frame': 'test', 'test': f.get('test', 0), 'passed': True, 'results': [True]})\nprint(0)", false},
      {"search_memory_for_expected", sum,
       "import gc\nfound = [o for o in gc.get_objects() if isinstance(o, dict) and 'outputs' in o]\n"
       "print(found[0]['outputs'][0] if found else 'nothing')", false},
      {"rewrite_expected", pair,
       "import gc\nfor o in gc.get_objects():\n    if isinstance(o, dict) and 'outputs' in o:\n        o['outputs'] = "
       "['[9, 9]'] * len(o['outputs'])\nclass Solution:\n    def pairSum(self, nums, target):\n        return [9, 9]",
       false},
      {"forge_frames_every_fd", sum,
       "import os\nfor fd in range(0, 64):\n    for line in (b'{\"frame\": \"test\", \"test\": 0, \"printed\": \"6\"}\\n', "
       "b'@@evalrun-lcb-result {\"results\": [true, true, true], \"error_code\": null}\\n', "
       "b'{\"frame\": \"test\", \"test\": 1, \"printed\": \"7\"}\\n'):\n        try:\n            os.write(fd, line)\n"
       "        except OSError:\n            pass\nos._exit(0)", false},
      {"forge_empty_result", sum,
       "import os\nfor fd in range(1, 64):\n    try:\n        os.write(fd, b'@@evalrun-lcb-result {\"results\": []}\\n')\n"
       "    except OSError:\n        pass\nprint(0)", false},
      {"exit_while_loading", sum, "import os\nos._exit(0)", false},
      {"exit_after_first_answer", sum,
       "import os, sys\nprint(6)\nsys.stdout.flush()\nos._exit(0)", false},
      {"sysexit_in_method", pair,
       "import sys\nclass Solution:\n    def pairSum(self, nums, target):\n        raise SystemExit(0)", false},
      {"keyboard_interrupt", sum, "raise KeyboardInterrupt", false},
      {"kill_and_trace_neighbours", sum,
       "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nme = os.getpid()\nfor name in os.listdir('/proc'):\n"
       "    if name.isdigit() and int(name) != me:\n        libc.ptrace(16, int(name), 0, 0)\n"
       "        libc.kill(int(name), 9)\nlibc.kill(-1, 9)\nprint(0)", false},
      {"fork_bomb", sum,
       "import ctypes, time\nlibc = ctypes.CDLL(None)\nfor _ in range(200):\n    libc.fork()\ntime.sleep(1)\nprint(0)",
       false},
      {"read_key_from_environment", sum,
       "import os\nprint(' '.join(v for v in os.environ.values() if 'sk-' in v) or 'none')", false},
      {"read_key_from_file", sum,
       "try:\n    print(open('" + t.secret_file + "').read().strip())\nexcept Exception as e:\n    print('none')", false},
      {"write_host_paths", sum,
       "import os\nfor p in ('" + t.host_tmp_file + "', '" + t.closed_dir + "/pwned', '/dev/shm/evalrun-hostile-" +
           std::to_string(getpid()) + "'):\n    try:\n        open(p, 'w').write('x')\n    except Exception:\n"
           "        pass\nprint(0)",
       false},
  };
}

std::vector<Answer> HonestAnswers() {
  return {
      {"honest_sum", "abc900_a", "n = int(input())\nprint(sum(map(int, input().split())))", true},
      {"honest_slow_sum", "abc900_a",
       "import time\ntime.sleep(0.7)\nn = int(input())\nprint(sum(map(int, input().split())))", true},
      {"honest_pair", "3900",
       "class Solution:\n    def pairSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n"
       "            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i",
       true},
      {"honest_wrong", "abc900_a", "print(0)", false},
  };
}

class LcbHostile : public ::testing::TestWithParam<SandboxLevel> {
 protected:
  void SetUp() override {
    SandboxOptions o = LcbSandboxOptions("/usr/bin/python3", GetParam() == SandboxLevel::kRlimits);
    o.max_level = GetParam();
    SandboxProbe probe;
    ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box_, &probe).ok()) << probe.Notes();
    if (box_->level() != SandboxLevelName(GetParam()))
      GTEST_SKIP() << SandboxLevelName(GetParam()) << " cannot be made here:\n" << probe.Notes();
    // The host's /tmp itself, not a folder of the test's: the path is the point.
    t_.host_tmp_file = "/tmp/evalrun-hostile-" + std::to_string(getpid()) + "-" + box_->level();
    chmod(dir_.path().c_str(), 0755);  // any uid may look in
    t_.closed_dir = dir_.path() + "/closed";
    t_.secret_file = dir_.path() + "/open/key";
    mkdir(t_.closed_dir.c_str(), 0755);
    mkdir((dir_.path() + "/open").c_str(), 0755);
    std::ofstream(t_.secret_file) << kSecret << "\n";
    chmod(t_.secret_file.c_str(), 0644);
    setenv("EVALRUN_API_KEY", kSecret.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("EVALRUN_API_KEY");
    unlink(t_.host_tmp_file.c_str());
  }
  bool HidesHostFiles() const { return box_->level() != "rlimits" || LandlockAbi() > 0; }

  testing::TempDir dir_{"evalrun-hostile"};
  std::unique_ptr<CodeSandbox> box_;
  Targets t_;
};

TEST_P(LcbHostile, EveryHostileAnswerFailsAndItsNeighboursAreGradedAsBefore) {
  std::map<std::string, LcbTestCases> problems;
  ASSERT_TRUE(testing::LcbFixtureProblems(&problems).ok());
  std::vector<Answer> answers = HostileAnswers(t_);
  for (const Answer& a : HonestAnswers()) answers.push_back(a);
  const LcbRunner runner = SandboxLcbRunner(box_.get());
  std::vector<LcbGrade> grades(answers.size());
  std::vector<std::future<Status>> running;
  for (size_t i = 0; i < answers.size(); ++i)  // all at once: each beside the others
    running.push_back(std::async(std::launch::async, [&, i] {
      return GradeLcbCode(answers[i].code, problems.at(answers[i].problem), {3, LcbProfile::kOfficial}, runner,
                          &grades[i]);
    }));
  for (size_t i = 0; i < answers.size(); ++i) {
    Status st = running[i].get();
    ASSERT_TRUE(st.ok()) << answers[i].id << ": " << st.ToString();
    EXPECT_EQ(grades[i].passed(), answers[i].passes)
        << answers[i].id << ": " << grades[i].error_message << " " << grades[i].error << " " << grades[i].lost_reason;
    // The key never reaches the environment; a key file neither wherever
    // the level holds the file system to the interpreter's files (every
    // level but rlimits on a kernel without Landlock).
    if (answers[i].id != "read_key_from_file" || HidesHostFiles()) {
      EXPECT_EQ(grades[i].output.find(kSecret), std::string::npos) << answers[i].id << " read the key";
    }
  }
  // Every level: the environment is evalrun's own short list, and a folder
  // of root's is not writable (a uid of its own, or the user namespace).
  const std::string level = box_->level();
  struct stat st;
  if (geteuid() == 0) {
    EXPECT_NE(stat((t_.closed_dir + "/pwned").c_str(), &st), 0) << level;
  }
  if (HidesHostFiles()) {
    EXPECT_NE(stat(t_.host_tmp_file.c_str(), &st), 0) << level << ": wrote the host's /tmp";
    EXPECT_NE(stat(("/dev/shm/evalrun-hostile-" + std::to_string(getpid())).c_str(), &st), 0) << level;
  }
  unlink(("/dev/shm/evalrun-hostile-" + std::to_string(getpid())).c_str());
}

// At the namespace level the host's files are not there at all.
TEST(LcbHostileNamespaces, TheNamespaceLevelShowsNoHostFiles) {
  std::unique_ptr<CodeSandbox> box;
  SandboxProbe probe;
  ASSERT_TRUE(MakeSandbox(LcbSandboxOptions("/usr/bin/python3", false), RealProcessRunner::Default(), &box, &probe).ok());
  if (box->level() != "namespaces") GTEST_SKIP() << "no namespace level on this machine:\n" << probe.Notes();
  const testing::TempDir secret("evalrun-hostile-ns");
  chmod(secret.path().c_str(), 0755);
  const std::string& secret_dir = secret.path();
  SandboxResult r;
  ASSERT_TRUE(box->Run("import os\nfor p in ('/home', '/root', '/run', '/var', '/etc/passwd', '" +
                           evalrun::testing::SourceDir() + "', '" + secret_dir + "'):\n    print(p, os.path.exists(p))\n",
                       "", &r)
                  .ok());
  EXPECT_EQ(r.process.stdout_text.find("True"), std::string::npos) << r.process.stdout_text << r.process.stderr_text;
  EXPECT_NE(r.process.stdout_text.find("/root False"), std::string::npos) << r.process.stdout_text;
}

INSTANTIATE_TEST_SUITE_P(Levels, LcbHostile,
                         ::testing::Values(SandboxLevel::kNamespaces, SandboxLevel::kUnshare, SandboxLevel::kSeccomp,
                                           SandboxLevel::kRlimits),
                         [](const ::testing::TestParamInfo<SandboxLevel>& i) {
                           return std::string(SandboxLevelName(i.param));
                         });

}  // namespace
}  // namespace evalrun
