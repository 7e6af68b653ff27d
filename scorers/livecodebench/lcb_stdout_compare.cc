#include "scorers/livecodebench/lcb_stdout_compare.h"

#include <cstdint>
#include <vector>

#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

using namespace py;  // NOLINT: the Python-exact text helpers

// A parsed Python Decimal: value = (sign ? -1 : 1) * digits * 10^exponent.
struct PyDecimal {
  enum Kind { kFinite, kInfinity, kQuietNan, kSignallingNan } kind = kFinite;
  bool negative = false;
  std::string digits;  // no leading or trailing zeros; "" for zero
  int64_t exponent = 0;
};

constexpr int64_t kMaxExponent = 999999999999999999;  // libmpdec's MPD_MAX_EMAX on 64-bit

// The value of a Unicode decimal digit: its place in its run of ten.
int DigitValue(char32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  int back = 0;
  while (back < 40 && IsPyDecimal(c - back - 1)) ++back;
  return back % 10;
}

// The field as ASCII the way Python's Decimal reads a str: underscores
// dropped, Unicode digits as their values; false for any other non-ASCII.
bool AsAscii(std::string_view field, std::string* out) {
  for (size_t pos = 0; pos < field.size();) {
    Utf8Char ch = DecodeUtf8At(field, pos);
    pos += ch.len;
    if (!ch.valid) return false;
    if (ch.cp == '_') continue;
    if (ch.cp < 128) out->push_back(static_cast<char>(ch.cp));
    else if (IsPyDecimal(ch.cp)) out->push_back(static_cast<char>('0' + DigitValue(ch.cp)));
    else return false;
  }
  return true;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

bool AllDigits(std::string_view s) {
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool ParseSpecial(std::string_view s, PyDecimal* d) {
  if (IEquals(s, "inf") || IEquals(s, "infinity")) {
    d->kind = PyDecimal::kInfinity;
    return true;
  }
  for (auto [prefix, kind] : {std::pair{std::string_view("nan"), PyDecimal::kQuietNan},
                              std::pair{std::string_view("snan"), PyDecimal::kSignallingNan}}) {
    if (s.size() >= prefix.size() && IEquals(s.substr(0, prefix.size()), prefix) &&
        AllDigits(s.substr(prefix.size()))) {
      d->kind = kind;
      return true;
    }
  }
  return false;
}

bool ParseExponent(std::string_view s, int64_t* exponent) {
  bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty() || !AllDigits(s)) return false;
  size_t first = s.find_first_not_of('0');
  if (first == std::string_view::npos) return *exponent = 0, true;
  s.remove_prefix(first);
  if (s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  if (v > kMaxExponent) return false;
  *exponent = negative ? -v : v;
  return true;
}

bool ParseFinite(std::string_view s, PyDecimal* d) {
  size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  int64_t exponent = 0;
  if (e != std::string_view::npos && !ParseExponent(s.substr(e + 1), &exponent)) return false;
  size_t point = mantissa.find('.');
  std::string_view whole = mantissa.substr(0, point);
  std::string_view fraction = point == std::string_view::npos ? "" : mantissa.substr(point + 1);
  if ((whole.empty() && fraction.empty()) || !AllDigits(whole) || !AllDigits(fraction)) return false;
  std::string digits = std::string(whole) + std::string(fraction);
  exponent -= static_cast<int64_t>(fraction.size());
  size_t lead = digits.find_first_not_of('0');
  digits.erase(0, lead == std::string::npos ? digits.size() : lead);
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  d->digits = std::move(digits);
  d->exponent = d->digits.empty() ? 0 : exponent;
  return true;
}

bool ParseDecimal(std::string_view field, PyDecimal* d) {
  std::string s;
  if (!AsAscii(field, &s) || s.empty()) return false;
  std::string_view v(s);
  if (v[0] == '+' || v[0] == '-') {
    d->negative = v[0] == '-';
    v.remove_prefix(1);
  }
  return ParseSpecial(v, d) || ParseFinite(v, d);
}

bool ParseDecimals(std::string_view line, std::vector<PyDecimal>* out) {
  for (std::string_view field : PySplitWhitespace(line)) {
    PyDecimal d;
    if (!ParseDecimal(field, &d)) return false;
    out->push_back(std::move(d));
  }
  return true;
}

enum class Eq { kEqual, kUnequal, kRaises };

Eq DecimalEq(const PyDecimal& a, const PyDecimal& b) {
  if (a.kind == PyDecimal::kSignallingNan || b.kind == PyDecimal::kSignallingNan) return Eq::kRaises;
  if (a.kind == PyDecimal::kQuietNan || b.kind == PyDecimal::kQuietNan || a.kind != b.kind) return Eq::kUnequal;
  if (a.kind == PyDecimal::kInfinity) return a.negative == b.negative ? Eq::kEqual : Eq::kUnequal;
  if (a.digits.empty() && b.digits.empty()) return Eq::kEqual;
  return a.negative == b.negative && a.digits == b.digits && a.exponent == b.exponent ? Eq::kEqual : Eq::kUnequal;
}

// Python's list == on two lists of Decimals: unequal lengths are unequal
// at once; else item by item up to the first that differs.
Eq DecimalListsEq(const std::vector<PyDecimal>& a, const std::vector<PyDecimal>& b) {
  if (a.size() != b.size()) return Eq::kUnequal;
  for (size_t i = 0; i < a.size(); ++i)
    if (Eq e = DecimalEq(a[i], b[i]); e != Eq::kEqual) return e;
  return Eq::kEqual;
}

std::vector<std::string_view> StrippedLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::string_view rest = py::PyStrip(text);
  for (;;) {
    size_t nl = rest.find('\n');
    lines.push_back(PyStrip(rest.substr(0, nl)));
    if (nl == std::string_view::npos) return lines;
    rest.remove_prefix(nl + 1);
  }
}

}  // namespace

std::string TruncateLikeOfficial(std::string_view text, size_t length) {
  std::vector<size_t> offsets;
  std::u32string cps = py::DecodeUtf8All(text, &offsets);
  if (cps.size() <= length) return std::string(text);
  const size_t half = length / 2;
  return std::string(text.substr(0, offsets[half])) + "...(truncated) ..." +
         std::string(text.substr(offsets[cps.size() - half]));
}

StdoutComparison CompareStdout(std::string_view got, std::string_view expected) {
  StdoutComparison out;
  const std::vector<std::string_view> g = StrippedLines(got), w = StrippedLines(expected);
  if (g.size() != w.size()) {
    out.message = "Wrong answer: mismatched output length";
    return out;
  }
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] == w[i]) continue;
    std::vector<PyDecimal> dg, dw;
    Eq eq = ParseDecimals(g[i], &dg) && ParseDecimals(w[i], &dw) ? DecimalListsEq(dg, dw) : Eq::kUnequal;
    if (eq == Eq::kEqual) continue;
    out.raised = eq == Eq::kRaises;
    if (!out.raised)
      out.message = "Wrong answer at output_line_idx=" + std::to_string(i) + ": " + TruncateLikeOfficial(g[i]) +
                    " != " + TruncateLikeOfficial(w[i]);
    return out;
  }
  out.equal = true;
  return out;
}

}  // namespace evalrun
