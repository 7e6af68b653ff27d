// evals/benchmarks/livecodebench/lcb_rows.h on the fixture rows (tests/fixtures/livecodebench/,
// written by make_fixtures.py in the dataset's exact format).
#include "evals/benchmarks/livecodebench/lcb_rows.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun {
namespace {

const std::string kDir = testing::LcbFixtureDir();

std::vector<LcbProblem> ReadAll(const std::string& release, const LcbReadOptions& options) {
  std::vector<std::string> files;
  EXPECT_TRUE(LcbReleaseFiles(release, &files).ok());
  std::vector<LcbProblem> rows;
  for (const auto& f : files) {
    Status st = ReadLcbFile(kDir + f, f, options, [&](LcbProblem&& p) {
      rows.push_back(std::move(p));
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return rows;
}

TEST(LcbRowsTest, ParsesBothFormsEveryField) {
  std::vector<LcbProblem> rows = ReadAll("release_v2", {});
  ASSERT_EQ(rows.size(), 5u);
  const LcbProblem& sum = rows[0];
  EXPECT_EQ(sum.question_id, "abc900_a");
  EXPECT_EQ(sum.platform, "atcoder");
  EXPECT_EQ(sum.difficulty, "easy");
  EXPECT_EQ(sum.contest_id, "abc900");
  EXPECT_EQ(sum.contest_date, "2023-08-19T00:00:00");
  EXPECT_EQ(sum.ContestMonth(), "2023-08");
  EXPECT_EQ(sum.source, "test.jsonl:1");
  EXPECT_TRUE(sum.func_name.empty());
  EXPECT_TRUE(sum.private_tests_compressed);
  ASSERT_EQ(sum.public_tests.size(), 1u);
  EXPECT_EQ(sum.public_tests[0].input, "3\n1 2 3\n");
  ASSERT_EQ(sum.private_tests.size(), 2u);
  EXPECT_EQ(sum.private_tests[0].output, std::string(1, '1') + std::string(120, '0') + "\n");
  const LcbProblem& pair = rows[2];
  EXPECT_EQ(pair.func_name, "pairSum");
  EXPECT_FALSE(pair.private_tests_compressed);  // the plain JSON form
  EXPECT_TRUE(pair.private_tests[0].functional);
  EXPECT_EQ(pair.private_tests[0].input, "[3, 2, 4]\n6");
  EXPECT_NE(pair.starter_code.find("def pairSum(self"), std::string::npos);
  EXPECT_EQ(rows[3].source, "test2.jsonl:1");
  EXPECT_EQ(rows[3].private_tests.size(), 1u);
}

TEST(LcbRowsTest, ReleasesAndFilesAsTheLoadingScript) {
  std::vector<std::string> f;
  ASSERT_TRUE(LcbReleaseFiles("release_v6", &f).ok());
  EXPECT_EQ(f, (std::vector<std::string>{"test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl",
                                         "test6.jsonl"}));
  ASSERT_TRUE(LcbReleaseFiles("release_latest", &f).ok());
  EXPECT_EQ(f.size(), 6u);
  ASSERT_TRUE(LcbReleaseFiles("v6", &f).ok());
  EXPECT_EQ(f, std::vector<std::string>{"test6.jsonl"});
  ASSERT_TRUE(LcbReleaseFiles("v1", &f).ok());
  EXPECT_EQ(f, std::vector<std::string>{"test.jsonl"});
  ASSERT_TRUE(LcbReleaseFiles("v2_v4", &f).ok());
  EXPECT_EQ(f, (std::vector<std::string>{"test2.jsonl", "test3.jsonl", "test4.jsonl"}));
  ASSERT_TRUE(LcbReleaseFiles("test5.jsonl", &f).ok());
  EXPECT_EQ(f, std::vector<std::string>{"test5.jsonl"});
  EXPECT_NE(LcbReleaseFiles("v6_v2", &f).message().find("release_v1 .. release_v6"), std::string::npos);
  EXPECT_FALSE(LcbReleaseFiles("release_v7", &f).ok());
  EXPECT_EQ(LcbWindowText("release_v6", {"test.jsonl", "test6.jsonl"}, "2024-08-01", ""),
            "release_v6 (test.jsonl..test6.jsonl), contest_date 2024-08-01 .. any");
  EXPECT_EQ(LcbWindowText("v6", {"test6.jsonl"}, "", ""), "v6 (test6.jsonl), contest_date any");
}

TEST(LcbRowsTest, TheDateWindowComparesFullDatesAsTheOfficial) {
  LcbReadOptions o;
  LcbDateTime d;
  ASSERT_TRUE(ParseLcbDate("2023-11-24", "end_date", &d).ok());
  o.end = d;  // midnight: the contest at 14:35 that day is outside, as datetime <= does
  std::vector<LcbProblem> rows = ReadAll("release_v2", o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].question_id, "abc900_a");
  ASSERT_TRUE(ParseLcbDate("2024-03-24", "start_date", &d).ok());
  o.start = d;
  o.end.reset();
  o.decode_private_tests = false;
  rows = ReadAll("release_v2", o);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].question_id, "3900");  // 2024-03-24T00:00:00: the start is inclusive
  EXPECT_TRUE(rows[1].private_tests.empty());
  EXPECT_NE(ParseLcbDate("2024-02-30", "start_date", &d).message().find("start_date: \"2024-02-30\""),
            std::string::npos);
  EXPECT_FALSE(ParseLcbDate("2024-01-01T00:00:00+00:00", "x", &d).ok());
  ASSERT_TRUE(ParseLcbDate("2024-01-01 10:20:30.5", "x", &d).ok());
  EXPECT_EQ(d.microsecond, 500000);
}

TEST(LcbRowsTest, BadRowsNameFileLineAndField) {
  testing::TempDir dir("evalrun_lcb_rows");
  const std::string row =
      R"({"question_title": "t", "question_content": "c", "platform": "PLATFORM", "question_id": "q",)"
      R"( "contest_id": "c", "contest_date": "2024-01-01T00:00:00", "starter_code": "", "difficulty": "easy",)"
      R"( "public_test_cases": "[]", "private_test_cases": "PRIVATE", "metadata": "{}"})";
  auto read = [&](const std::string& platform, const std::string& priv) {
    std::string line = row;
    line.replace(line.find("PLATFORM"), 8, platform);
    line.replace(line.find("PRIVATE"), 7, priv);
    testing::WriteText(dir.path() + "/test.jsonl", "\n" + line + "\n");
    return ReadLcbFile(dir.path() + "/test.jsonl", "test.jsonl", {}, [](LcbProblem&&) { return Status::Ok(); });
  };
  EXPECT_TRUE(read("atcoder", "[]").ok());
  EXPECT_EQ(read("topcoder", "[]").message(),
            "test.jsonl:2: platform: \"topcoder\" (expected one of leetcode, codeforces, atcoder)");
  EXPECT_NE(read("atcoder", "gASVAAAA").message().find("test.jsonl:2: private_test_cases: zlib"), std::string::npos);
  EXPECT_NE(read("atcoder", "[{\\\"input\\\": \\\"1\\\"}]").message().find("exactly input, output, testtype"),
            std::string::npos);
}

}  // namespace
}  // namespace evalrun
