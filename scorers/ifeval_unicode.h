// Python 3 `str` semantics on UTF-8 text, as IFEval's official checker needs
// them (google-research instruction_following_eval/instructions.py calls
// str.lower(), str.isupper(), str.islower(), str.strip(), str.split() and
// matches re's \w, \s, \d and IGNORECASE on responses in any language).
//
// The character tables are generated from CPython 3.11.2's unicodedata
// (Unicode 14.0.0) and cover every code point, not just Latin/Greek/Cyrillic:
// see ifeval_unicode_tables.inc. Known limits, all deliberate:
//  - Invalid UTF-8 (which a Python str cannot hold) decodes one byte at a time
//    as U+FFFD, which is uncased, not a word character and not whitespace.
//  - Tables follow Unicode 14.0; a checker run under another Python may differ
//    for characters assigned later.
//
// All functions are pure and thread-safe.
#ifndef EVALRUN_SCORERS_IFEVAL_UNICODE_H_
#define EVALRUN_SCORERS_IFEVAL_UNICODE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun::ifeval {

// Decodes the code point starting at text[*pos] and advances *pos past it.
// Precondition: *pos < text.size(). Invalid bytes give U+FFFD, one byte each.
char32_t DecodeUtf8(std::string_view text, size_t* pos);
void AppendUtf8(char32_t cp, std::string* out);

// The whole text as code points; when `offsets` is given it receives the byte
// offset of each code point plus a final text.size() (offsets->size() ==
// result.size() + 1).
std::u32string DecodeUtf8All(std::string_view text, std::vector<size_t>* offsets = nullptr);
std::string EncodeUtf8(std::u32string_view cps);

// Character classes, per code point.
bool IsPySpace(char32_t c);    // str.isspace() == re's \s
bool IsPyWord(char32_t c);     // str.isalnum() or '_' == re's \w
bool IsPyDecimal(char32_t c);  // str.isdecimal() == re's \d
bool IsPyLowerChar(char32_t c);  // Unicode Lowercase property
bool IsPyUpperChar(char32_t c);  // Unicode Uppercase property
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

// str.strip() (Unicode whitespace) and str.strip(chars) / lstrip / rstrip for
// an ASCII set of characters.
std::string_view PyStrip(std::string_view text);
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

}  // namespace evalrun::ifeval

#endif  // EVALRUN_SCORERS_IFEVAL_UNICODE_H_
