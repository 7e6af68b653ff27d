// Answer extraction shared by the multiple-choice parts: the first letter,
// and the primitives a benchmark's official chain is built from (each
// chain lives with its benchmark: scorers/<name>/).
//
// Thread-safe: patterns are compiled once (RE2 is linear-time on any model
// output). Every function returns the extracted letter, or 0 when none.
#ifndef EVALRUN_SCORERS_CHOICE_EXTRACT_H_
#define EVALRUN_SCORERS_CHOICE_EXTRACT_H_

#include <string>
#include <string_view>

namespace evalrun {

// Removes markdown emphasis: `**`, `__`, and single `*` / `_` used as
// emphasis markers, so "**B**" reads as "B".
std::string StripMarkdownEmphasis(std::string_view text);

// `first-letter` (the published method): the first standalone option letter
// of the answer (reasoning already removed by the client), after markdown
// emphasis is stripped. Only letters of existing options count (A .. A +
// num_options - 1). "Standalone" uses Python's Unicode word characters, so
// "Aé" is not a letter. The English one-letter words are not answers: "I"
// or "A" followed by a space and a lower-case word ("I think", "A good
// choice") or by an apostrophe ("I'm") is skipped.
char ExtractFirstLetter(std::string_view answer, int num_options);

// Whether the ASCII letter at byte i stands alone: no Python word
// character (IsPythonWordChar) right before or after it, as Python's
// r"\b[A-J]\b" asks.
bool StandsAlone(std::string_view text, size_t i);

// True when the code point is a word character of Python 3's `re` for str
// patterns (str.isalnum() or '_'): letters and numbers of every script.
// Asks RE2, whose tables are Unicode 15.0 (Python 3.12); py::IsPyWord
// (scorers/py_unicode.h) follows Python 3.11 (Unicode 14.0). The two differ
// only on the 4,388 code points that Unicode 15.0 assigned.
bool IsPythonWordChar(char32_t cp);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_CHOICE_EXTRACT_H_
