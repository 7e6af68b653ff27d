#include "scorers/choice_extract.h"

#include <re2/re2.h>

#include <vector>

namespace evalrun {
namespace {

// Decodes the UTF-8 code point starting at s[i]; sets *len. Invalid bytes
// decode as U+FFFD of length 1.
char32_t DecodeAt(std::string_view s, size_t i, size_t* len) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) {
    *len = 1;
    return 0xFFFD;
  }
  char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k < n; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc >> 6) != 2) {
      *len = 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  *len = n;
  return cp;
}

// The code point that ends just before byte i (0 when i == 0).
char32_t DecodeBefore(std::string_view s, size_t i) {
  if (i == 0) return 0;
  size_t start = i - 1;
  while (start > 0 && i - start < 4 && (static_cast<unsigned char>(s[start]) >> 6) == 2) --start;
  size_t len = 0;
  char32_t cp = DecodeAt(s, start, &len);
  return start + len == i ? cp : 0xFFFD;
}

bool WordBefore(std::string_view s, size_t i) { return i > 0 && IsPythonWordChar(DecodeBefore(s, i)); }
bool WordAfter(std::string_view s, size_t i) {
  if (i >= s.size()) return false;
  size_t len = 0;
  return IsPythonWordChar(DecodeAt(s, i, &len));
}

// Python's str `\s` (str.isspace) as an RE2 class.
#define PY_SPACE "[\\t\\n\\x{0b}\\f\\r\\x{1c}-\\x{1f} \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]"

char OfficialChain(std::string_view text) {
  static const RE2 kAnswerIs("answer is \\(?([A-J])\\)?");
  static const RE2 kAnswerColon(".*[aA]nswer:" PY_SPACE "*([A-J])");
  std::string letter;
  if (RE2::PartialMatch(text, kAnswerIs, &letter)) return letter[0];
  if (RE2::PartialMatch(text, kAnswerColon, &letter)) return letter[0];
  // Last standalone A-J (Python \b: Unicode word characters).
  for (size_t i = text.size(); i-- > 0;) {
    char c = text[i];
    if (c >= 'A' && c <= 'J' && !WordBefore(text, i) && !WordAfter(text, i + 1)) return c;
  }
  return 0;
}

}  // namespace

bool IsPythonWordChar(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  }
  // Letters (L*) and numbers (N*), via RE2's Unicode tables.
  static const RE2 kWord("[\\pL\\pN]");
  char buf[4];
  int n;
  if (cp < 0x800) {
    buf[0] = static_cast<char>(0xC0 | (cp >> 6));
    buf[1] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    buf[0] = static_cast<char>(0xE0 | (cp >> 12));
    buf[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    buf[0] = static_cast<char>(0xF0 | (cp >> 18));
    buf[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 4;
  }
  return RE2::FullMatch(std::string_view(buf, n), kWord);
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
    if (WordBefore(s, i) || WordAfter(s, i + 1)) continue;
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

char ExtractOfficialMmluPro(std::string_view response) {
  std::string cleaned;
  cleaned.reserve(response.size());
  // response.replace('**', ''): non-overlapping, left to right.
  for (size_t i = 0; i < response.size(); ++i) {
    if (response[i] == '*' && i + 1 < response.size() && response[i + 1] == '*') {
      ++i;
      continue;
    }
    cleaned.push_back(response[i]);
  }
  return OfficialChain(cleaned);
}

char ExtractOfficialMmluProNoCleanup(std::string_view response) { return OfficialChain(response); }

char ExtractMmluProAnswerIsOnly(std::string_view response) {
  static const RE2 kAnswerIs("answer is \\(?([A-J])\\)?");
  std::string letter;
  return RE2::PartialMatch(response, kAnswerIs, &letter) ? letter[0] : 0;
}

}  // namespace evalrun
