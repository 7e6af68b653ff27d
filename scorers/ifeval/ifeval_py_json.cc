#include "scorers/ifeval/ifeval_py_json.h"

#include <cstddef>
#include <string_view>

#include "scorers/py_unicode.h"

// CPython 3.11 Modules/_json.c (the C scanner that json.loads uses).
namespace evalrun::ifeval {
namespace {

class PyJsonValidator {
 public:
  explicit PyJsonValidator(std::string_view s) : s_(s) {}

  bool Run() {
    SkipWs();
    if (!Value(0)) return false;
    SkipWs();
    return i_ == s_.size();
  }

 private:
  static constexpr int kMaxDepth = 1000;
  static constexpr size_t kMaxIntDigits = 4300;

  void SkipWs() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Lit(std::string_view word) {
    if (s_.substr(i_).starts_with(word)) {
      i_ += word.size();
      return true;
    }
    return false;
  }
  bool Digit(size_t k) const { return k < s_.size() && s_[k] >= '0' && s_[k] <= '9'; }

  bool Value(int depth) {
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '"':
        ++i_;
        return String();
      case '{':
        return depth < kMaxDepth && Object(depth + 1);
      case '[':
        return depth < kMaxDepth && Array(depth + 1);
      case 'n':
        return Lit("null");
      case 't':
        return Lit("true");
      case 'f':
        return Lit("false");
      case 'N':
        return Lit("NaN");
      case 'I':
        return Lit("Infinity");
      case '-':
        if (Lit("-Infinity")) return true;
        return Number();
      default:
        return Number();
    }
  }

  // _match_number_unicode.
  bool Number() {
    const size_t start = i_;
    size_t k = i_;
    if (s_[k] == '-') ++k;
    if (k < s_.size() && s_[k] >= '1' && s_[k] <= '9') {
      while (Digit(k)) ++k;
    } else if (k < s_.size() && s_[k] == '0') {
      ++k;
    } else {
      return false;
    }
    bool is_float = false;
    if (k < s_.size() && s_[k] == '.' && Digit(k + 1)) {
      is_float = true;
      k += 2;
      while (Digit(k)) ++k;
    }
    if (k + 1 < s_.size() && (s_[k] == 'e' || s_[k] == 'E')) {
      const size_t e_start = k;
      ++k;
      if (k + 1 < s_.size() && (s_[k] == '-' || s_[k] == '+')) ++k;
      while (Digit(k)) ++k;
      if (Digit(k - 1)) {
        is_float = true;
      } else {
        k = e_start;
      }
    }
    if (!is_float) {
      const size_t digits = k - start - (s_[start] == '-' ? 1 : 0);
      if (digits > kMaxIntDigits) return false;  // int(): "Exceeds the limit (4300 digits)"
    }
    i_ = k;
    return true;
  }

  // scanstring_unicode with strict=True; i_ is just past the opening quote.
  bool String() {
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;  // "Invalid control character"
      if (c != '\\') {
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return false;
      const char e = s_[i_];
      if (e == 'u') {
        for (int k = 1; k <= 4; ++k) {
          if (i_ + k >= s_.size() || !py::IsAsciiHexDigit(s_[i_ + k])) return false;
        }
        i_ += 5;
      } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                 e == 'r' || e == 't') {
        ++i_;
      } else {
        return false;  // "Invalid \\escape"
      }
    }
    return false;  // "Unterminated string"
  }

  bool Object(int depth) {
    ++i_;  // '{'
    SkipWs();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      if (i_ >= s_.size() || s_[i_] != '"') return false;
      ++i_;
      if (!String()) return false;
      SkipWs();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      SkipWs();
      if (!Value(depth)) return false;
      SkipWs();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return true;
      }
      if (i_ >= s_.size() || s_[i_] != ',') return false;
      ++i_;
      SkipWs();
    }
  }

  bool Array(int depth) {
    ++i_;  // '['
    SkipWs();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      if (!Value(depth)) return false;
      SkipWs();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return true;
      }
      if (i_ >= s_.size() || s_[i_] != ',') return false;
      ++i_;
      SkipWs();
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

bool IsPythonJson(std::string_view text) { return PyJsonValidator(text).Run(); }

}  // namespace evalrun::ifeval
