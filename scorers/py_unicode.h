// UTF-8 decoding and Python 3 `str` semantics on UTF-8 text, shared by every
// scorer that must agree with Python code: an official instruction checker
// (str.lower(), str.isupper(), str.strip(), str.split(), re's \w \s \d and
// IGNORECASE), NLTK Punkt, langdetect, official answer regexes and
// string-match metrics.
//
// The character tables are generated from CPython 3.11.2's unicodedata
// (Unicode 14.0.0) and cover every code point, not just Latin/Greek/Cyrillic:
// see py_unicode_tables.inc. Known limits, all deliberate:
//  - A Python str cannot hold invalid UTF-8. Here a byte that starts no
//    acceptable sequence is one invalid character of one byte (U+FFFD from
//    DecodeUtf8, `valid == false` from DecodeUtf8At), and decoding resumes at
//    the next byte. So "\xE2\x82" is two characters, where Python's
//    bytes.decode(errors="replace") would give one U+FFFD. U+FFFD is
//    uncased, not a word character and not whitespace.
//  - Tables follow Unicode 14.0; a checker run under another Python may differ
//    for characters assigned later. Every predicate is false above U+10FFFF
//    and on surrogates (U+D800-U+DFFF).
//
// All functions are pure and thread-safe.
#ifndef EVALRUN_SCORERS_PY_UNICODE_H_
#define EVALRUN_SCORERS_PY_UNICODE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun::py {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// What a decoder accepts as one character.
enum class Utf8Check {
  // Well-formed UTF-8 (RFC 3629), exactly what Python's bytes.decode("utf-8")
  // accepts: no overlong forms (C0 80), no surrogates (ED A0 80), nothing
  // above U+10FFFF (F4 90 80 80, F5-FF).
  kWellFormed,
  // The byte shape only: a lead byte C0-DF, E0-EF or F0-F7 followed by 1, 2 or
  // 3 continuation bytes (80-BF) decodes to the bits it carries, even as an
  // overlong form (C1 81 -> 'A'), a surrogate or a value up to 0x1FFFFF.
  // Truncated sequences, stray continuation bytes and F8-FF stay invalid.
  // Kept because the multiple-choice extractors (choice_extract.cc) and a
  // benchmark's whitespace collapsing (its scorers/<name>/ metrics) have
  // always decoded this way.
  // On well-formed text, such as any string that came through a JSON parser,
  // it agrees with kWellFormed.
  kShapeOnly,
};

// One decoded character.
struct Utf8Char {
  char32_t cp;  // the code point; kReplacementChar when !valid
  size_t len;   // its length in bytes, 1-4; 1 when !valid
  bool valid;   // false: text[pos] starts no sequence that `check` accepts
};

// The character that starts at text[pos]. Precondition: pos < text.size().
Utf8Char DecodeUtf8At(std::string_view text, size_t pos,
                      Utf8Check check = Utf8Check::kWellFormed);

// The character that ends just before text[end]: steps back over at most
// three continuation bytes and decodes there; when that character does not
// end exactly at `end`, the last byte alone is the character (invalid, as
// U+FFFD of length 1). Precondition: 0 < end <= text.size(). Bytes before
// text.data() are never read: pass text.substr(begin) to stop at `begin`.
Utf8Char DecodeUtf8Before(std::string_view text, size_t end,
                          Utf8Check check = Utf8Check::kWellFormed);

// Decodes the well-formed character starting at text[*pos] and advances *pos
// past it. Precondition: *pos < text.size(). Invalid bytes give U+FFFD, one
// byte each.
char32_t DecodeUtf8(std::string_view text, size_t* pos);
// Appends the UTF-8 bytes of cp: its 1-4 byte form, also for a surrogate and
// for values up to 0x1FFFFF (the shapes that kShapeOnly decodes back).
void AppendUtf8(char32_t cp, std::string* out);

// The whole text as code points (DecodeUtf8's policy); when `offsets` is
// given it receives the byte offset of each code point plus a final
// text.size() (offsets->size() == result.size() + 1).
std::u32string DecodeUtf8All(std::string_view text, std::vector<size_t>* offsets = nullptr);
std::string EncodeUtf8(std::u32string_view cps);

// [0-9a-fA-F]: a digit of the hex escapes of Python's re and json (\xhh,
// \uXXXX).
inline bool IsAsciiHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Character classes, per code point.
bool IsPySpace(char32_t c);    // str.isspace() == re's \s
bool IsPyWord(char32_t c);     // str.isalnum() or '_' == re's \w
bool IsPyDecimal(char32_t c);  // str.isdecimal() == re's \d (category Nd)
bool IsPyLowerChar(char32_t c);  // str.islower() of one character: Unicode Lowercase property
bool IsPyUpperChar(char32_t c);  // str.isupper() of one character: Unicode Uppercase property
bool IsPyTitleChar(char32_t c);  // category Lt
bool IsPyCased(char32_t c);
bool IsPyCaseIgnorable(char32_t c);

// The simple lower-case mapping (re's IGNORECASE uses it: U+0130 -> 'i').
char32_t SimpleLower(char32_t c);

// str.lower() of the whole text: full mapping (U+0130 -> "i\u0307") and the
// final-sigma rule for U+03A3.
std::string PyLower(std::string_view text);
// chr(c).lower(): no context, so U+03A3 -> U+03C3.
std::string PyLowerChar(char32_t c);

// str.isupper() / str.islower(): every cased character has that case and
// there is at least one cased character.
bool PyIsUpper(std::string_view text);
bool PyIsLower(std::string_view text);

// str.strip() (Unicode whitespace; `check` says what counts as a character,
// an invalid byte is never whitespace) and str.strip(chars) / lstrip / rstrip
// for an ASCII set of characters.
std::string_view PyStrip(std::string_view text, Utf8Check check = Utf8Check::kWellFormed);
std::string_view PyStripChars(std::string_view text, std::string_view ascii_chars);
std::string_view PyLStripChars(std::string_view text, std::string_view ascii_chars);
std::string_view PyRStripChars(std::string_view text, std::string_view ascii_chars);

// str.split() without arguments: runs of Unicode whitespace separate words;
// no empty words.
std::vector<std::string_view> PySplitWhitespace(std::string_view text);

// Python's re IGNORECASE equality of two code points for a str pattern
// (re/_compiler.py): equal simple lower-case mappings, or both in one of
// CPython's extra equivalence sets (i/ı, s/ſ, µ/μ, ι/ͅ/ι, β/ϐ, ε/ϵ, θ/ϑ, κ/ϰ,
// π/ϖ, ρ/ϱ, ς/σ, φ/ϕ, ṡ/ẛ, ﬅ/ﬆ, ΐ/ΐ, ΰ/ΰ).
char32_t PyIgnoreCaseKey(char32_t c);

}  // namespace evalrun::py

#endif  // EVALRUN_SCORERS_PY_UNICODE_H_
