// json.loads for IFEval's detectable_format:json_format checker
// (google-research instruction_following_eval instructions.py JsonFormat):
// whether a text is JSON as CPython reads it. Pure; thread-safe.
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_PY_JSON_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_PY_JSON_H_

#include <string_view>

namespace evalrun::ifeval {

// `json.loads(text)` succeeds (CPython 3.11 json with its C scanner): any
// value at top level, NaN/Infinity/-Infinity accepted, only " \t\n\r" as
// whitespace, no control characters inside strings, \u escapes of any value
// (lone surrogates too), integers of at most 4300 digits (int_max_str_digits).
// Nesting deeper than 1,000 levels is refused here; Python raises
// RecursionError (not a ValueError) about there, aborting its run.
bool IsPythonJson(std::string_view text);

}  // namespace evalrun::ifeval

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_PY_JSON_H_
