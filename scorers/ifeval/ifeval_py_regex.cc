#include "scorers/ifeval/ifeval_py_regex.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "scorers/py_unicode.h"

namespace evalrun::ifeval {
namespace {

constexpr std::string_view kPyRegexSpecials = "\\.^$*+?{}[]|()";

// Python \w, as an RE2 class body (see PyPattern::Compile on the residue).
constexpr char kPyWordBody[] = "\\p{L}\\p{N}_";

size_t NextCharStart(std::string_view text, size_t pos) {
  if (pos >= text.size()) return text.size() + 1;
  py::DecodeUtf8(text, &pos);
  return pos;
}

void AppendCodeEscape(uint32_t cp, std::string* out) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "\\x{%x}", cp);
  *out += buf;
}

// The Python space class without its brackets, for use inside [...].
std::string SpaceBody() {
  std::string s = kPySpace;
  return s.substr(1, s.size() - 2);
}

// Reads the escape after a backslash at py[*i] (py[*i] is the letter);
// handles the escapes that mean the same inside and outside a class.
// Returns false with *err set for escapes RE2 cannot express.
bool TranslateCommonEscape(std::string_view py, size_t* i, std::string* out, std::string* err) {
  const char e = py[*i];
  auto hex_escape = [&](int digits) {
    if (*i + digits >= py.size()) {
      *err = std::string("incomplete \\") + e + " escape";
      return false;
    }
    uint32_t v = 0;
    for (int k = 1; k <= digits; ++k) {
      const char h = py[*i + k];
      if (!py::IsAsciiHexDigit(h)) {
        *err = std::string("incomplete \\") + e + " escape";
        return false;
      }
      v = v * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    if (v > 0x10FFFF) {
      *err = "bad \\U escape";
      return false;
    }
    AppendCodeEscape(v, out);
    *i += digits;
    return true;
  };
  switch (e) {
    case 'n': AppendCodeEscape('\n', out); return true;
    case 't': AppendCodeEscape('\t', out); return true;
    case 'r': AppendCodeEscape('\r', out); return true;
    case 'f': AppendCodeEscape('\f', out); return true;
    case 'v': AppendCodeEscape('\v', out); return true;
    case 'a': AppendCodeEscape('\a', out); return true;
    case 'x': return hex_escape(2);
    case 'u': return hex_escape(4);
    case 'U': return hex_escape(8);
    case '0': {
      uint32_t v = 0;
      int k = 0;
      while (k < 2 && *i + 1 < py.size() && py[*i + 1] >= '0' && py[*i + 1] <= '7') {
        v = v * 8 + static_cast<uint32_t>(py[*i + 1] - '0');
        ++*i;
        ++k;
      }
      AppendCodeEscape(v, out);
      return true;
    }
    case 'd': *out += "\\p{Nd}"; return true;
    default: break;
  }
  const unsigned char uc = static_cast<unsigned char>(e);
  if (uc >= 0x80) {  // an escaped non-ASCII character is itself
    size_t pos = *i;
    const char32_t cp = py::DecodeUtf8(py, &pos);
    AppendCodeEscape(cp, out);
    *i = pos - 1;
    return true;
  }
  if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '1' && e <= '9')) {
    *err = std::string("\\") + e + " is not supported";
    return false;
  }
  // Escaped punctuation or space: the character itself.
  AppendCodeEscape(uc, out);
  return true;
}

}  // namespace

std::unique_ptr<const RE2> CompileFixed(const std::string& pattern) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<const RE2>(pattern, opts);
  if (!re->ok()) {
    std::fprintf(stderr, "evalrun: internal error: bad fixed pattern %s: %s\n", pattern.c_str(),
                 re->error().c_str());
    std::abort();
  }
  return re;
}

std::unique_ptr<const RE2> CompilePyFixed(std::string_view python_pattern, bool multiline) {
  std::string translated;
  const Status st = TranslatePyRegex(python_pattern, multiline, &translated);
  if (!st.ok()) {
    std::fprintf(stderr, "evalrun: internal error: %s\n", st.ToString().c_str());
    std::abort();
  }
  return CompileFixed((multiline ? "(?m)" : "") + translated);
}

std::vector<std::string_view> FindAll(const RE2& re, std::string_view text) {
  std::vector<std::string_view> found;
  size_t pos = 0;
  re2::StringPiece m;
  while (pos <= text.size() && re.Match(text, pos, text.size(), RE2::UNANCHORED, &m, 1)) {
    found.emplace_back(m.data(), m.size());
    const size_t end = static_cast<size_t>(m.data() - text.data()) + m.size();
    pos = m.empty() ? NextCharStart(text, end) : end;
  }
  return found;
}

int CountMatches(const RE2& re, std::string_view text) {
  int count = 0;
  size_t pos = 0;
  re2::StringPiece m;
  while (pos <= text.size() && re.Match(text, pos, text.size(), RE2::UNANCHORED, &m, 1)) {
    ++count;
    const size_t end = static_cast<size_t>(m.data() - text.data()) + m.size();
    pos = m.empty() ? NextCharStart(text, end) : end;
  }
  return count;
}

std::vector<std::string_view> SplitByRegex(const RE2& re, std::string_view text) {
  std::vector<std::string_view> pieces;
  size_t piece_start = 0;
  size_t pos = 0;
  re2::StringPiece m;
  while (pos <= text.size() && re.Match(text, pos, text.size(), RE2::UNANCHORED, &m, 1)) {
    const size_t begin = static_cast<size_t>(m.data() - text.data());
    const size_t end = begin + m.size();
    pieces.push_back(text.substr(piece_start, begin - piece_start));
    piece_start = end;
    pos = m.empty() ? NextCharStart(text, end) : end;
  }
  pieces.push_back(text.substr(piece_start));
  return pieces;
}

bool IsPyWordBoundary(std::string_view text, size_t pos) {
  const bool word_before = pos > 0 && py::IsPyWord(py::DecodeUtf8Before(text, pos).cp);
  const bool word_after = pos < text.size() && py::IsPyWord(py::DecodeUtf8At(text, pos).cp);
  return word_before != word_after;
}

namespace {

Status RegexError(std::string_view py, const std::string& what) {
  return Status::InvalidInput("regular expression \"" + std::string(py) + "\": " + what +
                              " (evalrun matches with RE2, which cannot express it)");
}

// py[*i] inside a character class: ']' ends it (*in_class false).
Status TranslateInClass(std::string_view py, size_t* i, bool* in_class, std::string* out) {
  std::string err;
  const char c = py[*i];
  if (c == ']') {
    *out += ']';
    *in_class = false;
  } else if (c == '\\') {
    if (++*i >= py.size()) return RegexError(py, "trailing backslash");
    const char e = py[*i];
    if (e == 's') {
      *out += SpaceBody();
    } else if (e == 'w') {
      *out += kPyWordBody;
    } else if (e == 'D') {
      *out += "\\P{Nd}";
    } else if (e == 'b') {
      AppendCodeEscape('\b', out);
    } else if (e == 'S' || e == 'W') {
      return RegexError(py, std::string("\\") + e + " inside a character class");
    } else if (!TranslateCommonEscape(py, i, out, &err)) {
      return RegexError(py, err);
    }
  } else if (c == '[') {
    *out += "\\[";
  } else {
    *out += c;
  }
  return Status::Ok();
}

// The escape whose backslash is py[*i], outside a character class.
Status TranslateEscape(std::string_view py, size_t* i, std::string* out) {
  std::string err;
  if (++*i >= py.size()) return RegexError(py, "trailing backslash");
  const char e = py[*i];
  if (e == 's') {
    *out += kPySpace;
  } else if (e == 'S') {
    *out += "[^" + SpaceBody() + "]";
  } else if (e == 'w') {
    *out += std::string("[") + kPyWordBody + "]";
  } else if (e == 'W') {
    *out += std::string("[^") + kPyWordBody + "]";
  } else if (e == 'D') {
    *out += "\\P{Nd}";
  } else if (e == 'A') {
    *out += "\\A";
  } else if (e == 'Z') {
    *out += "\\z";
  } else if (e == 'b' || e == 'B') {
    return RegexError(py, std::string("\\") + e + " (word boundary) inside a pattern");
  } else if (!TranslateCommonEscape(py, i, out, &err)) {
    return RegexError(py, err);
  }
  return Status::Ok();
}

// The '[' at py[*i] opens a class (with its '^' and a leading literal ']').
void OpenClass(std::string_view py, size_t* i, std::string* out) {
  *out += '[';
  if (*i + 1 < py.size() && py[*i + 1] == '^') {
    *out += '^';
    ++*i;
  }
  if (*i + 1 < py.size() && py[*i + 1] == ']') {  // a leading ']' is literal
    *out += "\\]";
    ++*i;
  }
}

// The '(' at py[*i]: a group, or an extension "(?...)" RE2 shares.
Status OpenGroup(std::string_view py, size_t* i, std::string* out) {
  if (*i + 1 >= py.size() || py[*i + 1] != '?') {
    *out += '(';
    return Status::Ok();
  }
  const std::string_view rest = py.substr(*i + 2);
  if (rest.starts_with(":")) {
    *out += "(?:";
    *i += 2;
  } else if (rest.starts_with("P<")) {
    *out += "(?P<";
    *i += 3;
  } else if (rest.starts_with("#")) {
    const size_t close = py.find(')', *i);
    if (close == std::string_view::npos) return RegexError(py, "unterminated comment");
    *i = close;
  } else {
    size_t k = 0;
    while (k < rest.size() && (rest[k] == 'i' || rest[k] == 'm' || rest[k] == 's')) ++k;
    if (k > 0 && k < rest.size() && (rest[k] == ')' || rest[k] == ':')) {
      *out += "(?";
      *out += rest.substr(0, k + 1);
      *i += 2 + k;
    } else {
      const size_t shown = (rest.starts_with("<") || rest.starts_with("P")) ? 2 : 1;
      return RegexError(py, "the group \"(?" + std::string(rest.substr(0, shown)) +
                                "\" (look-around, back-reference, conditional or flag)");
    }
  }
  return Status::Ok();
}

// The '{' at py[*i]: a quantifier {m}, {m,}, {,n}, {m,n}; anything else is
// a literal '{'.
void TranslateBrace(std::string_view py, size_t* i, std::string* out) {
  size_t k = *i + 1;
  std::string lo, hi;
  while (k < py.size() && py[k] >= '0' && py[k] <= '9') lo += py[k++];
  bool comma = false;
  if (k < py.size() && py[k] == ',') {
    comma = true;
    ++k;
    while (k < py.size() && py[k] >= '0' && py[k] <= '9') hi += py[k++];
  }
  if (k < py.size() && py[k] == '}' && (!lo.empty() || (comma && !hi.empty()))) {
    *out += "{" + (lo.empty() ? std::string("0") : lo) + (comma ? "," + hi : "") + "}";
    *i = k;
  } else {
    *out += "\\{";
  }
}

}  // namespace

Status TranslatePyRegex(std::string_view py, bool multiline, std::string* out) {
  out->clear();
  bool in_class = false;
  for (size_t i = 0; i < py.size(); ++i) {
    const char c = py[i];
    Status st;
    if (in_class) {
      st = TranslateInClass(py, &i, &in_class, out);
    } else if (c == '\\') {
      st = TranslateEscape(py, &i, out);
    } else if (c == '[') {
      OpenClass(py, &i, out);
      in_class = true;
    } else if (c == '(') {
      st = OpenGroup(py, &i, out);
    } else if (c == '$') {
      // Python's `$` also matches before a final "\n".
      *out += multiline ? "$" : "(?:\\n?\\z)";
    } else if (c == '{') {
      TranslateBrace(py, &i, out);
    } else if (c == '}') {
      *out += "\\}";
    } else {
      *out += c;
    }
    if (!st.ok()) return st;
  }
  if (in_class) return RegexError(py, "unterminated character set");
  return Status::Ok();
}

Status PyPattern::Compile(std::string_view python_pattern, bool ignore_case, bool multiline,
                          std::unique_ptr<const PyPattern>* out) {
  std::unique_ptr<PyPattern> p(new PyPattern());
  p->ignore_case_ = ignore_case;
  p->literal_ = python_pattern.find_first_of(kPyRegexSpecials) == std::string_view::npos;
  if (p->literal_) {
    p->keys_ = py::DecodeUtf8All(python_pattern);
    if (ignore_case) {
      for (char32_t& c : p->keys_) c = py::PyIgnoreCaseKey(c);
    }
  } else {
    std::string translated;
    EVALRUN_RETURN_IF_ERROR(TranslatePyRegex(python_pattern, multiline, &translated));
    std::string flags;
    if (ignore_case) flags += "(?i)";
    if (multiline) flags += "(?m)";
    RE2::Options opts;
    opts.set_log_errors(false);
    auto re = std::make_unique<const RE2>(flags + translated, opts);
    if (!re->ok()) {
      return Status::InvalidInput("regular expression \"" + std::string(python_pattern) +
                                  "\": RE2 rejects it: " + re->error());
    }
    p->re_ = std::move(re);
  }
  *out = std::move(p);
  return Status::Ok();
}

int PyPattern::LiteralMatchAt(std::string_view text, size_t pos) const {
  size_t p = pos;
  for (char32_t want : keys_) {
    if (p >= text.size()) return -1;
    char32_t c = py::DecodeUtf8(text, &p);
    if (ignore_case_) c = py::PyIgnoreCaseKey(c);
    if (c != want) return -1;
  }
  return static_cast<int>(p - pos);
}

bool PyPattern::Search(std::string_view text) const {
  if (!literal_) return RE2::PartialMatch(text, *re_);
  for (size_t pos = 0; pos <= text.size(); pos = NextCharStart(text, pos)) {
    if (LiteralMatchAt(text, pos) >= 0) return true;
  }
  return false;
}

int PyPattern::CountAll(std::string_view text) const {
  if (!literal_) return CountMatches(*re_, text);
  int count = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const int len = LiteralMatchAt(text, pos);
    if (len > 0) {
      ++count;
      pos += static_cast<size_t>(len);
    } else {
      if (len == 0) ++count;  // the empty pattern matches everywhere
      pos = NextCharStart(text, pos);
    }
  }
  return count;
}

bool PyPattern::SearchBetweenWordBoundaries(std::string_view text) const {
  if (literal_) {
    for (size_t pos = 0; pos <= text.size(); pos = NextCharStart(text, pos)) {
      if (!IsPyWordBoundary(text, pos)) continue;
      const int len = LiteralMatchAt(text, pos);
      if (len >= 0 && IsPyWordBoundary(text, pos + static_cast<size_t>(len))) return true;
    }
    return false;
  }
  size_t pos = 0;
  re2::StringPiece m;
  while (pos <= text.size() && re_->Match(text, pos, text.size(), RE2::UNANCHORED, &m, 1)) {
    const size_t begin = static_cast<size_t>(m.data() - text.data());
    if (IsPyWordBoundary(text, begin) && IsPyWordBoundary(text, begin + m.size())) return true;
    pos = NextCharStart(text, begin);
  }
  return false;
}

}  // namespace evalrun::ifeval
