// nltk.word_tokenize as of NLTK 3.8 (Debian python3-nltk 3.8-1,
// nltk/tokenize/__init__.py word_tokenize and nltk/tokenize/destructive.py
// NLTKWordTokenizer.tokenize with convert_parentheses=False), which IFEval's
// CapitalWordFrequencyChecker uses to count all-capital words.
//
// NLTKWordTokenizer is a list of Python regex substitutions applied in order.
// Each one is ported here as a scan over code points, named after the
// pattern it replaces; Python's Unicode \w, \s, \d, \b and IGNORECASE come
// from py_unicode.h, and `$` (no MULTILINE) matches at the end or before
// a final "\n" as in Python.
#include "scorers/ifeval/ifeval_nltk_tokenize.h"

#include <string>
#include <string_view>
#include <vector>

#include "scorers/py_unicode.h"
#include "scorers/punkt.h"

namespace evalrun::ifeval {
namespace {

using U32 = std::u32string;
using U32View = std::u32string_view;

bool In(char32_t c, U32View set) { return set.find(c) != U32View::npos; }

bool WordAt(const U32& s, size_t i) { return i < s.size() && py::IsPyWord(s[i]); }
// Python's \b between s[i-1] and s[i].
bool Boundary(const U32& s, size_t i) { return (i > 0 && py::IsPyWord(s[i - 1])) != WordAt(s, i); }

// s[i..] starts with `lit` under re.IGNORECASE (lit is ASCII).
bool StartsWithIgnoreCase(const U32& s, size_t i, U32View lit) {
  if (i + lit.size() > s.size()) return false;
  for (size_t k = 0; k < lit.size(); ++k) {
    if (py::PyIgnoreCaseKey(s[i + k]) != py::PyIgnoreCaseKey(lit[k])) return false;
  }
  return true;
}

bool StartsWith(const U32& s, size_t i, U32View lit) {
  return i + lit.size() <= s.size() && U32View(s).substr(i, lit.size()) == lit;
}

// `[set]` -> r" \g<0> " for single characters.
U32 PadChars(const U32& s, U32View set) {
  U32 out;
  out.reserve(s.size() + 16);
  for (char32_t c : s) {
    if (In(c, set)) {
      out += U' ';
      out += c;
      out += U' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A literal -> " literal " (non-overlapping, left to right).
U32 PadLiteral(const U32& s, U32View lit, U32View replacement) {
  U32 out;
  out.reserve(s.size() + 16);
  size_t i = 0;
  while (i < s.size()) {
    if (StartsWith(s, i, lit)) {
      out += replacement;
      i += lit.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// STARTING_QUOTES[0]: ([«“‘„]|[`]+) -> r" \1 "
U32 StartingQuotes0(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (In(s[i], U"«“‘„")) {
      out += U' ';
      out += s[i++];
      out += U' ';
    } else if (s[i] == U'`') {
      out += U' ';
      while (i < s.size() && s[i] == U'`') out += s[i++];
      out += U' ';
    } else {
      out += s[i++];
    }
  }
  return out;
}

// STARTING_QUOTES[3]: ([ \(\[{<])(\"|\'{2}) -> r"\1 `` "
U32 StartingQuotes3(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (In(s[i], U" ([{<") && i + 1 < s.size()) {
      size_t len = 0;
      if (s[i + 1] == U'"') {
        len = 2;
      } else if (StartsWith(s, i + 1, U"''")) {
        len = 3;
      }
      if (len) {
        out += s[i];
        out += U" `` ";
        i += len;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// STARTING_QUOTES[4]: (?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b -> r"\1 \2"
U32 StartingQuotes4(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == U'\'' && WordAt(s, i + 1) && Boundary(s, i + 2)) {
      // One word character before a boundary, so only the one-letter
      // alternatives of the look-ahead can apply.
      const char32_t key = py::PyIgnoreCaseKey(s[i + 1]);
      if (!In(key, U"mtsdn")) {
        out += U"' ";
        out += s[i + 1];
        i += 2;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// ([^\.])(\.)(<closers>*)\s*$ -> "\1 \2<sep>\3 " (PUNCTUATION[0] and [5]).
U32 FinalPeriod(const U32& s, U32View closers, U32View separator) {
  const size_t dot = s.rfind(U'.');
  if (dot == U32::npos || dot == 0 || s[dot - 1] == U'.') return s;
  size_t run_end = dot + 1;
  while (run_end < s.size() && In(s[run_end], closers)) ++run_end;
  for (size_t k = run_end; k < s.size(); ++k) {
    if (!py::IsPySpace(s[k])) return s;
  }
  U32 out = s.substr(0, dot);
  out += U' ';
  out += U'.';
  out += separator;
  out += s.substr(dot + 1, run_end - dot - 1);
  out += U' ';
  return out;
}

// PUNCTUATION[1]: ([:,])([^\d]) -> r" \1 \2"
U32 ColonCommaBeforeNonDigit(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if ((s[i] == U':' || s[i] == U',') && i + 1 < s.size() && !py::IsPyDecimal(s[i + 1])) {
      out += U' ';
      out += s[i];
      out += U' ';
      out += s[i + 1];
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// PUNCTUATION[2]: ([:,])$ -> r" \1 "
U32 ColonCommaAtEnd(const U32& s) {
  size_t at = U32::npos;
  if (!s.empty() && (s.back() == U':' || s.back() == U',')) {
    at = s.size() - 1;
  } else if (s.size() >= 2 && s.back() == U'\n' && (s[s.size() - 2] == U':' || s[s.size() - 2] == U',')) {
    at = s.size() - 2;
  }
  if (at == U32::npos) return s;
  U32 out = s.substr(0, at);
  out += U' ';
  out += s[at];
  out += U' ';
  out += s.substr(at + 1);
  return out;
}

// PUNCTUATION[3]: \.{2,} -> r" \g<0> "
U32 PadDotRuns(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == U'.' && i + 1 < s.size() && s[i + 1] == U'.') {
      out += U' ';
      while (i < s.size() && s[i] == U'.') out += s[i++];
      out += U' ';
    } else {
      out += s[i++];
    }
  }
  return out;
}

// PUNCTUATION[7]: ([^'])' -> r"\1 ' "
U32 ApostropheSpace(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != U'\'' && i + 2 < s.size() && s[i + 1] == U'\'' && s[i + 2] == U' ') {
      out += s[i];
      out += U" ' ";
      i += 3;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// ENDING_QUOTES[3]: ([^' ])('[sS]|'[mM]|'[dD]|') -> r"\1 \2 "
U32 EndingQuotes3(const U32& s) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != U'\'' && s[i] != U' ' && i + 1 < s.size() && s[i + 1] == U'\'') {
      size_t len = 0;
      if (i + 3 < s.size() && In(s[i + 2], U"sSmMdD") && s[i + 3] == U' ') {
        len = 4;
      } else if (i + 2 < s.size() && s[i + 2] == U' ') {
        len = 3;
      }
      if (len) {
        out += s[i];
        out += U' ';
        out += s.substr(i + 1, len - 2);  // \2 without the matched space
        out += U' ';
        i += len;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// ENDING_QUOTES[4]: ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) -> r"\1 \2 "
U32 EndingQuotes4(const U32& s) {
  static constexpr U32View kSuffixes[] = {U"'ll", U"'LL", U"'re", U"'RE",
                                          U"'ve", U"'VE", U"n't", U"N'T"};
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != U'\'' && s[i] != U' ' && i + 4 < s.size() && s[i + 4] == U' ') {
      bool matched = false;
      for (U32View suffix : kSuffixes) {
        if (StartsWith(s, i + 1, suffix)) {
          matched = true;
          break;
        }
      }
      if (matched) {
        out += s[i];
        out += U' ';
        out += s.substr(i + 1, 3);
        out += U' ';
        i += 5;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// CONTRACTIONS2: (?i)\b(first)(second)\b -> r" \1 \2 " (or (?=\s) at the end).
U32 SplitContraction(const U32& s, U32View first, U32View second, bool lookahead_space) {
  const size_t len = first.size() + second.size();
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (Boundary(s, i) && StartsWithIgnoreCase(s, i, first) &&
        StartsWithIgnoreCase(s, i + first.size(), second)) {
      const size_t end = i + len;
      const bool tail_ok = lookahead_space ? (end < s.size() && py::IsPySpace(s[end])) : Boundary(s, end);
      if (tail_ok) {
        out += U' ';
        out += s.substr(i, first.size());
        out += U' ';
        out += s.substr(i + first.size(), second.size());
        out += U' ';
        i = end;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// CONTRACTIONS3: (?i) ('t)(is|was)\b -> r" \1 \2 "
U32 SplitTwas(const U32& s, U32View second) {
  U32 out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == U' ' && StartsWithIgnoreCase(s, i + 1, U"'t") &&
        StartsWithIgnoreCase(s, i + 3, second) && Boundary(s, i + 3 + second.size())) {
      out += U' ';
      out += s.substr(i + 1, 2);
      out += U' ';
      out += s.substr(i + 3, second.size());
      out += U' ';
      i += 3 + second.size();
      continue;
    }
    out += s[i++];
  }
  return out;
}

}  // namespace

std::vector<std::string> NltkTreebankTokenize(std::string_view text) {
  U32 s = py::DecodeUtf8All(text);

  // STARTING_QUOTES
  s = StartingQuotes0(s);
  if (!s.empty() && s[0] == U'"') s = U"``" + s.substr(1);  // ^\" -> ``
  s = PadLiteral(s, U"``", U" `` ");                           // (``) -> " \1 "
  s = StartingQuotes3(s);
  s = StartingQuotes4(s);

  // PUNCTUATION
  s = FinalPeriod(s, U"])}>\"'»”’ ", U" ");
  s = ColonCommaBeforeNonDigit(s);
  s = ColonCommaAtEnd(s);
  s = PadDotRuns(s);
  s = PadChars(s, U";@#$%&");
  s = FinalPeriod(s, U"])}>\"'", U"");
  s = PadChars(s, U"?!");
  s = ApostropheSpace(s);
  s = PadChars(s, U"*");

  // PARENS_BRACKETS, DOUBLE_DASHES
  s = PadChars(s, U"][(){}<>");
  s = PadLiteral(s, U"--", U" -- ");

  s = U" " + s + U" ";

  // ENDING_QUOTES
  s = PadChars(s, U"»”’");
  s = PadLiteral(s, U"''", U" '' ");
  s = PadLiteral(s, U"\"", U" '' ");
  s = EndingQuotes3(s);
  s = EndingQuotes4(s);

  // CONTRACTIONS2, CONTRACTIONS3 (MacIntyreContractions)
  s = SplitContraction(s, U"can", U"not", false);
  s = SplitContraction(s, U"d", U"'ye", false);
  s = SplitContraction(s, U"gim", U"me", false);
  s = SplitContraction(s, U"gon", U"na", false);
  s = SplitContraction(s, U"got", U"ta", false);
  s = SplitContraction(s, U"lem", U"me", false);
  s = SplitContraction(s, U"more", U"'n", false);
  s = SplitContraction(s, U"wan", U"na", true);
  s = SplitTwas(s, U"is");
  s = SplitTwas(s, U"was");

  // text.split()
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && py::IsPySpace(s[i])) ++i;
    const size_t start = i;
    while (i < s.size() && !py::IsPySpace(s[i])) ++i;
    if (i > start) tokens.push_back(py::EncodeUtf8(U32View(s).substr(start, i - start)));
  }
  return tokens;
}

std::vector<std::string> NltkWordTokenize(const PunktModel& punkt, std::string_view text) {
  std::vector<std::string> tokens;
  for (const auto& [begin, end] : punkt.SplitSpans(text)) {
    std::vector<std::string> words = NltkTreebankTokenize(text.substr(begin, end - begin));
    tokens.insert(tokens.end(), std::make_move_iterator(words.begin()),
                  std::make_move_iterator(words.end()));
  }
  return tokens;
}

}  // namespace evalrun::ifeval
