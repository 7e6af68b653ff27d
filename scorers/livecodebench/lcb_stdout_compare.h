// The official comparison of a stdin program's output with the expected
// output, in evalrun's own process (LiveCodeBench/LiveCodeBench @ 28fef95e,
// lcb_runner/evaluation/testing_util.py grade_stdio, get_stripped_lines,
// convert_line_to_decimals): both texts stripped and split on "\n", each line
// stripped (Python's str.strip: Unicode whitespace); the line counts must be
// equal; a line that differs still matches when every whitespace-separated
// field of both lines parses as a Python Decimal and the two lists are
// equal (numerically: 2.5 == 2.5000000000, -0 == 0). Decimal's syntax is
// Python's: an optional sign, digits with an optional point and exponent,
// Inf/Infinity/NaN/sNaN in any case, underscores ignored, Unicode decimal
// digits as their values. Comparing a signalling NaN raises in Python
// (InvalidOperation): the official then ends the whole grading with [-4];
// `raised` says so.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_STDOUT_COMPARE_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_STDOUT_COMPARE_H_

#include <optional>
#include <string>
#include <string_view>

namespace evalrun {

struct StdoutComparison {
  bool equal = false;
  bool raised = false;   // a signalling NaN was compared (InvalidOperation)
  std::string message;   // when !equal && !raised: the official wrong-answer message
};

// `got`, `expected`: UTF-8 text (an invalid byte is one character that is
// never whitespace nor a digit).
StdoutComparison CompareStdout(std::string_view got, std::string_view expected);

// Python's truncatefn on a str: the first and last 150 code points around
// "...(truncated) ..." when the text is longer than 300 code points.
std::string TruncateLikeOfficial(std::string_view text, size_t length = 300);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_STDOUT_COMPARE_H_
