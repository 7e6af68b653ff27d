// End to end: a job folder belongs to one evalrun at a time (a second run of
// the job is refused naming the PID that holds it), default job names never
// collide, and a start that fails leaves no empty folder behind.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "tests/support/e2e.h"
#include "tests/support/wait_for.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

// Every regular file under `root` (relative path -> bytes).
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = ReadFile(e.path().string());
  return files;
}

std::vector<std::string> Folders(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The default job name evalrun gives card "e2e" at `t`.
std::string DefaultName(std::time_t t) {
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string("e2e-") + buf;
}

class E2eJobFolder : public E2eTest {
 protected:
  std::string Runs() const { return dir_ + "/runs"; }
};

// Exit 2 (no server) and exit 1 (no data) with the default job name, with
// --job, and into an --out that already exists: no folder is left; an
// existing job is left byte for byte.
TEST_F(E2eJobFolder, AFailedStartLeavesNoFolderBehind) {
  // Port 1: nothing listens, connecting is refused at once.
  const std::string nobody = dir_ + "/nobody.json";
  fs::rename(WriteCard("http://127.0.0.1:1/v1", "2", R"({"mmlupro": {"questions": 3}})"), nobody);
  BinaryResult r = Run({"--card", nobody});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(Runs())) << "left: " << ::testing::PrintToString(Folders(Runs()));
  r = Run({"--card", nobody, "--job", "named"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(Runs()));

  const std::string empty = dir_ + "/no-data";
  fs::create_directories(empty);
  r = Run({"--card", nobody, "--data-dir", empty});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(fs::exists(Runs()));

  FakeServer server;
  ASSERT_TRUE(server.Start());
  const std::string good = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 3, "max_tokens": 64}})");
  ASSERT_EQ(Run({"--card", good, "--job", "done"}).exit_code, 0);
  const auto done = Snapshot(Runs() + "/done");
  ASSERT_TRUE(done.count("mmlupro/samples.jsonl"));
  r = Run({"--card", nobody});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Run({"--card", nobody, "--data-dir", empty, "--job", "other"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(Folders(Runs()), std::vector<std::string>{"done"});
  // The job with answers: refused (no server), never removed or changed.
  r = Run({"--card", nobody, "--job", "done", "--force-resume"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(Snapshot(Runs() + "/done"), done);
}

// A second evalrun of a job that is running is refused at once, naming the
// PID that holds the lock; the first one finishes, every question asked once.
TEST_F(E2eJobFolder, ASecondRunOfARunningJobIsRefusedWithItsPid) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) {
    FakeReply r{"Answer: B", "", "stop"};
    r.delay_ms = 100;
    return r;
  });
  const int kQuestions = 16;
  const std::string card =
      WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": )" + std::to_string(kQuestions) + "}}");
  std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "one", "--out", Runs(),
                                   "--data-dir", DatasetsDir()};
  const int pid = SpawnBinary(argv, dir_ + "/out1.txt", dir_ + "/err1.txt");
  ASSERT_GT(pid, 0);
  const bool running = WaitFor([&] { return server.chat_requests() >= 2; }, 60);
  BinaryResult second = RunBinary(argv, 60);
  BinaryResult first = WaitBinary(pid, 120);
  ASSERT_TRUE(running) << ReadFile(dir_ + "/err1.txt");
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find(Runs() + "/one: the job is in use by another evalrun (PID " + std::to_string(pid) +
                            " holds " + Runs() + "/one/evalrun.lock)"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(first.exit_code, 0) << ReadFile(dir_ + "/err1.txt");
  std::set<std::string> ids;
  for (const auto& s : Samples("one", "mmlupro")) EXPECT_TRUE(ids.insert(s["id"]).second) << "asked twice: " << s["id"];
  EXPECT_EQ(ids.size(), static_cast<size_t>(kQuestions));
  EXPECT_EQ(server.chat_requests(), kQuestions);
  // Released at exit: the next run of the job resumes it (nothing to ask).
  EXPECT_EQ(ReadFile(Runs() + "/one/evalrun.lock"), "");
  BinaryResult again = RunBinary(argv, 60);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.chat_requests(), kQuestions);
}

// Runs started in the same second get their own folders: <card>-<time>,
// then -2, -3, ... Those seconds' names are taken beforehand, so the suffix
// is certain; two runs started together never share a folder.
TEST_F(E2eJobFolder, DefaultJobNamesNeverCollide) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 4, "max_tokens": 64}})");
  const std::time_t now = std::time(nullptr);
  std::set<std::string> taken;
  for (int s = 0; s < 60; ++s) {
    taken.insert(DefaultName(now + s));
    fs::create_directories(Runs() + "/" + DefaultName(now + s));
  }
  std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--out", Runs(), "--data-dir", DatasetsDir()};
  const int a = SpawnBinary(argv, dir_ + "/a.out", dir_ + "/a.err");
  const int b = SpawnBinary(argv, dir_ + "/b.out", dir_ + "/b.err");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  BinaryResult ra = WaitBinary(a, 120), rb = WaitBinary(b, 120);
  EXPECT_EQ(ra.exit_code, 0) << ReadFile(dir_ + "/a.err");
  EXPECT_EQ(rb.exit_code, 0) << ReadFile(dir_ + "/b.err");
  std::vector<std::string> made;
  for (const auto& n : Folders(Runs()))
    if (!taken.count(n)) made.push_back(n);
  ASSERT_EQ(made.size(), 2u) << ::testing::PrintToString(Folders(Runs()));
  for (const auto& n : made) {
    EXPECT_TRUE(n.size() > 2 && (n.substr(n.size() - 2) == "-2" || n.substr(n.size() - 2) == "-3")) << n;
    EXPECT_TRUE(taken.count(n.substr(0, n.size() - 2))) << n;
    EXPECT_EQ(Samples(n, "mmlupro").size(), 4u) << n;
  }
  EXPECT_EQ(server.chat_requests(), 8) << "each run asked its own questions once";
  for (const auto& n : taken) EXPECT_TRUE(fs::is_empty(Runs() + "/" + n)) << n;
}

}  // namespace
}  // namespace evalrun::testing
