// Tests for scorers/py_unicode.h: the UTF-8 decoder's two policies
// (Utf8Check::kWellFormed, Utf8Check::kShapeOnly) on every kind of invalid
// input, and Python 3.11's str semantics on code points.
//
// Python never sees invalid UTF-8 (a str holds code points), so the invalid
// cases pin this module's own contract; the callers that depend on it are
// Punkt (an invalid byte is one opaque character), langdetect and IFEval
// (U+FFFD per byte), and the MMLU-Pro extractors and RULER (shape only).
#include "scorers/py_unicode.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun {
namespace {

using py::Utf8Char;
using py::Utf8Check;

constexpr Utf8Char kBad = {py::kReplacementChar, 1, false};
constexpr Utf8Check kWellFormed = Utf8Check::kWellFormed;
constexpr Utf8Check kShapeOnly = Utf8Check::kShapeOnly;

// Printable form of a decoded character for failure messages.
std::string Show(const Utf8Char& c) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "{U+%04X, len %zu, %s}", static_cast<unsigned>(c.cp), c.len,
                c.valid ? "valid" : "invalid");
  return buf;
}

bool Same(const Utf8Char& a, const Utf8Char& b) {
  return a.cp == b.cp && a.len == b.len && a.valid == b.valid;
}

// A byte string and what each policy decodes at its first byte.
struct DecodeCase {
  const char* what;
  std::string_view bytes;
  Utf8Char well_formed;
  Utf8Char shape_only;
};

// Sequences both policies accept, boundaries of each length included.
const DecodeCase kValid[] = {
    {"NUL", std::string_view("\x00", 1), {0x00, 1, true}, {0x00, 1, true}},
    {"ASCII", "A", {0x41, 1, true}, {0x41, 1, true}},
    {"DEL", "\x7F", {0x7F, 1, true}, {0x7F, 1, true}},
    {"first 2-byte", "\xC2\x80", {0x80, 2, true}, {0x80, 2, true}},
    {"e acute", "\xC3\xA9", {0xE9, 2, true}, {0xE9, 2, true}},
    {"last 2-byte", "\xDF\xBF", {0x7FF, 2, true}, {0x7FF, 2, true}},
    {"first 3-byte", "\xE0\xA0\x80", {0x800, 3, true}, {0x800, 3, true}},
    {"before surrogates", "\xED\x9F\xBF", {0xD7FF, 3, true}, {0xD7FF, 3, true}},
    {"after surrogates", "\xEE\x80\x80", {0xE000, 3, true}, {0xE000, 3, true}},
    {"U+FFFD itself", "\xEF\xBF\xBD", {0xFFFD, 3, true}, {0xFFFD, 3, true}},
    {"last 3-byte", "\xEF\xBF\xBF", {0xFFFF, 3, true}, {0xFFFF, 3, true}},
    {"first 4-byte", "\xF0\x90\x80\x80", {0x10000, 4, true}, {0x10000, 4, true}},
    {"emoji", "\xF0\x9F\x98\x80", {0x1F600, 4, true}, {0x1F600, 4, true}},
    {"U+10FFFF", "\xF4\x8F\xBF\xBF", {0x10FFFF, 4, true}, {0x10FFFF, 4, true}},
};

// Byte strings that are not one well-formed character at their first byte.
const DecodeCase kInvalid[] = {
    // Never a character: both policies give one invalid byte.
    {"stray continuation 80", "\x80", kBad, kBad},
    {"stray continuation BF", "\xBF", kBad, kBad},
    {"truncated 2-byte", "\xC3", kBad, kBad},
    {"truncated 3-byte", "\xE2\x82", kBad, kBad},
    {"truncated 4-byte", "\xF0\x9F\x98", kBad, kBad},
    {"truncated 4-byte, 1 of 3", "\xF0\x9F", kBad, kBad},
    {"lead then ASCII", "\xC3" "A", kBad, kBad},
    {"bad 2nd of 3", "\xE2\x28\xA1", kBad, kBad},
    {"bad 3rd of 3", "\xE2\x82\x28", kBad, kBad},
    {"bad 4th of 4", "\xF0\x9F\x98" "A", kBad, kBad},
    {"lead then lead", "\xC3\xC3\xA9", kBad, kBad},
    {"5-byte lead F8", "\xF8\x88\x80\x80\x80", kBad, kBad},
    {"6-byte lead FC", "\xFC\x84\x80\x80\x80\x80", kBad, kBad},
    {"FE", "\xFE", kBad, kBad},
    {"FF", "\xFF", kBad, kBad},
    // Right shape, wrong value: only kWellFormed refuses.
    {"overlong NUL", "\xC0\x80", kBad, {0x00, 2, true}},
    {"overlong 'A' (C1)", "\xC1\x81", kBad, {0x41, 2, true}},
    {"overlong space", "\xC0\xA0", kBad, {0x20, 2, true}},
    {"overlong '/' in 3", "\xE0\x80\xAF", kBad, {0x2F, 3, true}},
    {"overlong U+07FF in 3", "\xE0\x9F\xBF", kBad, {0x7FF, 3, true}},
    {"overlong '/' in 4", "\xF0\x80\x80\xAF", kBad, {0x2F, 4, true}},
    {"overlong U+FFFF in 4", "\xF0\x8F\xBF\xBF", kBad, {0xFFFF, 4, true}},
    {"surrogate U+D800", "\xED\xA0\x80", kBad, {0xD800, 3, true}},
    {"surrogate U+DFFF", "\xED\xBF\xBF", kBad, {0xDFFF, 3, true}},
    {"above U+10FFFF (F4 90)", "\xF4\x90\x80\x80", kBad, {0x110000, 4, true}},
    {"lead F5", "\xF5\x80\x80\x80", kBad, {0x140000, 4, true}},
    {"lead F7, largest", "\xF7\xBF\xBF\xBF", kBad, {0x1FFFFF, 4, true}},
};

TEST(PyUnicodeTest, BothPoliciesDecodeWellFormedCharacters) {
  for (const DecodeCase& c : kValid) {
    const Utf8Char wf = py::DecodeUtf8At(c.bytes, 0, kWellFormed);
    const Utf8Char so = py::DecodeUtf8At(c.bytes, 0, kShapeOnly);
    EXPECT_TRUE(Same(wf, c.well_formed)) << c.what << ": " << Show(wf);
    EXPECT_TRUE(Same(so, c.shape_only)) << c.what << ": " << Show(so);
  }
}

TEST(PyUnicodeTest, InvalidBytesFollowEachPolicy) {
  for (const DecodeCase& c : kInvalid) {
    const Utf8Char wf = py::DecodeUtf8At(c.bytes, 0, kWellFormed);
    const Utf8Char so = py::DecodeUtf8At(c.bytes, 0, kShapeOnly);
    EXPECT_TRUE(Same(wf, c.well_formed)) << c.what << ": " << Show(wf);
    EXPECT_TRUE(Same(so, c.shape_only)) << c.what << ": " << Show(so);
  }
  // The default policy is kWellFormed.
  EXPECT_TRUE(Same(py::DecodeUtf8At("\xC0\x80", 0), kBad));
}

TEST(PyUnicodeTest, DecodingStartsAtPosAndNeverReadsPastTheView) {
  const std::string_view text = "a\xC3\xA9\xE2\x82";
  EXPECT_TRUE(Same(py::DecodeUtf8At(text, 1), {0xE9, 2, true}));
  EXPECT_TRUE(Same(py::DecodeUtf8At(text, 2), kBad));  // a continuation byte
  EXPECT_TRUE(Same(py::DecodeUtf8At(text, 3), kBad));  // truncated by the end
  // A complete sequence cut by the view is truncated too.
  EXPECT_TRUE(Same(py::DecodeUtf8At(std::string_view("\xC3\xA9", 1), 0), kBad));
  EXPECT_TRUE(Same(py::DecodeUtf8At(std::string_view("\xC3\xA9", 1), 0, kShapeOnly), kBad));
}

TEST(PyUnicodeTest, DecodeUtf8GivesOneReplacementCharacterPerInvalidByte) {
  EXPECT_EQ(py::DecodeUtf8All("a\xE2\x82" "b"), U"a\uFFFD\uFFFDb");  // Python "replace": one
  EXPECT_EQ(py::DecodeUtf8All("\xC0\x80"), U"\uFFFD\uFFFD");
  EXPECT_EQ(py::DecodeUtf8All("\xED\xA0\x80"), U"\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(py::DecodeUtf8All("\xF4\x90\x80\x80"), U"\uFFFD\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(py::DecodeUtf8All("\xF8\x88\x80\x80\x80"), U"\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(py::DecodeUtf8All("\xE2\x28\xA1"), U"\uFFFD(\uFFFD");  // resumes at the next byte
  EXPECT_EQ(py::DecodeUtf8All("\xC3\xC3\xA9"), U"\uFFFD\u00E9");
  EXPECT_EQ(py::DecodeUtf8All("\xEF\xBF\xBD"), U"\uFFFD");  // a real U+FFFD is one character

  std::vector<size_t> offsets;
  EXPECT_EQ(py::DecodeUtf8All("\xFF\xC3\xA9z\xF0\x9F", &offsets), U"\uFFFD\u00E9z\uFFFD\uFFFD");
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 1, 3, 4, 5, 6}));

  size_t pos = 0;
  EXPECT_EQ(py::DecodeUtf8("\xE2\x82\xAC\xE2\x82", &pos), U'\u20AC');
  EXPECT_EQ(pos, 3u);
  EXPECT_EQ(py::DecodeUtf8("\xE2\x82\xAC\xE2\x82", &pos), py::kReplacementChar);
  EXPECT_EQ(pos, 4u);

  // Encoding a decoded text gives back its bytes, with U+FFFD for bad ones.
  EXPECT_EQ(py::EncodeUtf8(py::DecodeUtf8All("ok \xC3\xA9 \xFF \xED\xA0\x80")),
            "ok \xC3\xA9 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(PyUnicodeTest, EveryCodePointRoundTrips) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string bytes;
    py::AppendUtf8(cp, &bytes);
    const size_t len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const Utf8Char want = {cp, len, true};
    const unsigned hex = cp;
    ASSERT_EQ(bytes.size(), len) << std::hex << hex;
    ASSERT_TRUE(Same(py::DecodeUtf8At(bytes, 0, kWellFormed), want)) << std::hex << hex;
    ASSERT_TRUE(Same(py::DecodeUtf8At(bytes, 0, kShapeOnly), want)) << std::hex << hex;
    ASSERT_TRUE(Same(py::DecodeUtf8Before(bytes, len), want)) << std::hex << hex;
  }
}

TEST(PyUnicodeTest, DecodeBeforeFindsTheCharacterEndingThere) {
  const std::string_view text = "a\xC3\xA9\xF0\x9F\x98\x80";
  EXPECT_TRUE(Same(py::DecodeUtf8Before(text, 1), {'a', 1, true}));
  EXPECT_TRUE(Same(py::DecodeUtf8Before(text, 3), {0xE9, 2, true}));
  EXPECT_TRUE(Same(py::DecodeUtf8Before(text, 7), {0x1F600, 4, true}));
  // Ending inside a character: the last byte alone, invalid.
  EXPECT_TRUE(Same(py::DecodeUtf8Before(text, 2), kBad));
  EXPECT_TRUE(Same(py::DecodeUtf8Before(text, 6), kBad));
  // A stray continuation byte after a whole character.
  EXPECT_TRUE(Same(py::DecodeUtf8Before("\xC3\xA9\x80", 3), kBad));
  // Continuation bytes with no lead byte within reach.
  EXPECT_TRUE(Same(py::DecodeUtf8Before("x\x9F\x98\x80", 4), kBad));
  EXPECT_TRUE(Same(py::DecodeUtf8Before("\x80\x80\x80\x80\x80", 5), kBad));
  // An invalid lead byte at the end.
  EXPECT_TRUE(Same(py::DecodeUtf8Before("a\xFF", 2), kBad));
  // The view's start is a wall: the lead byte before it is not seen.
  EXPECT_TRUE(Same(py::DecodeUtf8Before(std::string_view("\xC3\xA9").substr(1), 1), kBad));
  // The policy applies as for DecodeUtf8At.
  EXPECT_TRUE(Same(py::DecodeUtf8Before("x\xC1\x81", 3), kBad));
  EXPECT_TRUE(Same(py::DecodeUtf8Before("x\xC1\x81", 3, kShapeOnly), {0x41, 2, true}));
  EXPECT_TRUE(Same(py::DecodeUtf8Before("\xED\xA0\x80", 3, kShapeOnly), {0xD800, 3, true}));
  EXPECT_TRUE(Same(py::DecodeUtf8Before("\xED\xA0\x80", 3), kBad));
}

TEST(PyUnicodeTest, StripFollowsThePolicy) {
  // An overlong space is not whitespace in well-formed text...
  EXPECT_EQ(py::PyStrip("\xC0\xA0x\xC0\xA0"), "\xC0\xA0x\xC0\xA0");
  // ...but decodes to U+0020 by shape.
  EXPECT_EQ(py::PyStrip("\xC0\xA0x\xC0\xA0", kShapeOnly), "x");
  // An invalid byte is never whitespace, and stops the strip.
  EXPECT_EQ(py::PyStrip(" \xFF \xE2\x80 "), "\xFF \xE2\x80");
  EXPECT_EQ(py::PyStrip(" \xFF \xE2\x80 ", kShapeOnly), "\xFF \xE2\x80");
  EXPECT_EQ(py::PyStrip("\xC2\xA0\xE3\x80\x80"), "");
}

TEST(PyUnicodeTest, NoClassHoldsInvalidOrOutOfRangeCodePoints) {
  auto any_class = [](char32_t c) {
    return py::IsPySpace(c) || py::IsPyWord(c) || py::IsPyDecimal(c) || py::IsPyLowerChar(c) ||
           py::IsPyUpperChar(c) || py::IsPyTitleChar(c) || py::IsPyCased(c) ||
           py::IsPyCaseIgnorable(c);
  };
  EXPECT_FALSE(any_class(py::kReplacementChar));
  for (char32_t c = 0xD800; c <= 0xDFFF; ++c) {
    ASSERT_FALSE(any_class(c)) << std::hex << static_cast<unsigned>(c);
  }
  for (char32_t c : {0x110000u, 0x140000u, 0x1FFFFFu, 0xFFFFFFFFu}) {
    EXPECT_FALSE(any_class(c)) << std::hex << static_cast<unsigned>(c);
    EXPECT_EQ(py::SimpleLower(c), c);
  }
}

// The tables are CPython 3.11's (Unicode 14.0): characters that Unicode 15.0
// added (Python 3.12) are in no class.
TEST(PyUnicodeTest, TablesAreUnicode14) {
  EXPECT_TRUE(py::IsPyWord(0x1E290));         // TOTO LETTER PA (Unicode 14.0)
  EXPECT_TRUE(py::IsPyUpperChar(0x10570));    // VITHKUQI CAPITAL LETTER A (14.0)
  EXPECT_TRUE(py::IsPyLowerChar(0x1DF00));    // LATIN SMALL LETTER FENG DIGRAPH WITH TRILL (14.0)
  EXPECT_FALSE(py::IsPyWord(0x1E4D0));        // NAG MUNDARI LETTER O (15.0)
  EXPECT_FALSE(py::IsPyWord(0x31350));        // CJK Extension H (15.0)
  EXPECT_FALSE(py::IsPyDecimal(0x11F50));     // KAWI DIGIT ZERO (15.0)
  EXPECT_FALSE(py::IsPyLowerChar(0x1DF25));   // LATIN SMALL LETTER D WITH MID-HEIGHT LEFT HOOK
  EXPECT_TRUE(py::IsPyWord(U'_'));
  EXPECT_TRUE(py::IsPyWord(0xB2));            // ² (No) is alnum
  EXPECT_FALSE(py::IsPyDecimal(0xB2));
  EXPECT_FALSE(py::IsPyWord(0x301));          // a combining mark (Mn)
}

TEST(PyUnicodeTest, PythonStrMethods) {
  EXPECT_EQ(py::PyLower("ÀÉÎ ÄÖÜ Straße ΣΑΣ ΟΔΟΣ. ПРИВЕТ İ"),
            "àéî äöü straße σας οδος. привет i̇");
  EXPECT_EQ(py::PyLowerChar(0x3A3), "σ");
  EXPECT_TRUE(py::PyIsUpper("ÜBER 123 ΣΑΣ ПРИВЕТ"));
  EXPECT_FALSE(py::PyIsUpper("123 !!!"));
  EXPECT_FALSE(py::PyIsUpper("ǅ"));  // titlecase
  EXPECT_TRUE(py::PyIsLower("straße ß привет"));
  EXPECT_FALSE(py::PyIsLower("straße ẞ"));
  EXPECT_EQ(py::PyStrip("\u3000\u00a0 x y \u2028\t"), "x y");
  EXPECT_EQ(py::PyStrip("\u200b x"), "\u200b x");  // ZERO WIDTH SPACE is not whitespace
  EXPECT_EQ(py::PySplitWhitespace(" a\u00a0b\n\nc "),
            (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(py::PyStripChars("**x**", "*"), "x");
}

}  // namespace
}  // namespace evalrun
