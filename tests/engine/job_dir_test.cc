// JobDir: one process per job folder (flock), default names that never
// collide, and nothing left behind by a start that fails.
#include "evals/run/job_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteText;

TEST(JobDirTest, AnExplicitJobIsLockedWithThePidInTheLockFile) {
  TempDir t;
  JobDir a;
  ASSERT_TRUE(a.Open(t.path() + "/runs", "j", "unused").ok());
  EXPECT_EQ(a.job(), "j");
  EXPECT_EQ(a.path(), t.path() + "/runs/j");
  EXPECT_EQ(ReadFile(a.path() + "/evalrun.lock"), std::to_string(getpid()) + "\n");
  // flock locks belong to an open file: a second open is refused even in
  // the same process, naming the holder.
  JobDir b;
  Status st = b.Open(t.path() + "/runs", "j", "unused");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find(t.path() + "/runs/j: the job is in use by another evalrun (PID " +
                              std::to_string(getpid()) + " holds " + t.path() + "/runs/j/evalrun.lock)"),
            std::string::npos)
      << st.message();
  a.Keep();
}

// Resumed right after `kill -9`: the lock may still be held for a moment
// by a process the dead evalrun had just forked (a grader before its exec).
// With the PID in the lock file gone, the new run waits for it to let go.
TEST(JobDirTest, ALockLeftByAChildOfADeadEvalrunIsWaitedFor) {
  TempDir t;
  auto a = std::make_unique<JobDir>();
  ASSERT_TRUE(a->Open(t.path() + "/runs", "j", "unused").ok());
  a->Keep();
  const std::string lock = t.path() + "/runs/j/evalrun.lock";
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  WriteText(lock, std::to_string(dead) + "\n");  // the same file: a's lock stays held
  std::thread letgo([&a] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    a.reset();  // lets go of the lock
  });
  JobDir b;
  const Status st = b.Open(t.path() + "/runs", "j", "unused");
  letgo.join();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(ReadFile(lock), std::to_string(getpid()) + "\n");
  b.Keep();
}

TEST(JobDirTest, AKeptJobStaysAndItsLockFileIsEmptiedOnRelease) {
  TempDir t;
  {
    JobDir a;
    ASSERT_TRUE(a.Open(t.path(), "j", "unused").ok());
    WriteText(t.path() + "/j/run.json", "{}\n");
    a.Keep();
  }
  EXPECT_TRUE(fs::exists(t.path() + "/j/run.json"));
  EXPECT_EQ(ReadFile(t.path() + "/j/evalrun.lock"), "");
  JobDir again;  // released: the next process gets it
  EXPECT_TRUE(again.Open(t.path(), "j", "unused").ok());
}

TEST(JobDirTest, AFailedStartRemovesWhatItCreatedAndNothingElse) {
  TempDir t;
  {
    JobDir a;
    ASSERT_TRUE(a.Open(t.path() + "/out/deeper", "", "card-20261201T155704Z").ok());
    EXPECT_TRUE(fs::is_directory(t.path() + "/out/deeper/card-20261201T155704Z"));
  }  // no Keep(): the run never started
  EXPECT_FALSE(fs::exists(t.path() + "/out")) << "the folders this process made are removed";

  // An existing job (answers in it) is never removed; only the lock is let go.
  WriteText(t.path() + "/runs/old/run.json", "{}\n");
  WriteText(t.path() + "/runs/old/mmlupro/samples.jsonl", "{\"id\":\"1\"}\n");
  {
    JobDir a;
    ASSERT_TRUE(a.Open(t.path() + "/runs", "old", "unused").ok());
  }
  EXPECT_EQ(ReadFile(t.path() + "/runs/old/mmlupro/samples.jsonl"), "{\"id\":\"1\"}\n");
  EXPECT_FALSE(fs::exists(t.path() + "/runs/old/evalrun.lock")) << "a lock file this process made is removed";

  // A managed engine's log is kept (the failure message names it), and the
  // folder with it; a later run of the same job takes the folder.
  {
    JobDir a;
    ASSERT_TRUE(a.Open(t.path() + "/runs", "eng", "unused").ok());
    WriteText(t.path() + "/runs/eng/server.log", "engine said no\n");
  }
  EXPECT_EQ(ReadFile(t.path() + "/runs/eng/server.log"), "engine said no\n");
  JobDir again;
  EXPECT_TRUE(again.Open(t.path() + "/runs", "eng", "unused").ok());
}

TEST(JobDirTest, DefaultNamesGetASuffixWhenTaken) {
  TempDir t;
  fs::create_directories(t.path() + "/card-T");  // another run's, this second
  JobDir a, b;
  ASSERT_TRUE(a.Open(t.path(), "", "card-T").ok());
  ASSERT_TRUE(b.Open(t.path(), "", "card-T").ok());
  EXPECT_EQ(a.job(), "card-T-2");
  EXPECT_EQ(b.job(), "card-T-3");
  a.Keep();
  b.Keep();
}

TEST(JobDirTest, BadNamesAndForeignFoldersAreRefused) {
  TempDir t;
  JobDir a;
  EXPECT_NE(a.Open(t.path(), "a/b", "x").message().find("--job: a job name may not contain '/'"), std::string::npos);
  WriteText(t.path() + "/mine/notes.txt", "mine\n");
  JobDir b;
  Status st = b.Open(t.path(), "mine", "x");
  EXPECT_NE(st.message().find(t.path() + "/mine: exists and is not an evalrun job (no run.json)"), std::string::npos)
      << st.message();
  EXPECT_FALSE(fs::exists(t.path() + "/mine/evalrun.lock"));
  WriteText(t.path() + "/file", "x");
  JobDir c;
  st = c.Open(t.path() + "/file/sub", "j", "x");
  EXPECT_NE(st.message().find(t.path() + "/file/sub/j: cannot create folder"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace evalrun
