#include "tests/support/source_names.h"

#include <algorithm>
#include <cctype>

namespace evalrun::testing {
namespace {

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether `name` (lower case) is in `text` as a word.
bool HasWord(const std::string& text, const std::string& name) {
  const std::string low = Lower(text);
  for (size_t at = low.find(name); at != std::string::npos; at = low.find(name, at + 1)) {
    const bool open = at == 0 || !IsWordChar(low[at - 1]);
    const bool close = at + name.size() == low.size() || !IsWordChar(low[at + name.size()]);
    if (open && close) return true;
  }
  return false;
}

class Scanner {
 public:
  Scanner(const std::string& file, std::string_view src, const std::vector<SoughtName>& names)
      : file_(file), src_(src), names_(names) {}

  std::vector<NameHit> Run() {
    while (i_ < src_.size()) Step();
    return hits_;
  }

 private:
  void Step() {
    const char c = src_[i_];
    if (src_.substr(i_, 2) == "//") return SkipTo("\n", false);
    if (src_.substr(i_, 2) == "/*") return SkipTo("*/", true);
    if (c == '"') return Literal();
    if (c == '\'') return CharLiteral();
    if (std::isdigit(static_cast<unsigned char>(c))) return Number();
    if (IsIdentChar(c)) return Identifier();
    if (c == '\n') ++line_;
    ++i_;
  }

  // A comment, to `end` (past it for a block comment), its lines sought.
  void SkipTo(std::string_view end, bool past) {
    const size_t at = src_.find(end, i_ + 2);
    const size_t stop = at == std::string_view::npos ? src_.size() : at + (past ? end.size() : 0);
    size_t from = i_;
    while (from < stop) {
      const size_t nl = src_.find('\n', from);
      const size_t eol = nl == std::string_view::npos ? stop : std::min(stop, nl);
      Comment(std::string(src_.substr(from, eol - from)));
      if (eol < stop) ++line_;
      from = eol + 1;
    }
    i_ = stop;
  }

  void Comment(const std::string& text) {
    for (const SoughtName& n : names_)
      if (n.in_comments && HasWord(text, n.name))
        hits_.push_back({file_, line_, n.name, "comment \"" + text.substr(0, 80) + "\""});
  }

  void Count(size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) line_ += src_[k] == '\n';
  }

  // "..." (an R"d(...)d" when the identifier before it ended in R).
  void Literal() {
    const int start_line = line_;
    size_t end;
    std::string text;
    if (raw_next_) {
      const size_t paren = src_.find('(', i_);
      const std::string close = ")" + std::string(src_.substr(i_ + 1, paren - i_ - 1)) + "\"";
      const size_t at = src_.find(close, paren);
      end = at == std::string_view::npos ? src_.size() : at + close.size();
      text = std::string(src_.substr(paren + 1, (at == std::string_view::npos ? src_.size() : at) - paren - 1));
    } else {
      end = i_ + 1;
      while (end < src_.size() && src_[end] != '"' && src_[end] != '\n') end += src_[end] == '\\' ? 2 : 1;
      text = std::string(src_.substr(i_ + 1, std::min(end, src_.size()) - i_ - 1));
      end = std::min(end + 1, src_.size());
    }
    raw_next_ = false;
    Count(i_, end);
    i_ = end;
    for (const SoughtName& n : names_) {
      const bool hit = n.whole_literal ? Lower(text) == n.name : HasWord(text, n.name);
      if (hit) hits_.push_back({file_, start_line, n.name, "literal \"" + text.substr(0, 80) + "\""});
    }
  }

  void CharLiteral() {
    size_t end = i_ + 1;
    while (end < src_.size() && src_[end] != '\'' && src_[end] != '\n') end += src_[end] == '\\' ? 2 : 1;
    i_ = std::min(end + 1, src_.size());
  }

  // Digits, letters, digit separators and a sign after an exponent: 1'000'000, 0x1Fu, 1e-9.
  void Number() {
    while (i_ < src_.size() && (IsIdentChar(src_[i_]) || src_[i_] == '\'' || src_[i_] == '.')) ++i_;
  }

  void Identifier() {
    const size_t start = i_;
    while (i_ < src_.size() && IsIdentChar(src_[i_])) ++i_;
    const std::string_view id = src_.substr(start, i_ - start);
    // A raw string's prefix: R, u8R, LR, uR, UR right before the quote.
    raw_next_ = i_ < src_.size() && src_[i_] == '"' && id.back() == 'R' &&
                (id == "R" || id == "u8R" || id == "LR" || id == "uR" || id == "UR");
    std::string squeezed;
    for (char c : Lower(id))
      if (c != '_') squeezed += c;
    for (const SoughtName& n : names_)
      if (n.in_identifiers && squeezed.find(n.name) != std::string::npos)
        hits_.push_back({file_, line_, n.name, "identifier " + std::string(id)});
  }

  const std::string file_;
  const std::string_view src_;
  const std::vector<SoughtName>& names_;
  size_t i_ = 0;
  int line_ = 1;
  bool raw_next_ = false;
  std::vector<NameHit> hits_;
};

}  // namespace

std::vector<NameHit> FindNames(const std::string& file, std::string_view source,
                               const std::vector<SoughtName>& names) {
  return Scanner(file, source, names).Run();
}

}  // namespace evalrun::testing
