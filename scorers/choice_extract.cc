#include "scorers/choice_extract.h"

#include <re2/re2.h>

#include <algorithm>
#include <vector>

#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

// The extractors have always decoded by byte shape alone (see py::Utf8Check);
// an undecodable byte is U+FFFD, not a word character.
constexpr py::Utf8Check kShapeOnly = py::Utf8Check::kShapeOnly;

// Python's \w on the character before / at byte i.
bool WordBefore(std::string_view s, size_t i) {
  return i > 0 && IsPythonWordChar(py::DecodeUtf8Before(s, i, kShapeOnly).cp);
}
bool WordAfter(std::string_view s, size_t i) {
  return i < s.size() && IsPythonWordChar(py::DecodeUtf8At(s, i, kShapeOnly).cp);
}

}  // namespace

bool StandsAlone(std::string_view text, size_t i) { return !WordBefore(text, i) && !WordAfter(text, i + 1); }

bool IsPythonWordChar(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  }
  // Letters (L*) and numbers (N*), via RE2's Unicode tables.
  static const RE2 kWord("[\\pL\\pN]");
  std::string utf8;
  py::AppendUtf8(cp, &utf8);
  return RE2::FullMatch(utf8, kWord);
}

std::string StripMarkdownEmphasis(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '*') continue;
    if (c == '_') {
      // A run of '_' inside a word (snake_case) stays; at a word edge it is
      // emphasis ("__F__", "_F_"). The run is judged as a whole, since '_'
      // is itself a word character.
      size_t end = i;
      while (end < text.size() && text[end] == '_') ++end;
      if (WordBefore(text, i) && WordAfter(text, end)) out.append(text.substr(i, end - i));
      i = end - 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

char ExtractFirstLetter(std::string_view answer, int num_options) {
  std::string text = StripMarkdownEmphasis(answer);
  std::string_view s(text);
  const char last = static_cast<char>('A' + std::max(0, std::min(num_options, 26)) - 1);
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c < 'A' || c > last) continue;
    if (!StandsAlone(s, i)) continue;
    if (c == 'A' || c == 'I') {
      // The English words "A" and "I": followed by an apostrophe ("I'm",
      // "I’ve") or by a space and a lower-case letter ("A good", "I think").
      std::string_view rest = s.substr(i + 1);
      if (!rest.empty() && rest[0] == '\'') continue;
      if (rest.substr(0, 3) == "\xE2\x80\x99") continue;
      if (rest.size() >= 2 && rest[0] == ' ' && rest[1] >= 'a' && rest[1] <= 'z') continue;
    }
    return c;
  }
  return 0;
}

}  // namespace evalrun
