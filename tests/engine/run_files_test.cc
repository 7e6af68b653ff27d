#include "evals/run/run_files.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/run_binary.h"

namespace evalrun {
namespace {

class RunFilesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir(); }
  void TearDown() override { testing::RemoveTree(dir_); }
  std::string dir_;
};

TEST_F(RunFilesTest, AppendWholeLinesAndReadBack) {
  JsonlAppender a;
  ASSERT_TRUE(a.Open(dir_ + "/s.jsonl").ok());
  ASSERT_TRUE(a.Append({{"id", "1"}}).ok());
  ASSERT_TRUE(a.Append({{"id", "2"}, {"response", "x\ny"}}).ok());
  a.Close();
  EXPECT_EQ(testing::ReadFile(dir_ + "/s.jsonl"), "{\"id\":\"1\"}\n{\"id\":\"2\",\"response\":\"x\\ny\"}\n");
  SampleFileContents c;
  ASSERT_TRUE(LoadSampleFile(dir_ + "/s.jsonl", &c).ok());
  EXPECT_EQ(c.lines.size(), 2u);
  EXPECT_FALSE(c.dropped_torn_tail);
}

// a samples.jsonl that is a symbolic link is refused, never
// followed: its target (here a file whose last line looks torn) is left
// byte for byte as it was, by the reader and by the appender.
TEST_F(RunFilesTest, ASymlinkedSampleFileIsRefusedAndItsTargetLeftAlone) {
  const std::string target = dir_ + "/precious.txt";
  const std::string precious = "{\"id\": \"1\"}\nkeep these bytes, no newline at the end";
  testing::WriteFile(target, precious);
  const std::string link = dir_ + "/samples.jsonl";
  std::filesystem::create_symlink(target, link);
  SampleFileContents c;
  Status st = LoadSampleFile(link, &c);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message().rfind(link + ": is a symbolic link;", 0), 0u) << st.message();
  EXPECT_FALSE(c.dropped_torn_tail);
  EXPECT_EQ(testing::ReadFile(target), precious);

  JsonlAppender a;
  st = a.Open(link);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message().rfind(link + ": is a symbolic link;", 0), 0u) << st.message();
  EXPECT_EQ(testing::ReadFile(target), precious);
}

TEST_F(RunFilesTest, WriteThenOneSyncForTheBatch) {
  JsonlAppender a;
  ASSERT_TRUE(a.Open(dir_ + "/s.jsonl").ok());
  ASSERT_TRUE(a.Sync().ok());
  EXPECT_EQ(a.syncs(), 0);  // nothing written: no fdatasync
  ASSERT_TRUE(a.Write({{"id", "1"}}).ok());
  ASSERT_TRUE(a.Write({{"id", "2"}}).ok());
  // Written lines are in the file at once (a killed process loses nothing).
  EXPECT_EQ(testing::ReadFile(dir_ + "/s.jsonl"), "{\"id\":\"1\"}\n{\"id\":\"2\"}\n");
  ASSERT_TRUE(a.Sync().ok());
  ASSERT_TRUE(a.Sync().ok());
  EXPECT_EQ(a.syncs(), 1);
  ASSERT_TRUE(a.Append({{"id", "3"}}).ok());
  EXPECT_EQ(a.syncs(), 2);
  a.Close();
  EXPECT_FALSE(a.Write({{"id", "4"}}).ok());
  EXPECT_FALSE(a.Sync().ok());
}

TEST_F(RunFilesTest, TornLastLineIsCutOff) {
  testing::WriteFile(dir_ + "/s.jsonl", "{\"id\":\"1\"}\n{\"id\":\"2\",\"resp");
  SampleFileContents c;
  ASSERT_TRUE(LoadSampleFile(dir_ + "/s.jsonl", &c).ok());
  EXPECT_EQ(c.lines.size(), 1u);
  EXPECT_TRUE(c.dropped_torn_tail);
  EXPECT_EQ(testing::ReadFile(dir_ + "/s.jsonl"), "{\"id\":\"1\"}\n");
  // A complete-looking but invalid last line (a torn write that ended in a newline) too.
  testing::WriteFile(dir_ + "/t.jsonl", "{\"id\":\"1\"}\n{\"id\":\n");
  ASSERT_TRUE(LoadSampleFile(dir_ + "/t.jsonl", &c).ok());
  EXPECT_EQ(c.lines.size(), 1u);
  EXPECT_TRUE(c.dropped_torn_tail);
}

TEST_F(RunFilesTest, BadLineInTheMiddleIsAnError) {
  testing::WriteFile(dir_ + "/s.jsonl", "{\"id\":\"1\"}\nnot json\n{\"id\":\"3\"}\n");
  SampleFileContents c;
  Status st = LoadSampleFile(dir_ + "/s.jsonl", &c);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("s.jsonl:2"), std::string::npos) << st.message();
}

TEST_F(RunFilesTest, AtomicWriteReplaces) {
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/r.json", "one").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/r.json", "two").ok());
  EXPECT_EQ(testing::ReadFile(dir_ + "/r.json"), "two");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/r.json.tmp"));
  EXPECT_FALSE(WriteFileAtomically(dir_ + "/no/such/dir/r.json", "x").ok());
}

}  // namespace
}  // namespace evalrun
