#include "scorers/py_unicode.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>

namespace evalrun::py {
namespace {

enum Flag : uint32_t {
  kLower = 1,
  kUpper = 2,
  kTitle = 4,
  kCaseIgnorable = 8,
  kWord = 16,
  kDecimal = 32,
};

struct LowerRange {
  char32_t first;
  char32_t last;
  int32_t delta;
  int32_t stride;
};

#include "scorers/py_unicode_tables.inc"

uint32_t LookupFlags(char32_t c) {
  if (c > 0x10FFFF) return 0;
  const uint32_t probe = (static_cast<uint32_t>(c) << 8) | 0xFF;
  const uint32_t* it = std::upper_bound(std::begin(kFlagRuns), std::end(kFlagRuns), probe);
  // kFlagRuns[0] starts at code point 0, so `it` is never the first element.
  return *(it - 1) & 0xFF;
}

// Flags of ASCII, looked up once.
const std::array<uint8_t, 128>& AsciiFlags() {
  static const std::array<uint8_t, 128> table = [] {
    std::array<uint8_t, 128> t{};
    for (char32_t c = 0; c < 128; ++c) t[c] = static_cast<uint8_t>(LookupFlags(c));
    return t;
  }();
  return table;
}

uint32_t Flags(char32_t c) { return c < 128 ? AsciiFlags()[c] : LookupFlags(c); }

char32_t TableLower(char32_t c) {
  if (c < 128) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  // Ranges are sorted by `first` and do not overlap.
  const LowerRange* it = std::upper_bound(
      std::begin(kLowerRanges), std::end(kLowerRanges), c,
      [](char32_t v, const LowerRange& r) { return v < r.first; });
  if (it == std::begin(kLowerRanges)) return c;
  const LowerRange& r = *(it - 1);
  if (c > r.last) return c;
  if (r.stride != 0 && (c - r.first) % r.stride != 0) return c;
  return static_cast<char32_t>(static_cast<int32_t>(c) + r.delta);
}

// CPython Objects/unicodeobject.c handle_capital_sigma(): U+03A3 at index i
// lowers to final sigma when preceded by a cased letter (skipping
// case-ignorable ones) and not followed by one.
bool IsFinalSigma(std::u32string_view s, size_t i) {
  size_t j = i;
  char32_t c = 0;
  bool found = false;
  while (j > 0) {
    c = s[--j];
    if (!IsPyCaseIgnorable(c)) {
      found = true;
      break;
    }
  }
  bool final_sigma = found && IsPyCased(c);
  if (final_sigma && i + 1 < s.size()) {
    size_t k = i + 1;
    for (; k < s.size(); ++k) {
      c = s[k];
      if (!IsPyCaseIgnorable(c)) break;
    }
    final_sigma = k == s.size() || !IsPyCased(c);
  }
  return final_sigma;
}

// CPython unicode_isupper_impl / unicode_islower_impl: no character has a
// `reject` flag and at least one has `want`.
bool AllCasedHave(std::string_view text, uint32_t want, uint32_t reject) {
  bool cased = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const uint32_t f = Flags(DecodeUtf8(text, &pos));
    if (f & reject) return false;
    if (f & want) cased = true;
  }
  return cased;
}

bool InAscii(char32_t c, std::string_view set) {
  return c < 128 && set.find(static_cast<char>(c)) != std::string_view::npos;
}

}  // namespace

Utf8Char DecodeUtf8At(std::string_view text, size_t pos, Utf8Check check) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char b0 = p[pos];
  if (b0 < 0x80) return {b0, 1, true};
  constexpr Utf8Char kInvalid = {kReplacementChar, 1, false};
  size_t len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return kInvalid;  // a continuation byte or F8-FF
  }
  if (len > text.size() - pos) return kInvalid;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char b = p[pos + k];
    if ((b & 0xC0) != 0x80) return kInvalid;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (check == Utf8Check::kWellFormed &&
      (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) {
    return kInvalid;
  }
  return {cp, len, true};
}

Utf8Char DecodeUtf8Before(std::string_view text, size_t end, Utf8Check check) {
  size_t start = end - 1;
  // Step back over continuation bytes (at most 3) to the lead byte.
  while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) {
    --start;
  }
  const Utf8Char c = DecodeUtf8At(text, start, check);
  if (start + c.len != end) return {kReplacementChar, 1, false};
  return c;
}

char32_t DecodeUtf8(std::string_view text, size_t* pos) {
  const Utf8Char c = DecodeUtf8At(text, *pos);
  *pos += c.len;
  return c.cp;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::u32string DecodeUtf8All(std::string_view text, std::vector<size_t>* offsets) {
  std::u32string out;
  out.reserve(text.size());
  if (offsets) {
    offsets->clear();
    offsets->reserve(text.size() + 1);
  }
  size_t pos = 0;
  while (pos < text.size()) {
    if (offsets) offsets->push_back(pos);
    out.push_back(DecodeUtf8(text, &pos));
  }
  if (offsets) offsets->push_back(text.size());
  return out;
}

std::string EncodeUtf8(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) AppendUtf8(c, &out);
  return out;
}

bool IsPySpace(char32_t c) {
  // CPython _PyUnicode_IsWhitespace (bidi WS/B/S or category Zs).
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C);
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool IsPyWord(char32_t c) { return Flags(c) & kWord; }
bool IsPyDecimal(char32_t c) { return Flags(c) & kDecimal; }
bool IsPyLowerChar(char32_t c) { return Flags(c) & kLower; }
bool IsPyUpperChar(char32_t c) { return Flags(c) & kUpper; }
bool IsPyTitleChar(char32_t c) { return Flags(c) & kTitle; }
bool IsPyCased(char32_t c) { return Flags(c) & (kLower | kUpper | kTitle); }
bool IsPyCaseIgnorable(char32_t c) { return Flags(c) & kCaseIgnorable; }

char32_t SimpleLower(char32_t c) { return c == 0x130 ? U'i' : TableLower(c); }

std::string PyLowerChar(char32_t c) {
  std::string out;
  if (c == 0x130) {
    out = "i\xCC\x87";  // U+0069 U+0307
  } else {
    AppendUtf8(TableLower(c), &out);
  }
  return out;
}

std::string PyLower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool has_sigma = false;
  // Fast pass without context; the rare U+03A3 takes the slow path.
  size_t pos = 0;
  while (pos < text.size()) {
    const unsigned char b = static_cast<unsigned char>(text[pos]);
    if (b < 0x80) {
      out.push_back(static_cast<char>((b >= 'A' && b <= 'Z') ? b + 32 : b));
      ++pos;
      continue;
    }
    const char32_t c = DecodeUtf8(text, &pos);
    if (c == 0x3A3) {
      has_sigma = true;
      break;
    }
    if (c == 0x130) {
      out += "i\xCC\x87";
    } else {
      AppendUtf8(TableLower(c), &out);
    }
  }
  if (!has_sigma) return out;

  const std::u32string cps = DecodeUtf8All(text);
  out.clear();
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    if (c == 0x3A3) {
      AppendUtf8(IsFinalSigma(cps, i) ? 0x3C2 : 0x3C3, &out);
    } else if (c == 0x130) {
      out += "i\xCC\x87";
    } else {
      AppendUtf8(TableLower(c), &out);
    }
  }
  return out;
}

bool PyIsUpper(std::string_view text) { return AllCasedHave(text, kUpper, kLower | kTitle); }
bool PyIsLower(std::string_view text) { return AllCasedHave(text, kLower, kUpper | kTitle); }

namespace {

// Byte offset just past the leading characters that `drop` accepts.
template <typename Pred>
size_t LeftEdge(std::string_view text, Pred drop, Utf8Check check) {
  size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Char c = DecodeUtf8At(text, pos, check);
    if (!drop(c.cp)) break;
    pos += c.len;
  }
  return pos;
}

// Byte offset where the trailing characters that `drop` accepts begin.
template <typename Pred>
size_t RightEdge(std::string_view text, Pred drop, Utf8Check check) {
  size_t end = text.size();
  while (end > 0) {
    const Utf8Char c = DecodeUtf8Before(text, end, check);
    if (!drop(c.cp)) break;
    end -= c.len;
  }
  return end;
}

}  // namespace

std::string_view PyStrip(std::string_view text, Utf8Check check) {
  const size_t left = LeftEdge(text, IsPySpace, check);
  if (left == text.size()) return text.substr(left);
  text.remove_prefix(left);
  return text.substr(0, RightEdge(text, IsPySpace, check));
}

std::string_view PyStripChars(std::string_view text, std::string_view ascii_chars) {
  return PyRStripChars(PyLStripChars(text, ascii_chars), ascii_chars);
}

std::string_view PyLStripChars(std::string_view text, std::string_view ascii_chars) {
  size_t i = 0;
  while (i < text.size() && InAscii(static_cast<unsigned char>(text[i]), ascii_chars)) ++i;
  return text.substr(i);
}

std::string_view PyRStripChars(std::string_view text, std::string_view ascii_chars) {
  size_t end = text.size();
  while (end > 0 && InAscii(static_cast<unsigned char>(text[end - 1]), ascii_chars)) --end;
  return text.substr(0, end);
}

std::vector<std::string_view> PySplitWhitespace(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  size_t word_start = std::string_view::npos;
  while (pos < text.size()) {
    const size_t here = pos;
    const bool space = IsPySpace(DecodeUtf8(text, &pos));
    if (space) {
      if (word_start != std::string_view::npos) {
        words.push_back(text.substr(word_start, here - word_start));
        word_start = std::string_view::npos;
      }
    } else if (word_start == std::string_view::npos) {
      word_start = here;
    }
  }
  if (word_start != std::string_view::npos) words.push_back(text.substr(word_start));
  return words;
}

char32_t PyIgnoreCaseKey(char32_t c) {
  const char32_t lo = SimpleLower(c);
  // re/_casefix.py _EXTRA_CASES, as equivalence classes keyed by one member.
  switch (lo) {
    case 0x131: return U'i';
    case 0x17F: return U's';
    case 0x3BC: return 0xB5;
    case 0x345: case 0x1FBE: return 0x3B9;
    case 0x1FD3: return 0x390;
    case 0x1FE3: return 0x3B0;
    case 0x3D0: return 0x3B2;
    case 0x3F5: return 0x3B5;
    case 0x3D1: return 0x3B8;
    case 0x3F0: return 0x3BA;
    case 0x3D6: return 0x3C0;
    case 0x3F1: return 0x3C1;
    case 0x3C2: return 0x3C3;
    case 0x3D5: return 0x3C6;
    case 0x1C80: return 0x432;
    case 0x1C81: return 0x434;
    case 0x1C82: return 0x43E;
    case 0x1C83: return 0x441;
    case 0x1C84: case 0x1C85: return 0x442;
    case 0x1C86: return 0x44A;
    case 0x1C87: return 0x463;
    case 0xA64B: return 0x1C88;
    case 0x1E9B: return 0x1E61;
    case 0xFB06: return 0xFB05;
    default: return lo;
  }
}

}  // namespace evalrun::py
