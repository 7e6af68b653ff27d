#include "tests/support/function_length.h"

#include <cctype>
#include <cstddef>
#include <set>
#include <string>
#include <utility>

namespace evalrun::testing {
namespace {

struct Token {
  std::string text;
  int line = 0;
};

// What a `{` opened. Function definitions are looked for only directly
// inside a namespace or a class (or at file level).
enum class Scope { kNamespace, kClass, kBody, kOther };

struct Frame {
  Scope scope = Scope::kOther;
  FunctionSpan span;                   // kBody: the function it opened
  std::vector<Token> statement;        // kClass: the statement it interrupted
  int statement_parens = 0;            // kClass: and its open parentheses
};

bool IsIdentifierStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentifier(const std::string& t) { return !t.empty() && IsIdentifierStart(t[0]); }

// Words that may stand between a parameter list's `)` and the body's `{`.
bool IsQualifier(const std::string& t) {
  static const std::set<std::string> kWords = {"const",    "volatile", "override", "final",
                                               "noexcept", "mutable",  "&",        "&&",
                                               "throw",    "constexpr"};
  return kWords.count(t) > 0;
}

// Identifiers whose `(...)` is not a parameter list.
bool IsNotParameterList(const std::string& t) {
  static const std::set<std::string> kWords = {"decltype", "noexcept", "alignas",  "__attribute__",
                                               "throw",    "sizeof",   "alignof",  "requires",
                                               "__declspec"};
  return kWords.count(t) > 0;
}

// The index of the first token after a leading `template <...>` (repeated)
// and access specifiers (`public:`).
size_t SkipPreamble(const std::vector<Token>& s) {
  size_t i = 0;
  for (bool moved = true; moved && i < s.size();) {
    moved = false;
    if ((s[i].text == "public" || s[i].text == "private" || s[i].text == "protected") &&
        i + 1 < s.size() && s[i + 1].text == ":") {
      i += 2;
      moved = true;
    } else if (s[i].text == "template" && i + 1 < s.size() && s[i + 1].text == "<") {
      int depth = 0;
      size_t j = i + 1;
      for (; j < s.size(); ++j) {
        if (s[j].text == "<") ++depth;
        if (s[j].text == ">" && --depth == 0) break;
      }
      i = j + 1;
      moved = true;
    }
  }
  return i;
}

// Indexes of the top-level `(` and their matching `)` in s[from, to).
std::vector<std::pair<size_t, size_t>> TopLevelGroups(const std::vector<Token>& s, size_t from,
                                                      size_t to) {
  std::vector<std::pair<size_t, size_t>> groups;
  int depth = 0;
  size_t open = 0;
  for (size_t i = from; i < to; ++i) {
    if (s[i].text == "(" && depth++ == 0) open = i;
    if (s[i].text == ")" && depth > 0 && --depth == 0) groups.emplace_back(open, i);
  }
  return groups;
}

// A constructor's initializer list: the index of its `:` (top level, after
// a parameter list and its qualifiers), or 0 when there is none.
size_t InitializerColon(const std::vector<Token>& s, size_t from) {
  int depth = 0;
  bool after_parameters = false;
  for (size_t i = from; i < s.size(); ++i) {
    const std::string& t = s[i].text;
    if (t == "(") ++depth;
    if (t == ")" && depth > 0 && --depth == 0) {
      after_parameters = true;
      continue;
    }
    if (depth > 0) continue;
    if (t == ":" && after_parameters) return i;
    if (!IsQualifier(t)) after_parameters = false;
  }
  return 0;
}

// Whether the tokens after a parameter list's `)` may precede a body.
bool IsFunctionTail(const std::vector<Token>& s, size_t from) {
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i].text == "->" || s[i].text == "requires") return true;
    if (!IsQualifier(s[i].text)) return false;
  }
  return true;
}

// The name written before the parameter list that opens at `open`.
// (`A::B::F`, `A::operator()`, `~A`).
std::string FunctionName(const std::vector<Token>& s, size_t open) {
  std::string name;
  for (size_t back = 1; back <= 3 && back <= open; ++back) {
    if (s[open - back].text != "operator") continue;
    name = "operator";
    for (size_t i = open - back + 1; i < open; ++i) {
      if (IsIdentifier(s[i].text)) name += " ";
      name += s[i].text;
    }
    open -= back;
    break;
  }
  for (size_t i = open; i > 0; --i) {
    const std::string& t = s[i - 1].text;
    bool part = IsIdentifier(t) ? (name.empty() || name.rfind("::", 0) == 0 || name[0] == '~')
                                : (t == "::" || t == "~") && !name.empty();
    if (!part || IsNotParameterList(t)) break;
    name = t + name;
  }
  return name;
}

// The parameter list of a body that opens after s[from, to): the last
// top-level group there that is not decltype(...), noexcept(...) and the like.
size_t ParameterListOpen(const std::vector<Token>& s, size_t from, size_t to) {
  auto groups = TopLevelGroups(s, from, to);
  for (size_t g = groups.size(); g > 0; --g) {
    size_t open = groups[g - 1].first;
    if (open == 0 || !IsNotParameterList(s[open - 1].text)) return open;
  }
  return groups.empty() ? to : groups.front().first;
}

class Scanner {
 public:
  explicit Scanner(std::string_view src) : src_(src) {}

  ScanResult Run() {
    while (pos_ < src_.size() && result_.error.empty()) Step();
    if (result_.error.empty() && !stack_.empty()) {
      int from = stack_.back().scope == Scope::kBody ? stack_.back().span.first_line : 0;
      result_.error = "unclosed `{`" + (from > 0 ? " from line " + std::to_string(from) : "");
    }
    return std::move(result_);
  }

 private:
  char At(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }

  void Fail(const std::string& what) {
    if (result_.error.empty()) result_.error = "line " + std::to_string(line_) + ": " + what;
  }

  void Step() {
    char c = src_[pos_];
    if (c == '\n') {
      ++line_;
      ++pos_;
      line_start_ = true;
      return;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
      return;
    }
    bool at_line_start = line_start_;
    line_start_ = false;
    if (c == '#' && at_line_start) return SkipDirective();
    if (c == '/' && At(pos_ + 1) == '/') return SkipLineComment();
    if (c == '/' && At(pos_ + 1) == '*') return SkipBlockComment();
    if (c == '"') return SkipQuoted('"');
    if (c == '\'') return SkipQuoted('\'');
    if (IsIdentifierStart(c)) return ReadIdentifier();
    if (std::isdigit(static_cast<unsigned char>(c))) return ReadNumber();
    ReadPunctuation();
  }

  void SkipDirective() {
    while (pos_ < src_.size() && src_[pos_] != '\n') {
      if (src_[pos_] == '\\' && At(pos_ + 1) == '\n') {
        pos_ += 2;
        ++line_;
      } else if (src_[pos_] == '/' && At(pos_ + 1) == '*') {
        SkipBlockComment();
      } else if (src_[pos_] == '/' && At(pos_ + 1) == '/') {
        SkipLineComment();
      } else {
        ++pos_;
      }
    }
  }

  void SkipLineComment() {
    while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
  }

  void SkipBlockComment() {
    size_t end = src_.find("*/", pos_ + 2);
    if (end == std::string_view::npos) return Fail("unterminated comment");
    CountLines(pos_, end + 2);
    pos_ = end + 2;
  }

  void CountLines(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) line_ += src_[i] == '\n';
  }

  // A string or character literal from its opening quote; a literal is one
  // token ("" or '').
  void SkipQuoted(char quote) {
    size_t i = pos_ + 1;
    while (i < src_.size() && src_[i] != quote && src_[i] != '\n') i += src_[i] == '\\' ? 2 : 1;
    if (i >= src_.size() || src_[i] != quote) return Fail("unterminated literal");
    pos_ = i + 1;
    OnToken(std::string(2, quote));
  }

  // R"delim( ... )delim", from its opening quote.
  void SkipRawString() {
    size_t paren = src_.find('(', pos_);
    if (paren == std::string_view::npos) return Fail("bad raw string");
    std::string close = ")" + std::string(src_.substr(pos_ + 1, paren - pos_ - 1)) + "\"";
    size_t end = src_.find(close, paren);
    if (end == std::string_view::npos) return Fail("unterminated raw string");
    CountLines(pos_, end + close.size());
    pos_ = end + close.size();
    OnToken("\"\"");
  }

  void ReadIdentifier() {
    size_t start = pos_;
    while (pos_ < src_.size() && IsIdentifierChar(src_[pos_])) ++pos_;
    std::string word(src_.substr(start, pos_ - start));
    char next = At(pos_);
    bool raw = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
    if (raw && next == '"') return SkipRawString();
    bool prefix = word == "u8" || word == "u" || word == "U" || word == "L";
    if (prefix && (next == '"' || next == '\'')) return;  // the literal follows
    OnToken(word);
  }

  // 1'000'000, 0x1p-3, 1.5e+3f: digits, letters, dots and separators.
  void ReadNumber() {
    size_t start = pos_;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      bool sign = (c == '+' || c == '-') && std::string("eEpP").find(At(pos_ - 1)) != std::string::npos;
      if (!IsIdentifierChar(c) && c != '.' && c != '\'' && !sign) break;
      ++pos_;
    }
    OnToken(std::string(src_.substr(start, pos_ - start)));
  }

  void ReadPunctuation() {
    static const char* kPairs[] = {"::", "->", "&&"};
    for (const char* p : kPairs) {
      if (src_.substr(pos_, 2) == p) {
        pos_ += 2;
        return OnToken(p);
      }
    }
    OnToken(std::string(1, src_[pos_++]));
  }

  bool Collecting() const {
    return stack_.empty() || stack_.back().scope == Scope::kNamespace ||
           stack_.back().scope == Scope::kClass;
  }

  void OnToken(const std::string& t) {
    if (t == "{") return OpenBrace();
    if (t == "}") return CloseBrace();
    if (!Collecting()) return;
    if (t == ";" && parens_ == 0) return ClearStatement();
    if (t == "(") ++parens_;
    if (t == ")" && parens_ > 0) --parens_;
    statement_.push_back({t, line_});
  }

  void ClearStatement() {
    statement_.clear();
    parens_ = 0;
  }

  void OpenBrace() {
    Frame frame;
    frame.scope = Collecting() && parens_ == 0 ? Classify() : Scope::kOther;
    if (frame.scope == Scope::kBody) {
      frame.span = BodySpan();
      ClearStatement();
    } else if (frame.scope == Scope::kNamespace) {
      ClearStatement();
    } else if (frame.scope == Scope::kClass) {
      frame.statement = std::move(statement_);
      frame.statement_parens = parens_;
      ClearStatement();
    }
    stack_.push_back(std::move(frame));
  }

  void CloseBrace() {
    if (stack_.empty()) return Fail("`}` with no `{` open");
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.scope == Scope::kBody) {
      frame.span.last_line = line_;
      result_.functions.push_back(std::move(frame.span));
    }
    if (!Collecting()) return;
    if (frame.scope == Scope::kBody || frame.scope == Scope::kNamespace) return ClearStatement();
    if (frame.scope == Scope::kClass) {
      statement_ = std::move(frame.statement);
      parens_ = frame.statement_parens;
    }
    statement_.push_back({"}", line_});  // `} name;`, `b_{x} {`: the statement goes on
  }

  // What a `{` opens, from the statement before it at namespace or class level.
  Scope Classify() const {
    const std::vector<Token>& s = statement_;
    for (const Token& t : s)
      if (t.text == "namespace") return Scope::kNamespace;
    if (s.size() == 2 && s[0].text == "extern" && s[1].text == "\"\"") return Scope::kNamespace;
    if (IsBody()) return Scope::kBody;
    bool class_word = false;
    for (size_t i = SkipPreamble(s); i < s.size(); ++i) {
      const std::string& t = s[i].text;
      if (t == "enum" || t == "=" || t == "}") return Scope::kOther;  // `struct P {...} p = {`
      class_word = class_word || t == "class" || t == "struct" || t == "union";
    }
    return class_word ? Scope::kClass : Scope::kOther;
  }

  bool IsBody() const {
    const std::vector<Token>& s = statement_;
    if (s.empty()) return false;
    size_t from = SkipPreamble(s);
    if (InitializerColon(s, from) != 0) return s.back().text == ")" || s.back().text == "}";
    auto groups = TopLevelGroups(s, from, s.size());
    return !groups.empty() && IsFunctionTail(s, groups.back().second + 1);
  }

  FunctionSpan BodySpan() const {
    const std::vector<Token>& s = statement_;
    size_t from = SkipPreamble(s);
    size_t colon = InitializerColon(s, from);
    size_t open = ParameterListOpen(s, from, colon != 0 ? colon : s.size());
    FunctionSpan span;
    span.name = open < s.size() ? FunctionName(s, open) : "";
    span.first_line = from < s.size() ? s[from].line : line_;
    return span;
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_start_ = true;
  std::vector<Token> statement_;  // since the last `;`, `{` or `}` at namespace or class level
  int parens_ = 0;                // open `(` in statement_
  std::vector<Frame> stack_;
  ScanResult result_;
};

}  // namespace

ScanResult ScanFunctions(std::string_view source) { return Scanner(source).Run(); }

}  // namespace evalrun::testing
