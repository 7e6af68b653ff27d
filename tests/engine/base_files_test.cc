// evals/base's small helpers: files.h, time_text.h, comma_list.h, the real
// clock's sleep and the cancel token's links.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <thread>

#include "evals/base/cancel.h"
#include "evals/base/clock.h"
#include "evals/base/comma_list.h"
#include "evals/base/files.h"
#include "evals/base/time_text.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

TEST(FilesTest, ReadWriteMakeRenameAndSize) {
  testing::TempDir t("evalrun-files");
  const std::string dir = t.path() + "/a/b/c";
  ASSERT_TRUE(MakeDirectories(dir).ok());
  ASSERT_TRUE(MakeDirectories(dir).ok());  // already there
  ASSERT_TRUE(WriteFileBytes(dir + "/x", std::string("one\0two", 7)).ok());
  EXPECT_EQ(FileSize(dir + "/x"), 7);
  EXPECT_EQ(FileSize(dir + "/nothing"), -1);
  std::string text;
  ASSERT_TRUE(ReadFileToString(dir + "/x", &text).ok());
  EXPECT_EQ(text, std::string("one\0two", 7));
  ASSERT_TRUE(RenameFile(dir + "/x", dir + "/y").ok());
  EXPECT_EQ(FileSize(dir + "/x"), -1);
  EXPECT_EQ(DirName(dir + "/y"), dir);
  EXPECT_EQ(DirName("plain"), ".");

  Status st = ReadFileToString(dir + "/x", &text);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), dir + "/x: cannot open for reading");
  st = MakeDirectories(dir + "/y/z");  // a file in the way
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(st.message().rfind(dir + "/y/z: cannot create folder: ", 0), 0u) << st.message();
  st = RenameFile(dir + "/x", dir + "/w");
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(st.message().rfind("cannot rename " + dir + "/x to " + dir + "/w: ", 0), 0u) << st.message();
  EXPECT_EQ(WriteFileBytes(t.path() + "/no/such/folder/f", "x").code(), Status::Code::kIoError);
}

// A file read whole: the sized read, and files whose size is not known up
// front (/proc says 0) read to their end all the same.
TEST(FilesTest, ReadFileToStringReadsSizedAndProcFilesWhole) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/big.txt";
  std::string big(3 << 20, 'x');
  big.back() = 'y';
  ASSERT_TRUE(WriteFileBytes(path, big).ok());
  std::string got;
  ASSERT_TRUE(ReadFileToString(path, &got).ok());
  EXPECT_EQ(got, big);
  ASSERT_TRUE(ReadFileToString("/proc/self/status", &got).ok());
  EXPECT_NE(got.find("Pid:"), std::string::npos) << got;
  EXPECT_FALSE(ReadFileToString(dir.path() + "/absent", &got).ok());
}

TEST(TimeTextTest, TheThreeForms) {
  const double t = 1764475800.9996;  // 2025-11-30T04:10:00.9996Z
  EXPECT_EQ(FormatUtcIso8601(t), "2025-11-30T04:10:01.000Z");
  EXPECT_EQ(FormatUtcIso8601(1764475800.123), "2025-11-30T04:10:00.123Z");
  EXPECT_EQ(FormatUtcSeconds(t), "2025-11-30T04:10:00Z");
  EXPECT_EQ(FormatUtcCompact(t), "20251130T041000Z");
  EXPECT_GT(UnixSecondsNow(), 1764475800.0);
}

TEST(CommaListTest, EmptyItemsAreDropped) {
  EXPECT_EQ(SplitCommaList("mmlupro,gpqa"), (std::vector<std::string>{"mmlupro", "gpqa"}));
  EXPECT_EQ(SplitCommaList(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitCommaList(" a , b"), (std::vector<std::string>{" a ", " b"}));
  EXPECT_TRUE(SplitCommaList("").empty());
  EXPECT_TRUE(SplitCommaList(",,").empty());
}

TEST(RealClockTest, SleepForSleepsAndACancelledTokenDoesNot) {
  RealClock* clock = RealClock::Default();
  Stopwatch w(clock);
  EXPECT_TRUE(clock->SleepFor(0.01, nullptr));
  EXPECT_GE(w.Seconds(), 0.01);
  CancelToken cancel;
  cancel.Cancel();
  w.Restart();
  EXPECT_FALSE(clock->SleepFor(30, &cancel));
  EXPECT_LT(w.Seconds(), 5);
}

// A linked token is cancelled with its parent: a sleeper on the child wakes
// at once, without anything polling the parent; after Unlink it is not.
TEST(CancelTokenTest, ALinkedTokenIsCancelledWithItsParentUntilUnlinked) {
  CancelToken parent, child, other;
  parent.Link(&child);
  parent.Link(&other);
  parent.Unlink(&other);
  Stopwatch w(RealClock::Default());
  std::thread t([&] { EXPECT_FALSE(child.SleepFor(30)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  parent.Cancel();
  t.join();
  EXPECT_LT(w.Seconds(), 5);
  EXPECT_TRUE(child.cancelled());
  EXPECT_FALSE(other.cancelled());
  CancelToken late;
  parent.Link(&late);  // the parent is cancelled already
  EXPECT_TRUE(late.cancelled());
}

}  // namespace
}  // namespace evalrun
