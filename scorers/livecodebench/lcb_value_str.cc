// PyStr (lcb_value.h): str() of a value, as Python prints it. Only for the
// failure's metadata (the official `expected` and `output` texts).
#include <charconv>
#include <cmath>
#include <cstdio>

#include "scorers/livecodebench/lcb_value.h"

namespace evalrun {
namespace {

// repr(float): the shortest digits that read back, fixed notation when the
// decimal point falls within 16 places, else d.ddde+XX.
std::string FloatRepr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto end = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific).ptr;
  std::string s(buf, end);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t e = s.find('e');
  int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, 1) + (e > 2 ? s.substr(2, e - 2) : "");
  int point = exponent + 1;  // digits before the decimal point
  std::string out;
  if (point > -4 && point <= 16) {
    if (point <= 0) out = "0." + std::string(-point, '0') + digits;
    else if (point >= static_cast<int>(digits.size())) out = digits + std::string(point - digits.size(), '0') + ".0";
    else out = digits.substr(0, point) + "." + digits.substr(point);
  } else {
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + exp;
  }
  return (negative ? "-" : "") + out;
}

std::string StrRepr(const std::string& s) {
  const bool double_quotes = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char quote = double_quotes ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

std::string Repr(const PyValue& v);

std::string Joined(const std::vector<PyValue>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Repr(items[i]);
  return out;
}

std::string Repr(const PyValue& v) {
  switch (v.kind) {
    case PyValue::kNone: return "None";
    case PyValue::kBool: return v.boolean ? "True" : "False";
    case PyValue::kInt: return v.int_text;
    case PyValue::kFloat: return FloatRepr(v.number);
    case PyValue::kStr: return StrRepr(v.text);
    case PyValue::kList: return "[" + Joined(v.items) + "]";
    case PyValue::kTuple: return "(" + Joined(v.items) + (v.items.size() == 1 ? ",)" : ")");
    case PyValue::kArray: return "array([" + Joined(v.items) + "])";
    case PyValue::kOther: return "<" + v.text + " object>";
    case PyValue::kDict: break;
  }
  std::string out = "{";
  for (size_t i = 0; i < v.entries.size(); ++i)
    out += (i ? ", " : "") + Repr(v.entries[i].first) + ": " + Repr(v.entries[i].second);
  return out + "}";
}

}  // namespace

std::string PyStr(const PyValue& v) { return v.kind == PyValue::kStr ? v.text : Repr(v); }

}  // namespace evalrun
