// The process runner (evals/proc/process_runner.h), the real one, with
// /bin/sh programs: exit codes, signals, a timeout that takes the whole
// group (grandchild included), output caps, the CPU limit, stdin, rlimits,
// the long-lived mode.
#include "evals/proc/process_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

ProcessSpec Sh(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.limits.wall_s = 20;
  return spec;
}

ProcessResult MustRun(const ProcessSpec& spec) {
  ProcessResult r;
  Status st = RealProcessRunner::Default()->Run(spec, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

// True once no process has this pid any more, or only its zombie (dead,
// waiting for its new parent to reap it), waiting up to 5 s.
bool PidGone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && line.compare(paren, 3, ") Z") == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(ProcessRunnerTest, ExitCodeAndBothOutputs) {
  ProcessResult r = MustRun(Sh("echo out; echo err >&2; exit 3"));
  EXPECT_TRUE(r.exit.exited);
  EXPECT_EQ(r.exit.exit_code, 3);
  EXPECT_EQ(r.exit.signal, 0);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.stdout_text, "out\n");
  EXPECT_EQ(r.stderr_text, "err\n");
  EXPECT_EQ(r.Describe(20), "exit status 3");
  EXPECT_GT(r.wall_s, 0);
  EXPECT_LT(r.wall_s, 10);
  EXPECT_TRUE(MustRun(Sh("exit 0")).ok());
}

TEST(ProcessRunnerTest, ArgumentsReachTheProgramAsGiven) {
  ProcessSpec spec;
  spec.argv = {"echo", "a b", "c"};  // looked up on PATH, no shell
  EXPECT_EQ(MustRun(spec).stdout_text, "a b c\n");
  spec.program = "/bin/sh";  // argv[0] is then only a name
  spec.argv = {"as-named", "-c", "echo $0"};
  EXPECT_EQ(MustRun(spec).stdout_text, "as-named\n");
}

TEST(ProcessRunnerTest, DeathBySignal) {
  ProcessResult r = MustRun(Sh("kill -TERM $$; sleep 5"));
  EXPECT_FALSE(r.exit.exited);
  EXPECT_EQ(r.exit.signal, SIGTERM);
  EXPECT_EQ(r.Describe(20), "killed by signal 15 (SIGTERM)");
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.cpu_limited);
}

TEST(ProcessRunnerTest, TimeoutKillsTheWholeGroupGrandchildIncluded) {
  ProcessSpec spec = Sh("sleep 30 & echo $!; sleep 30");
  spec.limits.wall_s = 0.5;
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit.signal, SIGKILL);
  EXPECT_EQ(r.Describe(0.5), "timed out after 0.5 s (killed)");
  EXPECT_GE(r.wall_s, 0.5);
  EXPECT_LT(r.wall_s, 5);
  const pid_t grandchild = std::atoi(r.stdout_text.c_str());
  ASSERT_GT(grandchild, 0) << r.stdout_text;
  EXPECT_TRUE(PidGone(grandchild));
}

TEST(ProcessRunnerTest, WhatTheLeaderLeavesInItsGroupIsKilledAtTheEnd) {
  // The background sleep holds stdout open: without the kill at the end,
  // Run would wait for it.
  ProcessResult r = MustRun(Sh("sleep 30 & echo $!"));
  EXPECT_TRUE(r.ok());
  EXPECT_LT(r.wall_s, 5);
  const pid_t grandchild = std::atoi(r.stdout_text.c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(PidGone(grandchild));
}

TEST(ProcessRunnerTest, OutputOverItsCapIsDiscardedAndFlagged) {
  ProcessSpec spec = Sh("head -c 300000 /dev/zero; echo done >&2");
  spec.stdout_cap = 1000;
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.ok());  // read to the end, the excess thrown away
  EXPECT_EQ(r.stdout_text, std::string(1000, '\0'));
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stderr_text, "done\n");
  EXPECT_FALSE(r.stderr_truncated);

  ProcessSpec endless = Sh("yes");
  endless.stdout_cap = 4096;
  endless.kill_on_output_cap = true;
  r = MustRun(endless);
  EXPECT_TRUE(r.output_capped);
  EXPECT_TRUE(r.stdout_truncated);
  EXPECT_EQ(r.stdout_text.size(), 4096u);
  EXPECT_EQ(r.stdout_text.substr(0, 4), "y\ny\n");
  EXPECT_EQ(r.exit.signal, SIGKILL);
  EXPECT_EQ(r.Describe(20), "output over its cap (killed)");
  EXPECT_LT(r.wall_s, 5);
}

TEST(ProcessRunnerTest, CpuTimeLimit) {
  ProcessSpec spec = Sh("while :; do :; done");
  spec.limits.cpu_s = 1;
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.cpu_limited);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit.signal, SIGXCPU);
  // The kernel holds RLIMIT_CPU against tick-sampled user+system time, while
  // wait4 reports the scheduler's exact run time: on a loaded machine whole
  // ticks are charged for part-ticks, so the limit can fire at 0.85 s of exact
  // time. The bounds say the limit was neither skipped nor hit at once.
  EXPECT_GE(r.cpu_s, 0.5);
  EXPECT_LT(r.cpu_s, 3);
  EXPECT_EQ(r.Describe(20), "CPU time limit (killed by signal 24 (SIGXCPU))");
}

TEST(ProcessRunnerTest, StdinIsFedWhileTheOutputIsRead) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + "\n";  // over a pipe's buffer
  ProcessSpec spec;
  spec.argv = {"cat"};
  spec.stdin_text = text;
  spec.stdout_cap = 1 << 22;
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.stdout_text, text);

  // A program that never reads its stdin: no SIGPIPE reaches evalrun.
  ProcessSpec deaf = Sh("exit 0");
  deaf.stdin_text = text;
  EXPECT_TRUE(MustRun(deaf).ok());
  // Without stdin text, stdin is /dev/null.
  EXPECT_EQ(MustRun(Sh("wc -c")).stdout_text, "0\n");
}

TEST(ProcessRunnerTest, RlimitsReachTheChild) {
  ProcessSpec spec = Sh("ulimit -c; ulimit -v; ulimit -n; ulimit -p; ulimit -f");
  spec.limits.address_space_bytes = 512ull << 20;
  spec.limits.open_files = 32;
  spec.limits.processes = 77;
  spec.limits.file_bytes = 1 << 20;
  ProcessResult r = MustRun(spec);
  EXPECT_TRUE(r.ok()) << r.stderr_text;
  // dash: -v in KiB, -p processes, -f in 512-byte blocks.
  EXPECT_EQ(r.stdout_text, "0\n524288\n32\n77\n2048\n");
}

TEST(ProcessRunnerTest, EnvironmentDirectoryDescriptorsAndFd3) {
  ProcessSpec spec = Sh("echo \"$ONLY\" \"${HOME:-unset}\"; pwd; ls /proc/self/fd; cat <&3");
  spec.env = std::vector<std::string>{"ONLY=1", "PATH=/usr/bin:/bin"};
  spec.cwd = "/tmp";
  int leak = open("/dev/null", O_RDONLY);  // no O_CLOEXEC: must not reach the child anyway
  ASSERT_GE(leak, 0);
  int memfd = memfd_create("fd3", MFD_CLOEXEC);
  ASSERT_GE(memfd, 0);
  ASSERT_EQ(write(memfd, "from fd 3\n", 10), 10);
  ASSERT_EQ(lseek(memfd, 0, SEEK_SET), 0);
  spec.pass_fds = {memfd};
  ProcessResult r = MustRun(spec);
  close(leak);
  close(memfd);
  EXPECT_TRUE(r.ok()) << r.stderr_text;
  // ls sees 0, 1, 2, 3 and its own directory handle.
  std::istringstream lines(r.stdout_text);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "1 unset");
  std::getline(lines, line);
  EXPECT_EQ(line, "/tmp");
  std::vector<int> fds;
  while (std::getline(lines, line) && line != "from fd 3") fds.push_back(std::atoi(line.c_str()));
  EXPECT_EQ(line, "from fd 3");
  ASSERT_EQ(fds.size(), 5u) << r.stdout_text;
  EXPECT_EQ(fds[3], 3);
}

TEST(ProcessRunnerTest, ProgramsThatCannotRunAreNotFound) {
  ProcessSpec spec;
  spec.argv = {"evalrun-test-no-such-program"};
  ProcessResult r;
  Status st = RealProcessRunner::Default()->Run(spec, &r);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "evalrun-test-no-such-program: cannot run it: No such file or directory (looked on PATH)");
  spec.argv = {"/nonexistent/dir/prog"};
  st = RealProcessRunner::Default()->Run(spec, &r);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "/nonexistent/dir/prog: cannot run it: No such file or directory");
  spec.argv = {};
  EXPECT_EQ(RealProcessRunner::Default()->Run(spec, &r).code(), Status::Code::kInvalidInput);
}

TEST(ProcessRunnerTest, StartReturnsAHandleToALongLivedGroup) {
  const testing::TempDir dir("evalrun-proc");
  ASSERT_FALSE(dir.path().empty());
  ProcessSpec spec = Sh("echo started; sleep 30 & sleep 30");
  spec.stdout_to = OutputTo::kAppendToFile;
  spec.stderr_to = OutputTo::kAppendToFile;
  spec.output_path = dir.path() + "/log";
  std::unique_ptr<ProcessHandle> h;
  ASSERT_TRUE(RealProcessRunner::Default()->Start(spec, &h).ok());
  const pid_t pid = h->pid();
  EXPECT_EQ(getpgid(pid), pid);
  EXPECT_EQ(getsid(pid), pid);
  std::string first;
  for (int i = 0; i < 500 && first.empty(); ++i) {
    std::ifstream log(spec.output_path);
    std::getline(log, first);
    if (first.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(first, "started");
  ProcessExit e;
  EXPECT_FALSE(h->Reap(false, &e));
  EXPECT_TRUE(h->GroupAlive());
  EXPECT_TRUE(h->SignalGroup(SIGTERM));
  ASSERT_TRUE(h->Reap(true, &e));
  EXPECT_EQ(e.signal, SIGTERM);
  for (int i = 0; i < 500 && h->GroupAlive(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(h->GroupAlive());  // the background sleep got SIGTERM too

  // Dropping a handle kills its group.
  ProcessSpec quiet = Sh("sleep 30");
  quiet.stdout_to = quiet.stderr_to = OutputTo::kDiscard;
  ASSERT_TRUE(RealProcessRunner::Default()->Start(quiet, &h).ok());
  const pid_t second = h->pid();
  h.reset();
  EXPECT_TRUE(PidGone(second));

  ProcessSpec captured = Sh("true");
  EXPECT_EQ(RealProcessRunner::Default()->Start(captured, &h).code(), Status::Code::kInvalidInput);
}

// The parent-death signal reaches a child whose uid the runner changed (the
// kernel clears it at a uid change, so the runner sets it after): the child
// started by a thread dies when that thread ends. Without root there is no
// uid change, and the same holds.
TEST(ProcessRunnerTest, ParentDeathSignalSurvivesTheUidChange) {
  ProcessSpec spec = Sh("sleep 30");
  spec.stdout_to = spec.stderr_to = OutputTo::kDiscard;
  spec.parent_death_signal = SIGKILL;
  if (geteuid() == 0) spec.run_as_uid = spec.run_as_gid = 65534;
  std::unique_ptr<ProcessHandle> h;
  std::thread starter([&] { ASSERT_TRUE(RealProcessRunner::Default()->Start(spec, &h).ok()); });
  starter.join();
  ASSERT_NE(h, nullptr);
  ProcessExit e;
  bool reaped = false;
  for (int i = 0; i < 500 && !reaped; ++i) {
    reaped = h->Reap(false, &e);
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(reaped) << "the child outlived the thread that started it";
  EXPECT_EQ(e.signal, SIGKILL);
}

}  // namespace
}  // namespace evalrun
