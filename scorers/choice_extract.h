// Answer extraction for multiple-choice parts (MMLU-Pro, GPQA).
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

// `official`: TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py, exactly: the text
// is first cleaned with response.replace('**', ''), then
//   1. re.search(r"answer is \(?([A-J])\)?")
//   2. re.search(r'.*[aA]nswer:\s*([A-J])')
//   3. the last standalone [A-J] (r"\b[A-J]\b(?!.*\b[A-J]\b)", re.DOTALL),
// with Python's Unicode \s and \b semantics. No random guess afterwards.
char ExtractOfficialMmluPro(std::string_view response);

// The same chain without the '**' clean-up (the scripts before it was added,
// which produced some of the published predictions).
char ExtractOfficialMmluProNoCleanup(std::string_view response);

// TIGER-AI-Lab/MMLU-Pro run_gpt4o.py / run_deepseek.py, which produced the
// published gpt4o and deepseek predictions: only
// re.search(r"answer is \(?([ABCDEFGHIJ])\)?") on the raw response, no
// clean-up and no fallback.
char ExtractMmluProAnswerIsOnly(std::string_view response);

// True when the code point is a word character of Python 3's `re` for str
// patterns (str.isalnum() or '_'): letters and numbers of every script.
// Asks RE2, whose tables are Unicode 15.0 (Python 3.12); py::IsPyWord
// (scorers/py_unicode.h) follows Python 3.11 (Unicode 14.0). The two differ
// only on the 4,388 code points that Unicode 15.0 assigned.
bool IsPythonWordChar(char32_t cp);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_CHOICE_EXTRACT_H_
