// What holds a sandboxed run beyond its namespaces (evals/sandbox/
// box_cgroup.h, box_cleanup.h): a control group that the run's first process
// joins before it gives up root, whose kill ends a daemon that left the
// session; the end of every process of a uid, setsid or not; the probe's
// account of what the level holds. Where evalrun cannot make a control group
// or change uids (not root), those tests say so and skip.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evals/proc/process_runner.h"
#include "evals/sandbox/box_cgroup.h"
#include "evals/sandbox/box_cleanup.h"
#include "evals/sandbox/sandbox.h"
#include "evals/sandbox/sandbox_uids.h"

namespace evalrun {
namespace {

std::string Mark() { return "evalrun_box_test_" + std::to_string(getpid()); }

// Processes whose command line holds `needle`, now.
int ProcessesWith(const std::string& needle) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::ifstream in(e.path() / "cmdline");
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos) ++n;
  }
  return n;
}

// A shell that leaves a setsid'd sleeper (`tag` in its command line) and
// exits once the sleeper has left its session (at most 5 s): the runner's
// kill of the group misses it.
ProcessSpec DaemonSpec(const std::string& tag) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "setsid sh -c 'sleep 300; :' " + tag + " </dev/null >/dev/null 2>&1 & child=$!\n"
               "for i in $(seq 50); do [ \"$(cut -d' ' -f6 /proc/$child/stat)\" = \"$child\" ] && exit 0; sleep 0.1; done\n"
               "exit 1"};
  spec.limits.wall_s = 10;
  return spec;
}

TEST(BoxCgroupTest, ItsKillEndsADaemonThatLeftTheSession) {
  std::unique_ptr<BoxCgroup> cg;
  Status st = BoxCgroup::Make("evalrun-box-test-" + std::to_string(getpid()), BoxCgroupLimits(), &cg);
  if (!st.ok()) GTEST_SKIP() << "no control group here: " << st.ToString();
  EXPECT_FALSE(cg->Describe().empty());
  const std::string tag = Mark() + "_cgroup";
  ProcessSpec spec = DaemonSpec(tag);
  spec.pre_user_hook = JoinBoxCgroup;
  spec.pre_user_hook_arg = &cg->join();
  ProcessResult r;
  ASSERT_TRUE(RealProcessRunner::Default()->Run(spec, &r).ok());
  ASSERT_TRUE(r.ok()) << r.stderr_text;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(ProcessesWith(tag), 1) << "the daemon did not start";
  EXPECT_TRUE(cg->KillAll());
  for (int i = 0; i < 200 && ProcessesWith(tag) > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ProcessesWith(tag), 0);
}

TEST(BoxCleanupTest, EveryProcessOfAUidEndsSetsidOrNot) {
  if (geteuid() != 0) GTEST_SKIP() << "only root runs code as a uid of its own";
  std::unique_ptr<SandboxUidLease> lease;
  ASSERT_TRUE(LeaseSandboxUid(&lease).ok());
  const std::string tag = Mark() + "_uid";
  ProcessSpec spec = DaemonSpec(tag);
  spec.run_as_uid = spec.run_as_gid = lease->uid();
  ProcessResult r;
  ASSERT_TRUE(RealProcessRunner::Default()->Run(spec, &r).ok());
  ASSERT_TRUE(r.ok()) << r.stderr_text;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(ProcessesWith(tag), 1) << "the daemon did not start";
  EXPECT_TRUE(KillProcessesOfUid(lease->uid()));
  for (int i = 0; i < 200 && ProcessesWith(tag) > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Orphans of a child subreaper (an earlier sandbox made this process one)
  // are its to reap: no zombie of the uid stays.
  ReapZombieChildrenOfUid(lease->uid());
  EXPECT_EQ(ProcessesWith(tag), 0);
  EXPECT_FALSE(KillProcessesOfUid(0)) << "root is never a sandbox uid";
}

// System V objects of the uid, keyless or not, that outlived their maker.
int SysvObjectsOf(int uid) {
  int n = 0;
  for (const SysvObject& o : ListSysvObjects()) n += o.uid == uid;
  return n;
}

TEST(BoxCleanupTest, EverySystemVObjectOfAUidIsRemoved) {
  if (geteuid() != 0) GTEST_SKIP() << "only root runs code as a uid of its own";
  std::unique_ptr<SandboxUidLease> lease;
  ASSERT_TRUE(LeaseSandboxUid(&lease).ok());
  ProcessSpec spec;
  spec.argv = {"/usr/bin/python3", "-I", "-c",
               "import ctypes\nlibc = ctypes.CDLL(None)\n"
               "for key in (0, 0x45fffff0):\n    assert libc.shmget(key, 1 << 20, 0o1666) >= 0\n"
               "assert libc.semget(0, 2, 0o1666) >= 0 and libc.msgget(0, 0o1666) >= 0\n"};
  spec.run_as_uid = spec.run_as_gid = lease->uid();
  spec.limits.wall_s = 10;
  ProcessResult r;
  ASSERT_TRUE(RealProcessRunner::Default()->Run(spec, &r).ok());
  ASSERT_TRUE(r.ok()) << r.stderr_text;
  ASSERT_EQ(SysvObjectsOf(lease->uid()), 4);
  RemoveSysvIpcOfUid(lease->uid());
  EXPECT_EQ(SysvObjectsOf(lease->uid()), 0);
}

// The probe says what the level taken holds, for run.json and the notes.
TEST(BoxCleanupTest, TheProbeSaysWhatTheLevelHolds) {
  SandboxOptions o;
  o.unsafe_exec = true;
  std::unique_ptr<CodeSandbox> box;
  SandboxProbe probe;
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box, &probe).ok()) << probe.Notes();
  EXPECT_NE(probe.containment, "");
  EXPECT_NE(probe.Notes().find("holds: " + probe.containment), std::string::npos) << probe.Notes();
  if (geteuid() == 0) {
    EXPECT_NE(probe.containment.find("a uid of its own per run"), std::string::npos);
  }
}

}  // namespace
}  // namespace evalrun
