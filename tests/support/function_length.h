// Finds the function definitions in C++ source text and how many lines each
// spans, for the test that keeps every function in evals/, scorers/ and
// datasets/ to a screen (tests/engine/function_length_test.cc). Tests only.
//
// A brace matcher, not a parser: it skips comments, string and character
// literals (raw strings too), digit separators and preprocessor lines, and
// takes a `{` at namespace or class level as a function body when it follows
// a parameter list `)` (then only qualifiers such as const, override,
// noexcept, `-> type`, or a constructor's initializer list). Lambdas and
// local classes count inside the function that holds them; a namespace-level
// `auto f = [](...) {...};` counts as a function of its own. Braces inside
// parentheses at namespace level (default arguments) and initializers
// (`= {...}`, enum bodies) are not functions.
//
//   ScanResult r = ScanFunctions("void F() {\n  G();\n}\n");
//   // r.functions == {{"F", 1, 3}}, r.error == ""
//
// Pure functions of their input; safe from any thread.
#ifndef EVALRUN_TESTS_SUPPORT_FUNCTION_LENGTH_H_
#define EVALRUN_TESTS_SUPPORT_FUNCTION_LENGTH_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun::testing {

struct FunctionSpan {
  std::string name;  // as written before its `(`: "F", "Pool::Run", "operator()"; "" if none
  int first_line = 0;  // 1-based: the line of its first token (after any template <...>)
  int last_line = 0;   // the line of its closing `}`
  int lines() const { return last_line - first_line + 1; }
};

struct ScanResult {
  std::vector<FunctionSpan> functions;  // in source order of their closing brace
  // Empty, or what did not match: "line 12: `}` with no `{` open",
  // "unclosed `{` from line 3", "line 7: unterminated string".
  std::string error;
};

ScanResult ScanFunctions(std::string_view source);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FUNCTION_LENGTH_H_
