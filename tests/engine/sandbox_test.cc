// The code sandbox (evals/sandbox/sandbox.h), real, with python3 programs,
// at each level (capped with SandboxOptions::max_level): network, writes
// outside its own folder, a fork bomb, 8 GB, endless output, a setsid
// grandchild, a normal program, a sandbox that does not start; each level
// asserts what it promises (and, where it promises nothing, the documented
// leak). The probe: the refusal without an isolating level and without
// unsafe_exec, the fallback from a bwrap that fails, the notes; the
// interpreter recorded, with nothing imported from the working directory.
// A run's control group and the end of a uid's processes.
#include "evals/sandbox/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "evals/sandbox/box_cgroup.h"
#include "evals/sandbox/box_cleanup.h"
#include "evals/sandbox/landlock_rules.h"
#include "evals/sandbox/sandbox_uids.h"
#include "evals/sandbox/seccomp_filter.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

// A string in every sandboxed python's command line (python -X takes any
// name), so that the test can look for leftovers in the host's /proc.
std::string Marker() { return "evalrun_sandbox_test_" + std::to_string(getpid()); }

// Host processes whose command line holds `needle`.
int ProcessesWith(const std::string& needle) {
  int n = 0;
  DIR* proc = opendir("/proc");
  while (dirent* e = proc ? readdir(proc) : nullptr) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos) ++n;
  }
  if (proc) closedir(proc);
  return n;
}

bool NoneLeft(const std::string& needle) {
  for (int i = 0; i < 300; ++i) {
    if (ProcessesWith(needle) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

SandboxOptions TestOptions() {
  SandboxOptions o;
  o.interpreter_args = {"-X", Marker()};
  o.limits.wall_s = 5;
  o.limits.cpu_s = 5;
  o.limits.processes = 16;
  o.limits.output_bytes = 64 << 10;
  return o;
}

// What each level promises (sandbox.h): the file system held to the
// interpreter's files by namespaces or Landlock ("rlimits" where the kernel
// has Landlock), no socket where the seccomp filter is installed (every
// level where the architecture has one).
bool IsolatesFiles(SandboxLevel l) { return l != SandboxLevel::kRlimits || LandlockAbi() > 0; }
bool RefusesSockets() { return SeccompFilterProgram() != nullptr; }

// Every level, capped to it (rlimits with unsafe_exec). A level this
// machine cannot make is skipped, with the probe's reason asserted first.
class SandboxLevelCase : public ::testing::TestWithParam<SandboxLevel> {
 protected:
  void SetUp() override { Make(TestOptions()); }

  void Make(SandboxOptions o) {
    o.max_level = GetParam();
    o.unsafe_exec = GetParam() == SandboxLevel::kRlimits;
    SandboxProbe probe;
    Status st = MakeSandbox(o, RealProcessRunner::Default(), &box_, &probe);
    notes_ = probe.Notes();
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << notes_;
    ASSERT_FALSE(probe.levels.empty());
    EXPECT_EQ(probe.levels.back().second, "ok") << notes_;
    if (box_->level() != SandboxLevelName(GetParam())) {
      // Stronger levels are listed as above the cap, then this one with
      // why it failed here.
      const auto& mine = probe.levels[static_cast<size_t>(GetParam())];
      ASSERT_NE(mine.second, "ok");
      ASSERT_FALSE(mine.second.empty());
      GTEST_SKIP() << SandboxLevelName(GetParam()) << " cannot be made on this machine: " << mine.second;
    }
  }

  SandboxResult MustRun(const std::string& program, const std::string& stdin_text = "") {
    SandboxResult r;
    Status st = box_->Run(program, stdin_text, &r);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(r.level, SandboxLevelName(GetParam()));
    return r;
  }

  std::unique_ptr<CodeSandbox> box_;
  std::string notes_;
};

INSTANTIATE_TEST_SUITE_P(Levels, SandboxLevelCase,
                         ::testing::Values(SandboxLevel::kNamespaces, SandboxLevel::kUnshare, SandboxLevel::kSeccomp,
                                           SandboxLevel::kRlimits),
                         [](const ::testing::TestParamInfo<SandboxLevel>& i) {
                           return std::string(SandboxLevelName(i.param));
                         });

TEST_P(SandboxLevelCase, NormalProgramReadsStdinAndWritesStdout) {
  SandboxResult r = MustRun("import sys\nnums = list(map(int, sys.stdin.read().split()))\nprint(sum(nums))\n",
                            "1 2 3\n4\n");
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  EXPECT_EQ(r.process.stdout_text, "10\n");
  EXPECT_LT(r.process.wall_s, 5);
  // A runtime error is a result: exit status 1 and the traceback.
  r = MustRun("raise ValueError('boom')\n");
  EXPECT_EQ(r.process.exit.exit_code, 1);
  EXPECT_NE(r.process.stderr_text.find("ValueError: boom"), std::string::npos);
}

TEST_P(SandboxLevelCase, NetworkIsBlockedWhereTheLevelPromisesIt) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  SandboxResult r = MustRun(
      "import errno, socket\n"
      "try:\n"
      "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
      "except OSError as e:\n"
      "    print('no socket', errno.errorcode[e.errno])\n"
      "    raise SystemExit(0)\n"
      "s.settimeout(1)\n"
      "try:\n"
      "    s.connect(('127.0.0.1', " + std::to_string(port) + "))\n"
      "    print('connected')\n"
      "except OSError as e:\n"
      "    print('blocked')\n");
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  const int reached = accept(listener, nullptr, nullptr);
  if (RefusesSockets()) {
    EXPECT_EQ(r.process.stdout_text, "no socket EPERM\n");  // the filter refuses socket() at every level
    EXPECT_LT(reached, 0);
  } else if (GetParam() != SandboxLevel::kRlimits) {
    EXPECT_EQ(r.process.stdout_text, "blocked\n");  // the sandbox's own loopback
    EXPECT_LT(reached, 0);
  } else {
    EXPECT_EQ(r.process.stdout_text, "connected\n");  // rlimits without a filter: as documented
    EXPECT_GE(reached, 0);
  }
  if (reached >= 0) close(reached);
  close(listener);
}

TEST_P(SandboxLevelCase, WritesOutsideItsTmpfsFailWhereTheLevelPromisesIt) {
  // Outside /tmp, which the isolating levels cover with a tmpfs of their own.
  const testing::TempDir dir("evalrun-sandbox", "/var/tmp");
  ASSERT_FALSE(dir.path().empty());
  chmod(dir.path().c_str(), 0777);  // writable by anyone: only the sandbox stops the write
  const std::string target = dir.path() + "/escaped";
  const std::string inside = "/tmp/" + Marker() + "_inside";
  SandboxResult r = MustRun(
      "import errno\n"
      "for path in ('" + target + "', '" + inside + "'):\n"
      "    try:\n"
      "        open(path, 'w').write('x')\n"
      "        print('wrote', path)\n"
      "    except OSError as e:\n"
      "        print('refused', path, errno.errorcode[e.errno])\n");
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  const SandboxLevel l = GetParam();
  if (l == SandboxLevel::kNamespaces || l == SandboxLevel::kUnshare) {
    // The minimal root has no /var at all; /tmp is the run's own tmpfs.
    EXPECT_EQ(r.process.stdout_text, "refused " + target + " ENOENT\nwrote " + inside + "\n");
  } else if (IsolatesFiles(l)) {
    // Landlock: only the run's private folder is writable, not the host's /tmp.
    EXPECT_EQ(r.process.stdout_text, "refused " + target + " EACCES\nrefused " + inside + " EACCES\n");
  } else {
    // rlimits without Landlock: the file system is the sandbox uid's.
    EXPECT_EQ(r.process.stdout_text, "wrote " + target + "\nwrote " + inside + "\n");
  }
  if (IsolatesFiles(l)) {
    EXPECT_NE(access(target.c_str(), F_OK), 0);
    EXPECT_NE(access(inside.c_str(), F_OK), 0);
  }
  unlink(inside.c_str());
}

TEST_P(SandboxLevelCase, ForkBombIsContainedAndKilled) {
  // Every run has a uid of its own (sandbox_uids.h): RLIMIT_NPROC binds
  // this run alone, whatever runs beside it (tests run in parallel).
  SandboxResult r = MustRun(
      "import os, time\n"
      "n = 0\n"
      "while True:\n"
      "    try:\n"
      "        os.fork()\n"
      "        n += 1\n"
      "    except OSError:\n"
      "        time.sleep(0.01)\n");
  EXPECT_TRUE(r.process.timed_out);
  EXPECT_LT(r.process.wall_s, 5 + 3);
  EXPECT_TRUE(NoneLeft(Marker()));
}

// The seccomp level refuses a signal to any other process, even one of its
// own uid (its own child here); its own group (kill(0, ...)) stays allowed.
// SYS_pidfd_open (434) is refused too.
TEST(SandboxSeccompTest, TheSeccompLevelSignalsNoOtherProcess) {
  SandboxOptions o = TestOptions();
  o.max_level = SandboxLevel::kSeccomp;
  std::unique_ptr<CodeSandbox> box;
  SandboxProbe probe;
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box, &probe).ok()) << probe.Notes();
  ASSERT_EQ(box->level(), "seccomp") << probe.Notes();
  SandboxResult r;
  ASSERT_TRUE(box->Run("import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\npid = libc.fork()\n"
                       "if pid == 0:\n    time.sleep(2)\n    os._exit(0)\nother = libc.kill(pid, 0)\n"
                       "err = ctypes.get_errno()\nprint(other, err, libc.kill(0, 0), libc.syscall(434, pid, 0))\n",
                       "", &r)
                  .ok());
  EXPECT_EQ(r.process.stdout_text, "-1 1 0 -1\n") << r.process.stderr_text;
}

TEST_P(SandboxLevelCase, EightGigabytesFailWithMemoryError) {
  SandboxResult r = MustRun("b = bytearray(8 * 1024 ** 3)\nprint('allocated')\n");
  EXPECT_TRUE(r.process.exit.exited);
  EXPECT_EQ(r.process.exit.exit_code, 1);
  EXPECT_NE(r.process.stderr_text.find("MemoryError"), std::string::npos) << r.process.stderr_text;
  EXPECT_EQ(r.process.stdout_text, "");
  EXPECT_LT(r.process.wall_s, 5);
}

TEST_P(SandboxLevelCase, EndlessOutputIsCappedAndKilled) {
  SandboxResult r = MustRun("while True:\n    print('x' * 99)\n");
  EXPECT_TRUE(r.process.output_capped);
  EXPECT_TRUE(r.process.stdout_truncated);
  EXPECT_EQ(r.process.stdout_text.size(), 64u << 10);
  EXPECT_FALSE(r.process.timed_out);
  EXPECT_LT(r.process.wall_s, 5);
  EXPECT_TRUE(NoneLeft(Marker()));
}

// A child that tries setsid(), then outlives the program (its outputs on
// /dev/null). The filter refuses setsid at every level; the run's end
// (its PID namespace, its control group, the kill of its uid) takes the
// child. rlimits, where no filter may be, tries no setsid.
TEST_P(SandboxLevelCase, SetsidGrandchildIsKilledAtTheEnd) {
  const std::string grandchild = Marker() + "_grandchild";
  const bool try_setsid = GetParam() != SandboxLevel::kRlimits;
  std::atomic<bool> seen{false}, done{false};
  std::thread watcher([&] {
    while (!done && !seen) {
      if (ProcessesWith(grandchild) > 0) seen = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  SandboxResult r = MustRun(
      "import errno, os, sys, time\n"
      "if os.fork() == 0:\n"
      "    try:\n" +
      std::string(try_setsid ? "        os.setsid()\n" : "        pass\n") +
      "        print('child ok', flush=True)\n"
      "    except OSError as e:\n"
      "        print('setsid refused', errno.errorcode[e.errno], flush=True)\n"
      "    null = os.open('/dev/null', os.O_RDWR)\n"
      "    for fd in (0, 1, 2): os.dup2(null, fd)\n"
      "    os.execv(sys.executable, [sys.executable, '-X', '" + grandchild + "', '-c', 'import time; time.sleep(300)'])\n"
      "time.sleep(1)\n"
      "print('parent done', flush=True)\n");
  done = true;
  watcher.join();
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  const std::string child_line = try_setsid ? "setsid refused EPERM\n" : "child ok\n";
  EXPECT_EQ(r.process.stdout_text, child_line + "parent done\n");
  EXPECT_TRUE(seen) << "the grandchild never showed in the host's /proc";
  EXPECT_TRUE(NoneLeft(grandchild));
}

// An interpreter that goes away after the probe: the run is an error (the
// sandbox did not start), never a result to grade.
TEST_P(SandboxLevelCase, ASandboxThatDoesNotStartIsAnErrorNotAResult) {
  if (GetParam() == SandboxLevel::kNamespaces) {
    // bwrap reports its child before it execs the program (a program gone
    // is bwrap's exit 1 then, a result); what is an error here is bwrap not
    // making the sandbox: one that ends without reporting a child.
    SandboxOptions o = TestOptions();
    o.bwrap = "/bin/true";
    SandboxProbe probe;
    ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box_, &probe).ok());
    EXPECT_EQ(probe.levels[0].second, "sandbox did not start: /bin/true exit status 0: ");
    EXPECT_NE(box_->level(), "namespaces");
    return;
  }
  // Outside /tmp, which the isolating levels cover with a tmpfs of their own.
  const testing::TempDir dir("evalrun-sandbox-py", "/var/tmp");
  ASSERT_FALSE(dir.path().empty());
  chmod(dir.path().c_str(), 0755);
  const std::string wrapper = dir.path() + "/python3";
  {
    std::ofstream w(wrapper);
    w << "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n";
  }
  chmod(wrapper.c_str(), 0755);
  SandboxOptions o = TestOptions();
  o.interpreter = wrapper;
  Make(o);
  unlink(wrapper.c_str());  // the interpreter goes, its folder too
  rmdir(dir.path().c_str());
  SandboxResult r;
  Status st = box_->Run("print(1)\n", "", &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(wrapper), std::string::npos) << st.ToString();
}

TEST(SandboxProbeTest, RefusesWithoutAnIsolatingLevelUnlessUnsafeExec) {
  SandboxOptions o = TestOptions();
  o.max_level = SandboxLevel::kRlimits;  // as a machine where no isolating level works
  std::unique_ptr<CodeSandbox> box;
  SandboxProbe probe;
  Status st = MakeSandbox(o, RealProcessRunner::Default(), &box, &probe);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_NE(st.message().find("unless unsafe_exec is set"), std::string::npos) << st.message();
  EXPECT_EQ(box, nullptr);
  EXPECT_EQ(probe.Notes(),
            "namespaces: above the cap (rlimits)\nunshare: above the cap (rlimits)\nseccomp: above the cap "
            "(rlimits)\nrlimits: not tried: no isolation, needs unsafe_exec\n");

  o.unsafe_exec = true;
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box, &probe).ok()) << probe.Notes();
  EXPECT_EQ(box->level(), "rlimits");
  EXPECT_EQ(probe.levels.back(), std::make_pair(SandboxLevel::kRlimits, std::string("ok")));
  SandboxResult r;
  ASSERT_TRUE(box->Run("print(input()[::-1])\n", "abc\n", &r).ok());
  EXPECT_EQ(r.level, "rlimits");
  EXPECT_EQ(r.process.stdout_text, "cba\n");
}

TEST(SandboxProbeTest, ABwrapThatFailsFallsToTheNextLevelAndSaysWhy) {
  SandboxOptions o = TestOptions();
  o.bwrap = "/bin/false";  // "starts", reports no sandboxed child
  std::unique_ptr<CodeSandbox> box;
  SandboxProbe probe;
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box, &probe).ok()) << probe.Notes();
  ASSERT_GE(probe.levels.size(), 2u);
  EXPECT_EQ(probe.levels[0],
            std::make_pair(SandboxLevel::kNamespaces, std::string("sandbox did not start: /bin/false exit status 1: ")));
  EXPECT_NE(box->level(), "namespaces");
  EXPECT_NE(box->level(), "rlimits");  // an isolating level, without unsafe_exec
  EXPECT_EQ(probe.levels.back().second, "ok");
  o.bwrap = "";
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box, &probe).ok());
  EXPECT_EQ(probe.levels[0], std::make_pair(SandboxLevel::kNamespaces, std::string("no bwrap given")));
  o.interpreter = "/nonexistent/python3";
  EXPECT_EQ(MakeSandbox(o, RealProcessRunner::Default(), &box).code(), Status::Code::kNotFound);
}

TEST(SandboxProbeTest, LevelNamesReadBack) {
  for (SandboxLevel l : AllSandboxLevels()) {
    SandboxLevel back = SandboxLevel::kRlimits;
    ASSERT_TRUE(ParseSandboxLevel(SandboxLevelName(l), &back));
    EXPECT_EQ(back, l);
  }
  SandboxLevel l;
  EXPECT_FALSE(ParseSandboxLevel("bwrap", &l));
  EXPECT_TRUE(SandboxLevelAtLeast(SandboxLevel::kUnshare, SandboxLevel::kSeccomp));
  EXPECT_FALSE(SandboxLevelIsolates(SandboxLevel::kRlimits));
}

TEST(SandboxProbeTest, InterpreterPathAndVersion) {
  InterpreterInfo info;
  ASSERT_TRUE(DescribeInterpreter("/usr/bin/python3", RealProcessRunner::Default(), &info).ok());
  EXPECT_EQ(info.path, "/usr/bin/python3");
  EXPECT_TRUE(std::regex_match(info.version, std::regex(R"(3\.\d+\.\d+)"))) << info.version;
  EXPECT_EQ(DescribeInterpreter("evalrun-no-such-python", RealProcessRunner::Default(), &info).code(),
            Status::Code::kNotFound);
}

// A platform.py in evalrun's working directory (where an answer at a weak
// level could have left one) is never imported: Python runs with -I.
TEST(SandboxProbeTest, DescribingTheInterpreterImportsNothingFromTheWorkingDirectory) {
  const testing::TempDir dir("evalrun-describe", "/var/tmp");
  ASSERT_FALSE(dir.path().empty());
  const std::string ran = dir.path() + "/ran";
  std::ofstream(dir.path() + "/platform.py") << "open('" << ran << "', 'w').write('x')\n"
                                             << "def python_version():\n    return '0.0.0'\n";
  char old[4096];
  ASSERT_NE(getcwd(old, sizeof old), nullptr);
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  InterpreterInfo info;
  Status st = DescribeInterpreter("/usr/bin/python3", RealProcessRunner::Default(), &info);
  ASSERT_EQ(chdir(old), 0);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(info.version, "0.0.0");
  EXPECT_NE(access(ran.c_str(), F_OK), 0) << "platform.py from the working directory ran";
}

}  // namespace
}  // namespace evalrun
