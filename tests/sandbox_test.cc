// The code sandbox (evals/sandbox/sandbox.h), real, with python3 programs:
// network, writes outside /tmp, a fork bomb, 8 GB, endless output, a setsid
// grandchild, a normal program; the level and the interpreter recorded.
// Where this machine has bwrap and user namespaces the namespace level must
// be taken; where it has not, MakeSandbox must refuse.
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

bool NamespacesExpected() {
  std::ifstream max("/proc/sys/user/max_user_namespaces");
  int n = 0;
  max >> n;
  return n > 0 && access("/usr/bin/bwrap", X_OK) == 0;
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

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status st = MakeSandbox(TestOptions(), RealProcessRunner::Default(), &box_, &notes_);
    if (!NamespacesExpected()) {
      // No namespaces here: the sandbox must refuse, and the cases below
      // cannot run. That refusal is what this machine's run asserts.
      EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
      GTEST_SKIP() << "no bwrap or user namespaces on this machine; MakeSandbox refused: " << st.message();
    }
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << notes_;
    ASSERT_EQ(box_->level(), "namespaces") << notes_;
  }

  SandboxResult MustRun(const std::string& program, const std::string& stdin_text = "") {
    SandboxResult r;
    Status st = box_->Run(program, stdin_text, &r);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(r.level, "namespaces");
    return r;
  }

  std::unique_ptr<CodeSandbox> box_;
  std::string notes_;
};

TEST_F(SandboxTest, NormalProgramReadsStdinAndWritesStdout) {
  EXPECT_EQ(notes_, "namespaces: ok\n");
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

TEST_F(SandboxTest, NoNetworkNotEvenTheHostsLoopback) {
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
      "import socket\n"
      "for host in ('127.0.0.1', '1.1.1.1'):\n"
      "    try:\n"
      "        socket.create_connection((host, " + std::to_string(port) + "), timeout=1)\n"
      "        print('connected', host)\n"
      "    except OSError as e:\n"
      "        print('blocked', host, e.errno)\n");
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  // ECONNREFUSED (111) on the sandbox's own loopback, ENETUNREACH (101) beyond.
  EXPECT_EQ(r.process.stdout_text, "blocked 127.0.0.1 111\nblocked 1.1.1.1 101\n");
  EXPECT_LT(accept(listener, nullptr, nullptr), 0);  // nothing reached the host
  close(listener);
}

TEST_F(SandboxTest, WritesOutsideItsTmpfsFail) {
  char dir[] = "/var/tmp/evalrun-sandbox-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  chmod(dir, 0777);  // writable by anyone: only the sandbox stops the write
  const std::string target = std::string(dir) + "/escaped";
  SandboxResult r = MustRun(
      "import errno\n"
      "for path in ('" + target + "', '/tmp/inside'):\n"
      "    try:\n"
      "        open(path, 'w').write('x')\n"
      "        print('wrote', path)\n"
      "    except OSError as e:\n"
      "        print('refused', path, errno.errorcode[e.errno])\n");
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  EXPECT_EQ(r.process.stdout_text, "refused " + target + " EROFS\nwrote /tmp/inside\n");
  EXPECT_NE(access(target.c_str(), F_OK), 0);
  EXPECT_NE(access("/tmp/inside", F_OK), 0);  // the tmpfs was the sandbox's own
  rmdir(dir);
}

TEST_F(SandboxTest, ForkBombIsContainedAndKilled) {
  // A uid of its own: RLIMIT_NPROC counts the uid's processes machine-wide,
  // and other sandboxes (tests run in parallel) use 65534.
  SandboxOptions o = TestOptions();
  o.uid = o.gid = 60000 + getpid() % 5000;
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box_).ok());
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

TEST_F(SandboxTest, EightGigabytesFailWithMemoryError) {
  SandboxResult r = MustRun("b = bytearray(8 * 1024 ** 3)\nprint('allocated')\n");
  EXPECT_TRUE(r.process.exit.exited);
  EXPECT_EQ(r.process.exit.exit_code, 1);
  EXPECT_NE(r.process.stderr_text.find("MemoryError"), std::string::npos) << r.process.stderr_text;
  EXPECT_EQ(r.process.stdout_text, "");
  EXPECT_LT(r.process.wall_s, 5);
}

TEST_F(SandboxTest, EndlessOutputIsCappedAndKilled) {
  SandboxResult r = MustRun("while True:\n    print('x' * 99)\n");
  EXPECT_TRUE(r.process.output_capped);
  EXPECT_TRUE(r.process.stdout_truncated);
  EXPECT_EQ(r.process.stdout_text.size(), 64u << 10);
  EXPECT_FALSE(r.process.timed_out);
  EXPECT_LT(r.process.wall_s, 5);
}

TEST_F(SandboxTest, SetsidGrandchildIsKilledAtTheEnd) {
  const std::string grandchild = Marker() + "_grandchild";
  std::atomic<bool> seen{false}, done{false};
  std::thread watcher([&] {
    while (!done && !seen) {
      if (ProcessesWith(grandchild) > 0) seen = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  SandboxResult r = MustRun(
      "import subprocess, sys, time\n"
      "p = subprocess.Popen([sys.executable, '-X', '" + grandchild + "', '-c', 'import time; time.sleep(300)'],\n"
      "                     start_new_session=True)\n"
      "print('started', flush=True)\n"
      "time.sleep(1)\n");
  done = true;
  watcher.join();
  EXPECT_TRUE(r.process.ok()) << r.process.stderr_text;
  EXPECT_EQ(r.process.stdout_text, "started\n");
  EXPECT_TRUE(seen) << "the grandchild never showed in the host's /proc";
  EXPECT_TRUE(NoneLeft(grandchild));
}

TEST(SandboxLevelTest, RefusesWithoutIsolationUnlessUnsafeExec) {
  SandboxOptions o = TestOptions();
  o.bwrap = "";
  std::unique_ptr<CodeSandbox> box;
  std::string notes;
  Status st = MakeSandbox(o, RealProcessRunner::Default(), &box, &notes);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_NE(st.message().find("unless unsafe_exec is set"), std::string::npos) << st.message();
  EXPECT_EQ(notes, "namespaces: no bwrap given\n");

  o.unsafe_exec = true;
  ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box, &notes).ok()) << notes;
  EXPECT_EQ(box->level(), "rlimits");
  EXPECT_EQ(notes, "namespaces: no bwrap given\nrlimits: ok\n");
  SandboxResult r;
  ASSERT_TRUE(box->Run("print(input()[::-1])\n", "abc\n", &r).ok());
  EXPECT_EQ(r.level, "rlimits");
  EXPECT_EQ(r.process.stdout_text, "cba\n");
  ASSERT_TRUE(box->Run("b = bytearray(8 * 1024 ** 3)\n", "", &r).ok());
  EXPECT_NE(r.process.stderr_text.find("MemoryError"), std::string::npos);
}

TEST(SandboxLevelTest, ASandboxThatDoesNotStartIsAnError) {
  SandboxOptions o = TestOptions();
  o.bwrap = "/bin/false";  // "starts", reports no sandboxed child
  std::unique_ptr<CodeSandbox> box;
  std::string notes;
  Status st = MakeSandbox(o, RealProcessRunner::Default(), &box, &notes);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_EQ(notes, "namespaces: sandbox did not start: /bin/false exit status 1: \n");
  o.interpreter = "/nonexistent/python3";
  EXPECT_EQ(MakeSandbox(o, RealProcessRunner::Default(), &box).code(), Status::Code::kNotFound);
}

TEST(SandboxLevelTest, InterpreterPathAndVersion) {
  InterpreterInfo info;
  ASSERT_TRUE(DescribeInterpreter("/usr/bin/python3", RealProcessRunner::Default(), &info).ok());
  EXPECT_EQ(info.path, "/usr/bin/python3");
  EXPECT_TRUE(std::regex_match(info.version, std::regex(R"(3\.\d+\.\d+)"))) << info.version;
  EXPECT_EQ(DescribeInterpreter("evalrun-no-such-python", RealProcessRunner::Default(), &info).code(),
            Status::Code::kNotFound);
}

}  // namespace
}  // namespace evalrun
