// Answer extraction and matching that any benchmark may use (a task file's
// `answer`, evals/tasks/task_file.h, or a C++ part): a regex chain with
// Python's findall semantics, numbers (after a marker, the last one, or the
// last \boxed{}), and exact strings normalised as asked; plus the registry
// of named letter chains ("first-letter" here, a benchmark's official chain
// from its own scorers/<name>/ folder).
//
// Patterns are RE2 (linear-time on any model output). Where they differ from
// Python's `re`: `$` matches only at the very end of the text (Python's also
// before a final newline), and \d \s \w are ASCII. Extracted answers are
// stripped, so a trailing newline never reaches a `$`.
//
// Thread-safety: extraction is pure; the chain registry is written during
// static initialisation and read after it from any thread.
#ifndef EVALRUN_SCORERS_ANSWER_EXTRACT_H_
#define EVALRUN_SCORERS_ANSWER_EXTRACT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace evalrun {

// One step of a regex chain: lm-evaluation-harness's RegexFilter
// (lm_eval/filters/extraction.py): re.findall over the text, the match at
// `group_select` (Python indexing: -1 the last), of a match with several
// groups the first non-empty one, stripped.
struct RegexStep {
  std::string pattern;
  int group_select = 0;
  std::shared_ptr<const re2::RE2> re;
};

// Compiles `pattern`; false with *error set (RE2's words) when it does not.
bool CompileRegexStep(const std::string& pattern, int group_select, RegexStep* out, std::string* error);

// The first step that finds a match gives the answer; nullopt when none does.
std::optional<std::string> RunRegexChain(const std::vector<RegexStep>& chain, std::string_view text);

// re.sub(pattern, "", text) for a compiled step's pattern.
std::string RemoveAll(const RegexStep& step, std::string_view text);

// Where a number is read from an answer.
enum class NumberFrom {
  kMarker,  // the first number after the last occurrence of a marker ("####")
  kLast,    // the last number in the text
  kBoxed,   // the last \boxed{...}'s contents
};

// The number's text as written ("-1,234.50" -> "-1234.50": commas, '$' and
// a trailing '.' dropped), or nullopt.
std::optional<std::string> ExtractNumber(std::string_view text, NumberFrom from, const std::string& marker);

// Whether two number texts are equal: as integers when both are, else as
// decimals within `tolerance` (absolute). Text that is not a number: false.
bool NumbersMatch(const std::string& answer, const std::string& gold, double tolerance);

// How an exact string is normalised before it is compared: the regexes
// removed first (in order, re.sub), then lower case, then ASCII punctuation
// (Python's string.punctuation) removed, then runs of whitespace made one
// space and the ends trimmed.
struct Normalisation {
  std::vector<RegexStep> remove;
  bool ignore_case = false;
  bool ignore_punctuation = false;
  bool collapse_whitespace = false;
};
std::string Normalise(const Normalisation& n, std::string_view text);

// A named letter chain: the option letter read from an answer (0: none),
// given the number of options. Registered by name from the file that owns
// it; looked up by task files.
using LetterChain = std::function<char(std::string_view answer, int num_options)>;
class LetterChainRegistrar {
 public:
  LetterChainRegistrar(std::string name, LetterChain chain);
};
const LetterChain* FindLetterChain(const std::string& name);
std::vector<std::string> LetterChainNames();

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_ANSWER_EXTRACT_H_
