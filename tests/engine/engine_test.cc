// The managed engine, run against the fake llama-server program
// (tests/fake_llama_server_main.cc): start, health wait, log, stop of the
// whole process group, load failures, timeouts, cancellation.
#include "evals/server/engine.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"
#include "tests/support/fake_engine.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun {
namespace {

using testing::FakeServerBinary;
using testing::FakeServersOnPort;

bool GroupGone(pid_t pgid) { return kill(-pgid, 0) == -1 && errno == ESRCH; }

class ManagedEngineTest : public testing::FakeEngineTest {
 protected:
  ManagedEngineTest() : FakeEngineTest("evalrun-engine") {}

  std::string Log() { return testing::ReadFile(dir_ + "/server.log"); }

  // The engine's deadlines on a fake clock: they pass at once, while each of
  // its sleeps gives the real child a millisecond (to load, to exit).
  ManagedEngineOptions OnFakeClock(ManagedEngineOptions o) {
    clock_.set_sleep_hook([](double) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
    o.clock = &clock_;
    return o;
  }
  testing::FakeClock clock_;
};

TEST_F(ManagedEngineTest, StartsWaitsForHealthAndStopsTheGroup) {
  ManagedEngine engine(Options({"--load-ms", "300"}));
  ASSERT_TRUE(engine.Start(8192, 2, nullptr).ok());
  const pid_t pgid = engine.pid();
  ASSERT_GT(pgid, 0);
  EXPECT_EQ(getpgid(pgid), pgid);  // its own process group
  EXPECT_EQ(getsid(pgid), pgid);   // and session
  EXPECT_EQ(FakeServersOnPort(port_), std::vector<int>{pgid});

  // The placeholders reached the server: -c 8192 -np 2 -> 4096 per slot.
  {
    // (Closed before Stop: the server waits for idle keep-alive connections.)
    auto t = MakeHttpTransport(engine.origin(), "");
    HttpResponse health = t->Get("/health", 5);
    EXPECT_EQ(health.status, 200);
    HttpResponse props = t->Get("/props", 5);
    ASSERT_EQ(props.status, 200);
    auto j = nlohmann::json::parse(props.body);
    EXPECT_EQ(j["default_generation_settings"]["n_ctx"], 4096);
    EXPECT_EQ(j["total_slots"], 2);
  }
  EXPECT_EQ(engine.last_argv(),
            (std::vector<std::string>{FakeServerBinary(), "--port", std::to_string(port_), "-c", "8192", "-np", "2",
                                      "--load-ms", "300"}));

  ASSERT_TRUE(engine.Stop().ok());
  EXPECT_EQ(engine.pid(), -1);
  EXPECT_TRUE(GroupGone(pgid));
  EXPECT_FALSE(MakeHttpTransport(engine.origin(), "")->Get("/health", 2).transport_ok());

  const std::string log = Log();
  EXPECT_NE(log.find("starting engine (context 8192, slots 2): " + FakeServerBinary() + " --port " +
                     std::to_string(port_) + " -c 8192 -np 2 --load-ms 300"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("main: HTTP server is listening, hostname: 127.0.0.1, port: " + std::to_string(port_)),
            std::string::npos);
  EXPECT_NE(log.find("main: model loaded"), std::string::npos);
  EXPECT_NE(log.find("ready at http://127.0.0.1:" + std::to_string(port_)), std::string::npos);
  EXPECT_NE(log.find("cleaning up before exit"), std::string::npos);
  EXPECT_NE(log.find("stopped (SIGTERM; exit status 0)"), std::string::npos) << log;
  // The child does not inherit a blocked SIGTERM (see the next test).
  EXPECT_NE(log.find("main: inherited signals: SIGINT unblocked, SIGTERM unblocked\n"), std::string::npos);

  // Stop again is a no-op; the log is appended to by a second start.
  EXPECT_TRUE(engine.Stop().ok());
  ASSERT_TRUE(engine.Start(4096, 1, nullptr).ok());
  ASSERT_TRUE(engine.Stop().ok());
  const std::string log2 = Log();
  EXPECT_EQ(log2.substr(0, log.size()), log);
  EXPECT_NE(log2.find("starting engine (context 4096, slots 1)"), std::string::npos);
}

TEST_F(ManagedEngineTest, ChildStartsWithSignalsUnblockedWhenTheParentBlocksThem) {
  // evalrun's cli.cc blocks SIGINT/SIGTERM in every thread; the engine
  // must still die of SIGTERM.
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
  struct sigaction ign{}, old_term{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGTERM, &ign, &old_term);
  ManagedEngine engine(Options());
  Status st = engine.Start(4096, 1, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(engine.Stop().ok());
  const std::string log = Log();
  EXPECT_NE(log.find("main: inherited signals: SIGINT unblocked, SIGTERM unblocked\n"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped (SIGTERM; exit status 0)"), std::string::npos) << log;
}

TEST_F(ManagedEngineTest, TheEngineInheritsNoDescriptorBeyondTheLog) {
  const std::string marker = dir_ + "/not-for-the-engine";
  int fd = open(marker.c_str(), O_WRONLY | O_CREAT, 0644);  // no O_CLOEXEC
  ASSERT_GE(fd, 3);
  ManagedEngine engine(Options());
  Status st = engine.Start(4096, 1, nullptr);
  close(fd);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<std::string> targets;
  const std::string fd_dir = "/proc/" + std::to_string(engine.pid()) + "/fd";
  DIR* d = opendir(fd_dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    char buf[4096];
    ssize_t n = readlink((fd_dir + "/" + e->d_name).c_str(), buf, sizeof buf - 1);
    if (n > 0) targets.emplace_back(buf, static_cast<size_t>(n));
  }
  closedir(d);
  ASSERT_TRUE(engine.Stop().ok());
  int logs = 0;
  for (const auto& t : targets) {
    EXPECT_NE(t, marker);
    if (t == dir_ + "/server.log") ++logs;
  }
  EXPECT_EQ(logs, 2);  // stdout and stderr
}

TEST_F(ManagedEngineTest, DestructorStopsTheEngine) {
  pid_t pgid = -1;
  {
    ManagedEngine engine(Options());
    ASSERT_TRUE(engine.Start(4096, 1, nullptr).ok());
    pgid = engine.pid();
    ASSERT_GT(pgid, 0);
    ASSERT_FALSE(GroupGone(pgid));
  }
  EXPECT_TRUE(GroupGone(pgid));
  EXPECT_NE(Log().find("stopped (SIGTERM; exit status 0)"), std::string::npos);
}

TEST_F(ManagedEngineTest, ExitDuringLoadIsALoadFailureWithTheLogTail) {
  ManagedEngine engine(Options({"--load-ms", "200", "--fail-load-above", "16384"}));
  Status st = engine.Start(32768, 1, nullptr);
  ASSERT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("engine exited while loading (exit status 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("last lines of " + dir_ + "/server.log:\n"), std::string::npos);
  EXPECT_NE(st.message().find("alloc_tensor_range: failed to allocate CUDA0 buffer of size 4294967296"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("main: exiting due to model loading error"), std::string::npos);
  EXPECT_EQ(engine.pid(), -1);
  EXPECT_NE(Log().find("stopped (exited on its own; exit status 1)"), std::string::npos) << Log();

  // The same engine starts fine below the limit.
  ASSERT_TRUE(engine.Start(16384, 1, nullptr).ok());
  EXPECT_TRUE(engine.Stop().ok());
}

TEST_F(ManagedEngineTest, SigkillAfterTheGraceWhenSigtermIsIgnored) {
  ManagedEngineOptions o = OnFakeClock(Options({"--ignore-sigterm"}));
  o.stop_grace_s = 3;
  ManagedEngine engine(o);
  ASSERT_TRUE(engine.Start(4096, 1, nullptr).ok());
  const pid_t pgid = engine.pid();
  const double before = clock_.MonotonicSeconds();
  ASSERT_TRUE(engine.Stop().ok());
  EXPECT_TRUE(GroupGone(pgid));
  EXPECT_GE(clock_.MonotonicSeconds() - before, 3);  // the whole grace, then SIGKILL
  EXPECT_LT(clock_.MonotonicSeconds() - before, 3 + 10);
  const std::string log = Log();
  EXPECT_NE(log.find("main: inherited signals: SIGINT unblocked, SIGTERM unblocked\n"), std::string::npos);
  EXPECT_NE(log.find("stopped (SIGKILL after 3 s (server.stop_grace_s); killed by signal 9"), std::string::npos)
      << log;
  // The log's times are the engine's clock's.
  EXPECT_NE(log.find("=== evalrun 2025-11-30T04:10:"), std::string::npos) << log;
}

TEST_F(ManagedEngineTest, NotReadyInTimeIsATimeoutAndNothingIsLeft) {
  ManagedEngineOptions o = OnFakeClock(Options({"--load-ms", "60000"}));
  o.ready_timeout_s = 20;
  ManagedEngine engine(o);
  Status st = engine.Start(4096, 1, nullptr);
  ASSERT_EQ(st.code(), Status::Code::kTimeout) << st.ToString();
  EXPECT_GT(clock_.MonotonicSeconds(), 20);
  // (last: HTTP 503, or a refused connection while the child starts)
  EXPECT_NE(st.message().find("not ready after 20 s (server.ready_timeout_s); last: "), std::string::npos)
      << st.message();
  // Polled every 0.05 s at first, each wait half as long again, up to 0.5 s.
  const std::vector<double> sleeps = clock_.sleeps();
  ASSERT_GE(sleeps.size(), 8u);
  EXPECT_DOUBLE_EQ(sleeps[0], 0.05);
  EXPECT_DOUBLE_EQ(sleeps[1], 0.075);
  EXPECT_DOUBLE_EQ(sleeps[7], 0.5);
  EXPECT_EQ(engine.pid(), -1);
  EXPECT_NE(Log().find("stopped (SIGTERM; exit status 0)"), std::string::npos) << Log();
}

TEST_F(ManagedEngineTest, CancelDuringLoadStopsTheEngine) {
  CancelToken cancel;
  ManagedEngine engine(Options({"--load-ms", "60000"}));
  std::thread canceller([&] {
    // Cancel once the engine answers (loading).
    for (int i = 0; i < 2000; ++i) {
      if (MakeHttpTransport(engine.origin(), "")->Get("/health", 1).status == 503) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    cancel.Cancel();
  });
  Status st = engine.Start(4096, 1, &cancel);
  canceller.join();
  ASSERT_EQ(st.code(), Status::Code::kCancelled) << st.ToString();
  EXPECT_EQ(engine.pid(), -1);
  EXPECT_NE(Log().find("stopped (SIGTERM; exit status 0)"), std::string::npos) << Log();
}

TEST_F(ManagedEngineTest, RefusesWhenSomethingAlreadyAnswersOnThePort) {
  testing::FakeServerOptions fo;
  fo.port = port_;
  testing::FakeServer other(fo);
  ASSERT_TRUE(other.Start());
  ManagedEngine engine(Options());
  Status st = engine.Start(4096, 1, nullptr);
  ASSERT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_NE(st.message().find("something already answers at http://127.0.0.1:" + std::to_string(port_) +
                              " (GET /health: HTTP 200)"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(engine.pid(), -1);
  EXPECT_EQ(testing::ReadFile(dir_ + "/server.log"), "");  // nothing was started
}

TEST_F(ManagedEngineTest, MissingProgramIsNotFound) {
  ManagedEngineOptions o = Options();
  o.command = {dir_ + "/no-such-server", "--port", "{port}"};
  ManagedEngine a(o);
  Status st = a.Start(4096, 1, nullptr);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "server.command[0]: " + dir_ + "/no-such-server is not an executable file");
  o.command = {"evalrun-no-such-server-on-path"};
  ManagedEngine b(o);
  st = b.Start(4096, 1, nullptr);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("evalrun-no-such-server-on-path not found on PATH"), std::string::npos);
  o.command = {};
  ManagedEngine c(o);
  EXPECT_EQ(c.Start(4096, 1, nullptr).code(), Status::Code::kInvalidInput);
}

TEST_F(ManagedEngineTest, TerminateManagedEnginesSignalsEveryRunningGroup) {
  ManagedEngine engine(Options());
  ASSERT_TRUE(engine.Start(4096, 1, nullptr).ok());
  const pid_t pgid = engine.pid();
  TerminateManagedEngines(SIGKILL);
  // Wait (bounded) until the child has fully exited, without reaping it:
  // its command line vanishes from /proc before the exit is complete, and
  // in that window Stop() would still see it running and send SIGTERM.
  bool exited = false;
  for (int i = 0; i < 500 && !exited; ++i) {
    siginfo_t info{};
    exited = waitid(P_PID, static_cast<id_t>(pgid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pgid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(exited) << "the engine did not exit within 5 s of SIGKILL";
  ASSERT_TRUE(engine.Stop().ok());
  EXPECT_TRUE(GroupGone(pgid));
  EXPECT_NE(Log().find("stopped (exited on its own; killed by signal 9"), std::string::npos) << Log();
}

// The child asks for SIGTERM when the thread that started it dies: an
// evalrun killed with SIGKILL does not leave its engine running.
TEST_F(ManagedEngineTest, EngineDiesWithItsParent) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ManagedEngineOptions o = Options();
  pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    close(fds[0]);
    ManagedEngine engine(o);
    pid_t pid = engine.Start(4096, 1, nullptr).ok() ? engine.pid() : -1;
    (void)!write(fds[1], &pid, sizeof pid);
    _exit(0);  // no destructor: as if killed
  }
  close(fds[1]);
  pid_t engine_pid = -1;
  ASSERT_EQ(read(fds[0], &engine_pid, sizeof engine_pid), static_cast<ssize_t>(sizeof engine_pid));
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(helper, &wstatus, 0), helper);
  ASSERT_GT(engine_pid, 0);
  for (int i = 0; i < 500 && !FakeServersOnPort(port_).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(FakeServersOnPort(port_).empty());
  EXPECT_NE(Log().find("cleaning up before exit"), std::string::npos) << Log();  // it got SIGTERM
}

TEST(EngineTest, ExpandCommandReplacesTheThreePlaceholdersOnly) {
  std::vector<std::string> argv;
  ASSERT_TRUE(ExpandCommand({"llama-server", "--port={port}", "-c", "{context}", "-np", "{slots}", "{model}",
                             "{\"enable_thinking\":false}", "{port}{port}"},
                            8080, 131072, 4, &argv)
                  .ok());
  EXPECT_EQ(argv, (std::vector<std::string>{"llama-server", "--port=8080", "-c", "131072", "-np", "4", "{model}",
                                            "{\"enable_thinking\":false}", "80808080"}));
  EXPECT_EQ(ExpandCommand({}, 1, 1, 1, &argv).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(ExpandCommand({""}, 1, 1, 1, &argv).code(), Status::Code::kInvalidInput);
}

TEST(EngineTest, OriginPort) {
  int port = 0;
  ASSERT_TRUE(OriginPort("http://127.0.0.1:8080", &port).ok());
  EXPECT_EQ(port, 8080);
  ASSERT_TRUE(OriginPort("http://localhost", &port).ok());
  EXPECT_EQ(port, 80);
  ASSERT_TRUE(OriginPort("https://example.org", &port).ok());
  EXPECT_EQ(port, 443);
  ASSERT_TRUE(OriginPort("http://[::1]:9000", &port).ok());
  EXPECT_EQ(port, 9000);
  ASSERT_TRUE(OriginPort("http://[::1]", &port).ok());
  EXPECT_EQ(port, 80);
  EXPECT_EQ(OriginPort("http://host:80x", &port).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(OriginPort("http://host:70000", &port).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(OriginPort("host:80", &port).code(), Status::Code::kInvalidInput);
}

TEST(EngineTest, TailOfFile) {
  std::string dir = testing::MakeTempDir("evalrun-tail");
  testing::WriteFile(dir + "/a", "one\ntwo\nthree\nfour\n\n");
  EXPECT_EQ(TailOfFile(dir + "/a", 2), "three\nfour");
  EXPECT_EQ(TailOfFile(dir + "/a", 1), "four");
  EXPECT_EQ(TailOfFile(dir + "/a", 10), "one\ntwo\nthree\nfour");
  testing::WriteFile(dir + "/b", "single");
  EXPECT_EQ(TailOfFile(dir + "/b", 3), "single");
  EXPECT_EQ(TailOfFile(dir + "/missing", 3), "");
  testing::RemoveTree(dir);
}

TEST(EngineTest, MakeEngineIsManagedOnlyWithACommand) {
  ServerConfig s;
  s.base_url = "http://127.0.0.1:8123/v1";
  auto external = MakeEngine(s, "/tmp/unused.log", "");
  EXPECT_FALSE(external->managed());
  EXPECT_EQ(external->origin(), "http://127.0.0.1:8123");
  EXPECT_EQ(external->pid(), -1);
  EXPECT_TRUE(external->Start(4096, 1, nullptr).ok());
  EXPECT_TRUE(external->Stop().ok());
  s.command = {"llama-server", "--port", "{port}"};
  auto managed = MakeEngine(s, "/tmp/x/server.log", "");
  EXPECT_TRUE(managed->managed());
  EXPECT_EQ(managed->origin(), "http://127.0.0.1:8123");
  EXPECT_EQ(managed->log_path(), "/tmp/x/server.log");
  EXPECT_EQ(managed->pid(), -1);
}

}  // namespace
}  // namespace evalrun
