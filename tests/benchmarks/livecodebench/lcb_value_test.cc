// Expected outputs parsed as json.loads parses them (every integer exact,
// of any length) and compared as Python compares them
// (scorers/livecodebench/lcb_value.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "scorers/livecodebench/lcb_value.h"

namespace evalrun {
namespace {

std::string Digits(size_t n, char first = '7') { return std::string(1, first) + std::string(n - 1, '3'); }

PyValue Parse(const std::string& text) {
  PyValue v;
  Status st = ParseExpectedValue(text, &v);
  EXPECT_TRUE(st.ok()) << text.substr(0, 80) << ": " << st.ToString();
  return v;
}

PyValue TypedInt(const std::string& text) {
  PyValue v;
  EXPECT_TRUE(DecodeTypedValue(nlohmann::json{{"i", text}}, &v).ok());
  return v;
}

TEST(LcbValueTest, IntegersOfAnyLengthAreKeptExactly) {
  for (size_t n : {18, 19, 20, 309, 400, 9543}) {
    const std::string digits = Digits(n);
    PyValue v = Parse(digits);
    ASSERT_EQ(v.kind, PyValue::kInt) << n;
    EXPECT_EQ(v.int_text, digits) << n;
    EXPECT_EQ(Parse("-" + digits).int_text, "-" + digits) << n;
    EXPECT_TRUE(PyEquals(TypedInt(digits), v).equal) << n;
    EXPECT_FALSE(PyEquals(TypedInt(Digits(n, '8')), v).equal) << n;
    EXPECT_FALSE(PyEquals(TypedInt("-" + digits), v).equal) << n;
  }
}

TEST(LcbValueTest, LongIntegersInsideContainersKeepTheirPlaces) {
  const std::string a = Digits(500), b = Digits(30, '9');
  PyValue v = Parse("[1, " + a + ", {\"k\": -" + b + ", \"x\": 2.5}, [" + b + ", 3]]");
  ASSERT_EQ(v.kind, PyValue::kList);
  ASSERT_EQ(v.items.size(), 4u);
  EXPECT_EQ(v.items[0].int_text, "1");
  EXPECT_EQ(v.items[1].int_text, a);
  EXPECT_EQ(v.items[2].entries[0].second.int_text, "-" + b);
  EXPECT_EQ(v.items[2].entries[1].second.kind, PyValue::kFloat);
  EXPECT_DOUBLE_EQ(v.items[2].entries[1].second.number, 2.5);
  EXPECT_EQ(v.items[3].items[0].int_text, b);
  EXPECT_EQ(v.items[3].items[1].int_text, "3");
}

TEST(LcbValueTest, DigitsInsideStringsAreNotNumbers) {
  const std::string a = Digits(40);
  PyValue v = Parse("[\"" + a + "\", \"q\\\"" + a + "\\\\\", " + a + "]");
  ASSERT_EQ(v.items.size(), 3u);
  EXPECT_EQ(v.items[0].kind, PyValue::kStr);
  EXPECT_EQ(v.items[0].text, a);
  EXPECT_EQ(v.items[1].text, "q\"" + a + "\\");
  EXPECT_EQ(v.items[2].int_text, a);
}

TEST(LcbValueTest, LongFloatsAndBadNumbersStayWhatJsonMakesOfThem) {
  // A long mantissa with a point is a float, as json.loads makes it.
  PyValue f = Parse(Digits(30) + ".5");
  EXPECT_EQ(f.kind, PyValue::kFloat);
  // An integer equals a float only exactly: 2**64 as a float and as an int.
  EXPECT_TRUE(PyEquals(TypedInt("18446744073709551616"), Parse("18446744073709551616.0")).equal);
  EXPECT_FALSE(PyEquals(TypedInt("18446744073709551617"), Parse("18446744073709551616.0")).equal);
  // Leading zeros stay invalid JSON, however long.
  PyValue v;
  EXPECT_FALSE(ParseExpectedValue("0" + Digits(30), &v).ok());
  EXPECT_FALSE(ParseExpectedValue("[" + Digits(30) + " " + Digits(30) + "]", &v).ok());
}

}  // namespace
}  // namespace evalrun
