// Python values for the official comparison of a LeetCode method's result
// with the expected output, in evalrun's own process
// (LiveCodeBench/LiveCodeBench @ 28fef95e, lcb_runner/evaluation/
// testing_util.py grade_call_based: a top-level tuple becomes a list, then
// `prediction == json.loads(expected)`, then `if not tmp_result`).
//
// The result comes from the sandbox as a typed value (scorers/livecodebench/lcb_harness.py
// says the encoding); the expected output is parsed here from its JSON text
// (integers of any size kept exactly). Equality follows Python's `==` on
// these types: bool, int and float compare as numbers, exactly (True == 1,
// 2 == 2.0, 2**53 + 1 != 2.0**53); NaN equals nothing; str by code points;
// list with list of the same length item by item; a tuple never equals a
// list; dict with dict of the same keys and equal values; NumPy scalars as
// their numbers, except against a list, where NumPy compares element-wise
// as for an ndarray: the shapes broadcast (else unequal), and the truth of
// the result is that of its one element, False when empty, and with more
// than one a ValueError (the official appends that array's first element
// before it fails: `first_truth`). Anything else the program returned (a
// set, an object with its own __eq__) never equals an expected value: the
// official would ask the object itself, which the program wrote.
//
// Thread-safety: values are plain data; functions are pure.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_VALUE_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_VALUE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "evals/base/status.h"

namespace evalrun {

struct PyValue {
  enum Kind { kNone, kBool, kInt, kFloat, kStr, kList, kTuple, kDict, kArray, kOther } kind = kNone;
  bool numpy = false;     // a NumPy scalar (np.int64, np.float64, np.bool_)
  bool boolean = false;
  std::string int_text;   // kInt: decimal, "-" first when negative, no leading zeros ("0")
  double number = 0;      // kFloat
  std::string text;       // kStr (UTF-8); kOther: the type's name
  std::vector<PyValue> items;  // kList, kTuple; kArray: flat, row-major
  std::vector<std::pair<PyValue, PyValue>> entries;  // kDict
  std::vector<size_t> shape;   // kArray
};

// json.loads of an expected output (or of an input line, to check it).
// InvalidInput when it is not JSON.
Status ParseExpectedValue(std::string_view json_text, PyValue* out);

// A typed value from the harness. InvalidInput when malformed.
Status DecodeTypedValue(const nlohmann::json& typed, PyValue* out);

// The official's prediction: a top-level tuple as a list; `deep`: every
// tuple at every depth (the `fixed` profile).
PyValue TuplesAsLists(PyValue v, bool deep);

struct PyEquality {
  bool equal = false;
  bool raised = false;       // ValueError: the truth of an array of several elements
  bool has_first = false;    // the comparison made an array: its first element's truth
  bool first_truth = false;
  std::string error;         // when raised: repr of the exception
};

// `got == expected` and its truth, as the official evaluates it.
PyEquality PyEquals(const PyValue& got, const PyValue& expected);

// str() of a value as Python prints it (the official metadata's `expected`).
std::string PyStr(const PyValue& v);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_VALUE_H_
