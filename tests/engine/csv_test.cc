#include "datasets/csv.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace evalrun {
namespace {

using Rows = std::vector<std::vector<std::string>>;

Rows Parse(std::string_view text) {
  Rows rows;
  Status st = ParseCsv(text, &rows);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return rows;
}

TEST(CsvTest, SimpleRecordsWithAndWithoutFinalNewline) {
  EXPECT_EQ(Parse("a,b,c\n1,2,3\n"), (Rows{{"a", "b", "c"}, {"1", "2", "3"}}));
  EXPECT_EQ(Parse("a,b,c\n1,2,3"), (Rows{{"a", "b", "c"}, {"1", "2", "3"}}));
  EXPECT_EQ(Parse("a,b,c\r\n1,2,3\r\n"), (Rows{{"a", "b", "c"}, {"1", "2", "3"}}));
  EXPECT_EQ(Parse("a,b,c\r\n1,2,3"), (Rows{{"a", "b", "c"}, {"1", "2", "3"}}));
  EXPECT_EQ(Parse("x\r\ny\nz"), (Rows{{"x"}, {"y"}, {"z"}}));  // mixed line ends
}

TEST(CsvTest, EmptyInputAndEmptyFields) {
  EXPECT_EQ(Parse(""), Rows{});
  EXPECT_EQ(Parse("\n\r\n"), Rows{});
  EXPECT_EQ(Parse(",\n"), (Rows{{"", ""}}));
  EXPECT_EQ(Parse("a,,c"), (Rows{{"a", "", "c"}}));
  EXPECT_EQ(Parse("a,"), (Rows{{"a", ""}}));
  EXPECT_EQ(Parse("a,\n"), (Rows{{"a", ""}}));
  EXPECT_EQ(Parse("\"\""), (Rows{{""}}));  // a quoted empty field is a record
  EXPECT_EQ(Parse("\"\",\"\"\n"), (Rows{{"", ""}}));
}

TEST(CsvTest, QuotedFields) {
  // Embedded comma, LF, CRLF and doubled quotes.
  EXPECT_EQ(Parse("\"a,b\",c\n"), (Rows{{"a,b", "c"}}));
  EXPECT_EQ(Parse("\"line1\nline2\",x\n"), (Rows{{"line1\nline2", "x"}}));
  EXPECT_EQ(Parse("\"line1\r\nline2\",x\r\n"), (Rows{{"line1\r\nline2", "x"}}));
  EXPECT_EQ(Parse("\"say \"\"hi\"\"\",\"\"\"\"\n"), (Rows{{"say \"hi\"", "\""}}));
  EXPECT_EQ(Parse("\"a\"\"\""), (Rows{{"a\""}}));    // doubled quote right before the closing one
  EXPECT_EQ(Parse("\"\n\n\"\n"), (Rows{{"\n\n"}}));  // blank lines inside quotes are data
  EXPECT_EQ(Parse("\"trailing\",\"\""), (Rows{{"trailing", ""}}));
}

TEST(CsvTest, Relaxations) {
  EXPECT_EQ(Parse("\xEF\xBB\xBFid,name\n1,x\n"),
            (Rows{{"id", "name"}, {"1", "x"}}));            // BOM dropped
  EXPECT_EQ(Parse("a\n\nb\n\n"), (Rows{{"a"}, {"b"}}));     // empty lines skipped
  EXPECT_EQ(Parse("5\"7,x\n"), (Rows{{"5\"7", "x"}}));      // quote inside an unquoted field
  EXPECT_EQ(Parse("a\rb,c\n"), (Rows{{"a\rb", "c"}}));      // lone CR is data
  EXPECT_EQ(Parse(" \"a\" ,b"), (Rows{{" \"a\" ", "b"}}));  // not quoted: starts with a space
  EXPECT_EQ(Parse("a,b\n1\n1,2,3\n"), (Rows{{"a", "b"}, {"1"}, {"1", "2", "3"}}));  // ragged
}

TEST(CsvTest, RecordLines) {
  Rows rows;
  std::vector<size_t> lines;
  ASSERT_TRUE(ParseCsv("h1,h2\n\"multi\nline\",x\n\ny,\"z\r\nz\"\r\nlast,1", &rows, &lines).ok());
  EXPECT_EQ(rows, (Rows{{"h1", "h2"}, {"multi\nline", "x"}, {"y", "z\r\nz"}, {"last", "1"}}));
  EXPECT_EQ(lines, (std::vector<size_t>{1, 2, 5, 7}));
}

TEST(CsvTest, UnterminatedQuoteNamesTheLineWhereItOpened) {
  Rows rows;
  Status st = ParseCsv("a,b\nc,\"never\nclosed,d\n", &rows);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "line 2: quoted field is never closed (no matching '\"' before the end of the text)");
  st = ParseCsv("\"", &rows);
  EXPECT_EQ(st.message(),
            "line 1: quoted field is never closed (no matching '\"' before the end of the text)");
}

TEST(CsvTest, CharacterAfterClosingQuoteIsAnError) {
  Rows rows;
  Status st = ParseCsv("a\n\"x\ny\"z,w\n", &rows);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "line 3: unexpected 'z' after the closing quote of a field (expected ',' or the end "
            "of the line)");
  st = ParseCsv("\"x\" ,y", &rows);
  EXPECT_EQ(st.message(),
            "line 1: unexpected ' ' after the closing quote of a field (expected ',' or the end "
            "of the line)");
  st = ParseCsv("\"x\"\r", &rows);  // CR without LF is not a line break
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
}

TEST(CsvTest, ColumnIndices) {
  std::vector<std::string> header = {"Record ID", "Question", "Extra", "Question 2"};
  std::vector<size_t> indices;
  Status st = CsvColumnIndices(header, {"Question", "Record ID"}, &indices);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(indices, (std::vector<size_t>{1, 0}));

  st = CsvColumnIndices(header, {"question", "Record ID", "Missing"}, &indices);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "header: missing column(s) 'question', 'Missing' (the header has 4 columns)");

  std::vector<std::string> twice = {"a", "b", "a"};
  st = CsvColumnIndices(twice, {"b"}, &indices);
  ASSERT_TRUE(st.ok()) << st.ToString();  // unrequested duplicates are fine
  EXPECT_EQ(indices, (std::vector<size_t>{1}));
  st = CsvColumnIndices(twice, {"a"}, &indices);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), "header: column 'a' appears more than once (ambiguous)");
}

}  // namespace
}  // namespace evalrun
