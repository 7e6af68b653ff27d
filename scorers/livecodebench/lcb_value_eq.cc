// PyEquals and PyStr (lcb_value.h): Python's == and str() on PyValues.
#include <cmath>
#include <cstdint>
#include <optional>

#include "scorers/livecodebench/lcb_value.h"

namespace evalrun {
namespace {

constexpr const char* kAmbiguous =
    "ValueError('The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()')";

bool IsNumber(const PyValue& v) {
  return v.kind == PyValue::kBool || v.kind == PyValue::kInt || v.kind == PyValue::kFloat;
}

// Doubles the decimal digits in `digits` (most significant first).
void TimesTwo(std::string* digits) {
  int carry = 0;
  for (size_t i = digits->size(); i-- > 0;) {
    int d = ((*digits)[i] - '0') * 2 + carry;
    (*digits)[i] = static_cast<char>('0' + d % 10);
    carry = d / 10;
  }
  if (carry) digits->insert(digits->begin(), static_cast<char>('0' + carry));
}

// The exact decimal text of an integral, finite double.
std::string IntegralDoubleText(double x) {
  if (std::fabs(x) < 9.0e15) return std::to_string(static_cast<int64_t>(x));
  int exponent = 0;
  double mantissa = std::frexp(std::fabs(x), &exponent);  // |x| = m * 2^e, 0.5 <= m < 1
  std::string digits = std::to_string(static_cast<int64_t>(std::ldexp(mantissa, 53)));
  for (int i = 0; i < exponent - 53; ++i) TimesTwo(&digits);
  return (x < 0 ? "-" : "") + digits;
}

std::string IntText(const PyValue& v) { return v.kind == PyValue::kBool ? (v.boolean ? "1" : "0") : v.int_text; }

// int and float compare exactly, as Python does.
bool NumbersEqual(const PyValue& a, const PyValue& b) {
  if (a.kind == PyValue::kFloat && b.kind == PyValue::kFloat) return a.number == b.number;
  if (a.kind == PyValue::kFloat || b.kind == PyValue::kFloat) {
    const double f = a.kind == PyValue::kFloat ? a.number : b.number;
    if (!std::isfinite(f) || std::floor(f) != f) return false;
    return IntegralDoubleText(f) == IntText(a.kind == PyValue::kFloat ? b : a);
  }
  return IntText(a) == IntText(b);
}

bool ScalarsEqual(const PyValue& a, const PyValue& b) {
  if (IsNumber(a) && IsNumber(b)) return NumbersEqual(a, b);
  if (a.kind == PyValue::kStr && b.kind == PyValue::kStr) return a.text == b.text;
  return a.kind == PyValue::kNone && b.kind == PyValue::kNone;
}

// An expected value as NumPy sees it: its shape and items, row-major; false
// when it is no rectangular array of numbers (NumPy's element-wise
// comparison fails: the result is a plain False).
bool AsArray(const PyValue& v, std::vector<size_t>* shape, std::vector<const PyValue*>* flat, size_t depth = 0) {
  if (v.kind != PyValue::kList) {
    if (!IsNumber(v) && v.kind != PyValue::kNone) return false;
    if (depth != shape->size()) return false;
    flat->push_back(&v);
    return true;
  }
  if (depth == shape->size()) shape->push_back(v.items.size());
  else if (depth > shape->size() || (*shape)[depth] != v.items.size()) return false;
  for (const PyValue& item : v.items)
    if (!AsArray(item, shape, flat, depth + 1)) return false;
  return !(v.items.empty() && depth + 1 < shape->size());
}

// Broadcasts two shapes as NumPy does; nullopt when they do not.
std::optional<std::vector<size_t>> Broadcast(const std::vector<size_t>& a, const std::vector<size_t>& b) {
  std::vector<size_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    size_t da = i < a.size() ? a[a.size() - 1 - i] : 1, db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

// The item of a `shape` array at the broadcast position `index` of `out`.
size_t BroadcastIndex(const std::vector<size_t>& shape, const std::vector<size_t>& out, size_t index) {
  size_t flat = 0, stride = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    size_t axis = out.size() - 1 - i, coord = index % out[axis];
    index /= out[axis];
    if (i < shape.size()) {
      size_t dim = shape[shape.size() - 1 - i];
      flat += (dim == 1 ? 0 : coord) * stride;
      stride *= dim;
    }
  }
  return flat;
}

// NumPy's element-wise == of an array (or NumPy scalar) with an expected
// value, and the truth of its result.
PyEquality ArrayEquals(const PyValue& got, const PyValue& expected) {
  PyEquality out;
  std::vector<size_t> got_shape = got.kind == PyValue::kArray ? got.shape : std::vector<size_t>{};
  std::vector<const PyValue*> got_items;
  if (got.kind == PyValue::kArray)
    for (const PyValue& item : got.items) got_items.push_back(&item);
  else
    got_items.push_back(&got);
  std::vector<size_t> want_shape;
  std::vector<const PyValue*> want_items;
  if (!AsArray(expected, &want_shape, &want_items)) return out;
  std::optional<std::vector<size_t>> shape = Broadcast(got_shape, want_shape);
  if (!shape) return out;
  size_t count = 1;
  for (size_t d : *shape) count *= d;
  if (count == 0) return out;
  auto element = [&](size_t i) {
    return ScalarsEqual(*got_items[BroadcastIndex(got_shape, *shape, i)],
                        *want_items[BroadcastIndex(want_shape, *shape, i)]);
  };
  out.has_first = true;
  out.first_truth = element(0);
  if (count > 1) {
    out.raised = true;
    out.error = kAmbiguous;
  } else {
    out.equal = out.first_truth;
  }
  return out;
}

PyEquality Truth(bool equal) {
  PyEquality e;
  e.equal = equal;
  return e;
}

// A raise from inside a container: nothing was appended before it.
PyEquality Raised(PyEquality e) {
  e.has_first = false;
  return e;
}

// Python's list == list and dict == dict: the first item that differs (or
// raises) decides.
PyEquality SequenceEquals(const PyValue& got, const PyValue& expected) {
  if (got.items.size() != expected.items.size()) return Truth(false);
  for (size_t i = 0; i < got.items.size(); ++i) {
    PyEquality e = PyEquals(got.items[i], expected.items[i]);
    if (e.raised) return Raised(e);
    if (!e.equal) return Truth(false);
  }
  return Truth(true);
}

PyEquality DictEquals(const PyValue& got, const PyValue& expected) {
  if (got.entries.size() != expected.entries.size()) return Truth(false);
  for (const auto& [key, value] : got.entries) {
    if (key.kind != PyValue::kStr) return Truth(false);  // expected keys are all strings
    const PyValue* match = nullptr;
    for (const auto& [k, v] : expected.entries)
      if (k.text == key.text) match = &v;
    if (!match) return Truth(false);
    PyEquality e = PyEquals(value, *match);
    if (e.raised) return Raised(e);
    if (!e.equal) return Truth(false);
  }
  return Truth(true);
}

}  // namespace

PyEquality PyEquals(const PyValue& got, const PyValue& expected) {
  if (got.kind == PyValue::kArray || (got.numpy && expected.kind == PyValue::kList)) {
    PyEquality e = ArrayEquals(got, expected);
    if (e.has_first && !e.raised) e.has_first = false;  // one element: its truth is the result's
    return e;
  }
  if (got.kind == PyValue::kList && expected.kind == PyValue::kList) return SequenceEquals(got, expected);
  if (got.kind == PyValue::kDict && expected.kind == PyValue::kDict) return DictEquals(got, expected);
  return Truth(ScalarsEqual(got, expected));
}

}  // namespace evalrun
