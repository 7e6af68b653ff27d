// json_top_fields.h: the scan that finds a few top-level fields of a JSON
// object line without parsing it (MMLU-Pro's first pass), hostile lines
// included; and mapped_file.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "evals/base/files.h"
#include "evals/base/json_top_fields.h"
#include "evals/base/mapped_file.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

std::vector<std::string> Scan(std::string_view line, std::string* error = nullptr) {
  std::vector<std::string_view> raw;
  std::string e;
  const bool ok = ScanTopLevelFields(line, {"id", "category"}, &raw, &e);
  if (error) *error = e;
  if (!ok) return {"ERROR"};
  return {std::string(raw[0]), std::string(raw[1])};
}

TEST(JsonTopFieldsTest, FindsTopLevelValuesAsWritten) {
  EXPECT_EQ(Scan(R"({"id": 70, "category": "law"})"), (std::vector<std::string>{"70", "\"law\""}));
  EXPECT_EQ(Scan(R"(  {"category":"a\"b","id":-3e2}  )"), (std::vector<std::string>{"-3e2", "\"a\\\"b\""}));
  EXPECT_EQ(Scan(R"({})"), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(Scan(R"({"other": 1})"), (std::vector<std::string>{"", ""}));
}

// Keys inside nested values and inside strings are not top-level keys.
TEST(JsonTopFieldsTest, SkipsNestedValuesAndStringsThatLookLikeKeys) {
  const std::string line =
      R"({"q": "x \"id\": 9, {[", "o": {"id": 1, "a": ["}", {"category": "no"}]}, "id": 5, )"
      R"("s": "\\", "category": "yes", "n": null, "t": [true, false, []]})";
  EXPECT_EQ(Scan(line), (std::vector<std::string>{"5", "\"yes\""}));
  // The raw values decode to what a whole parse gives.
  const nlohmann::json whole = nlohmann::json::parse(line);
  EXPECT_EQ(nlohmann::json::parse(Scan(line)[1]), whole["category"]);
  EXPECT_EQ(nlohmann::json::parse(Scan(line)[0]), whole["id"]);
}

TEST(JsonTopFieldsTest, MalformedLinesAreRefusedWithWhere) {
  std::string e;
  EXPECT_EQ(Scan("[1, 2]", &e)[0], "ERROR");
  EXPECT_EQ(e, "not a JSON object");
  EXPECT_EQ(Scan("", &e)[0], "ERROR");
  EXPECT_EQ(Scan(R"({"id": 1, "category": "unterminated})", &e)[0], "ERROR");
  EXPECT_EQ(e, "a value that does not end at byte 22");
  EXPECT_EQ(Scan(R"({"id": 1, "category": "x\"})", &e)[0], "ERROR");
  EXPECT_EQ(Scan(R"({"id": [1, {"a": 2]}, "category": "x"})", &e)[0], "ERROR");  // brackets do not match
  EXPECT_EQ(Scan(R"({"id": 1 "category": "x"})", &e)[0], "ERROR");
  EXPECT_EQ(e, "expected ',' or '}' at byte 9");
  EXPECT_EQ(Scan(R"({"id": 1, "category": "x"} trailing)", &e)[0], "ERROR");
  EXPECT_EQ(e, "text after the object at byte 26");
  EXPECT_EQ(Scan(R"({"id": 1, "id": 2})", &e)[0], "ERROR");
  EXPECT_EQ(e, "a second \"id\" at byte 10");
  EXPECT_EQ(Scan(R"({"id": , "category": "x"})", &e)[0], "ERROR");
  EXPECT_EQ(Scan(R"({id: 1})", &e)[0], "ERROR");
  EXPECT_EQ(e, "expected a key at byte 1");
  EXPECT_EQ(Scan(R"({"id": 1,})", &e)[0], "ERROR");
  EXPECT_EQ(Scan(R"({"id" 1})", &e)[0], "ERROR");
  EXPECT_EQ(Scan("{\"id\": \"" + std::string(100000, '\\'), &e)[0], "ERROR");  // a run of backslashes, no end
}

TEST(MappedFileTest, MapsAFileEmptyOrNotAndNamesAMissingOne) {
  testing::TempDir t("evalrun-mapped");
  ASSERT_TRUE(WriteFileBytes(t.path() + "/a", std::string("one\0two\n", 8)).ok());
  ASSERT_TRUE(WriteFileBytes(t.path() + "/empty", "").ok());
  MappedFile f;
  ASSERT_TRUE(f.Open(t.path() + "/a").ok());
  EXPECT_EQ(f.text(), std::string_view("one\0two\n", 8));
  ASSERT_TRUE(f.Open(t.path() + "/empty").ok());  // replaces the first
  EXPECT_EQ(f.text(), "");
  const Status missing = f.Open(t.path() + "/none");
  EXPECT_EQ(missing.ToString().find(t.path() + "/none: cannot open for reading") != std::string::npos, true)
      << missing.ToString();
  const Status folder = f.Open(t.path());
  EXPECT_NE(folder.ToString().find(t.path() + ": cannot map: not a regular file"), std::string::npos)
      << folder.ToString();
}

}  // namespace
}  // namespace evalrun
