// Python's `re` for IFEval's checkers (google-research
// instruction_following_eval instructions.py), on RE2. Python's `re` on a
// str pattern has Unicode \s, \d, \w and \b, while RE2's are ASCII. Fixed
// patterns therefore spell the classes out (kPySpace, kPyDecimal below); the
// few places that need \w or \b test characters with py_unicode.h instead of
// asking RE2.
//
// Strings that upstream pastes into a pattern unescaped (keywords, forbidden
// words, the section splitter, a non-standard postscript marker) go through
// PyPattern: a plain string (no character of `\.^$*+?{}[]|()`) is matched
// literally with Python's exact IGNORECASE rules; anything else is translated
// to RE2 (\s \d \w mapped to Unicode classes) and refused, with a message,
// where RE2 cannot express it (look-around, back-references, \b inside the
// pattern...). See PyPattern::Compile for the small differences that remain.
//
// Everything here is thread-safe: compiled objects are immutable.
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_PY_REGEX_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_PY_REGEX_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "evals/base/status.h"

namespace evalrun::ifeval {

// RE2 classes equal to Python's str-pattern `\s` and `\d` (Unicode).
inline constexpr char kPySpace[] =
    "[\\t-\\r\\x{1c}-\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}"
    "\\x{202f}\\x{205f}\\x{3000}]";
inline constexpr char kPyDecimal[] = "\\p{Nd}";

// Compiles a fixed pattern written for RE2 (UTF-8, log_errors off). Aborts on
// a syntax error: fixed patterns are part of the program.
std::unique_ptr<const RE2> CompileFixed(const std::string& pattern);

// One of upstream's own (constant) Python patterns, translated with
// TranslatePyRegex and compiled, with re.MULTILINE when `multiline`. Aborts
// if the translation fails: constant patterns are part of the program.
std::unique_ptr<const RE2> CompilePyFixed(std::string_view python_pattern, bool multiline);

// len(re.findall(p, text)): non-overlapping matches, left to right.
int CountMatches(const RE2& re, std::string_view text);
// The whole matches of re.findall(p, text) (group 0).
std::vector<std::string_view> FindAll(const RE2& re, std::string_view text);
// re.split(p, text) for a pattern without capture groups.
std::vector<std::string_view> SplitByRegex(const RE2& re, std::string_view text);
// Python's \b at byte offset `pos` (a code point boundary) of `text`.
bool IsPyWordBoundary(std::string_view text, size_t pos);

// A string that upstream uses as a Python regular expression.
class PyPattern {
 public:
  // `python_pattern` as Python's re would read it, with re.IGNORECASE when
  // `ignore_case` and re.MULTILINE when `multiline`. Fails (InvalidInput,
  // naming the construct) when RE2 cannot express it. Residual differences
  // for non-literal patterns: \w/\W use Unicode L/N classes (Python adds a
  // handful of numeric symbols), `$` without MULTILINE consumes the optional
  // final "\n", IGNORECASE uses RE2's case folding (Python also equates
  // i/ı/İ), and findall resumes one character after an empty match.
  static Status Compile(std::string_view python_pattern, bool ignore_case, bool multiline,
                        std::unique_ptr<const PyPattern>* out);

  bool is_literal() const { return literal_; }
  // re.search(p, text) is not None.
  bool Search(std::string_view text) const;
  // len(re.findall(p, text)).
  int CountAll(std::string_view text) const;
  // The number of capture groups (re.split adds them to its result).
  int CaptureGroups() const { return re_ ? re_->NumberOfCapturingGroups() : 0; }
  // re.search(r"\b" + p + r"\b", text) is not None (ForbiddenWords).
  bool SearchBetweenWordBoundaries(std::string_view text) const;

 private:
  PyPattern() = default;
  // Byte length of a literal match at text[pos], or -1.
  int LiteralMatchAt(std::string_view text, size_t pos) const;

  bool literal_ = false;
  bool ignore_case_ = false;
  std::u32string keys_;             // literal: code points (IGNORECASE keys when ignore_case_)
  std::unique_ptr<const RE2> re_;   // otherwise
};

// Translates a Python `re` pattern to RE2 syntax (without flags); exposed for
// tests. Returns InvalidInput naming the first construct RE2 cannot express.
Status TranslatePyRegex(std::string_view python_pattern, bool multiline, std::string* re2_pattern);

}  // namespace evalrun::ifeval

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_PY_REGEX_H_
