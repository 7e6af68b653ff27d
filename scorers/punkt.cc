// Port of NLTK 3.8 nltk/tokenize/punkt.py (PunktSentenceTokenizer with the
// default PunktLanguageVars), the code path of nltk.tokenize.sent_tokenize.
// Function names in comments (e.g. `_slices_from_text`) are NLTK's. The
// regular expressions of PunktLanguageVars use lookahead, which RE2 lacks, so
// they are matched by hand below; each matcher quotes the pattern it follows.
// RE2 only answers Unicode class membership of single code points.
#include "scorers/punkt.h"

#include <re2/re2.h>

#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

// ---------------------------------------------------------------------------
// UTF-8 and Python's Unicode predicates. Decoding and \s come from
// scorers/py_unicode.h (Python 3.11, Unicode 14). The class tests below ask
// RE2, whose tables (libre2 2022-06-01) are Unicode 15.0: on code points first
// assigned in Unicode 15.0 they answer as Python 3.12 would, not 3.11.

constexpr char32_t kInvalid = 0x110000;  // an undecodable byte

// Decodes the code point at text[i] (i < text.size()); *len gets its length.
// An invalid or truncated sequence (py::DecodeUtf8At's kWellFormed policy)
// decodes as kInvalid of length 1, which no predicate accepts.
char32_t DecodeAt(std::string_view text, size_t i, size_t* len) {
  const py::Utf8Char c = py::DecodeUtf8At(text, i);
  *len = c.len;
  return c.valid ? c.cp : kInvalid;
}

// Length of the whitespace code point at text[i], or 0 if none is there.
size_t SpaceLenAt(std::string_view text, size_t i) {
  if (i >= text.size()) return 0;
  size_t len;
  return py::IsPySpace(DecodeAt(text, i, &len)) ? len : 0;
}

// Membership of a non-ASCII code point in an RE2 character class.
bool InClass(const RE2& re, std::string_view text, size_t i, size_t len) {
  return RE2::FullMatch(re2::StringPiece(text.data() + i, len), re);
}

// str.isupper() of one character: Unicode "Uppercase" (Lu + Other_Uppercase).
const RE2& UpperClass() {
  static const RE2* re = new RE2(
      "[\\p{Lu}\\x{2160}-\\x{216F}\\x{24B6}-\\x{24CF}\\x{1F130}-\\x{1F149}"
      "\\x{1F150}-\\x{1F169}\\x{1F170}-\\x{1F189}]");
  return *re;
}
// str.islower() of one character: Unicode "Lowercase" (Ll + Other_Lowercase).
const RE2& LowerClass() {
  static const RE2* re = new RE2(
      "[\\p{Ll}\\x{AA}\\x{BA}\\x{2B0}-\\x{2B8}\\x{2C0}-\\x{2C1}\\x{2E0}-\\x{2E4}"
      "\\x{345}\\x{37A}\\x{1D2C}-\\x{1D6A}\\x{1D78}\\x{1D9B}-\\x{1DBF}\\x{2071}"
      "\\x{207F}\\x{2090}-\\x{209C}\\x{2170}-\\x{217F}\\x{24D0}-\\x{24E9}"
      "\\x{2C7C}-\\x{2C7D}\\x{A69C}-\\x{A69D}\\x{A770}\\x{A7F8}-\\x{A7F9}"
      "\\x{AB5C}-\\x{AB5F}\\x{10780}\\x{10783}-\\x{10785}\\x{10787}-\\x{107B0}"
      "\\x{107B2}-\\x{107BA}]");
  return *re;
}
// Python re `[^\W\d]` on str: word characters that are not decimal digits,
// i.e. letters, Nl, No and '_'.
const RE2& LetterClass() {
  static const RE2* re = new RE2("[\\p{L}\\p{Nl}\\p{No}_]");
  return *re;
}
// Python re `\d` on str: decimal digits (Nd).
const RE2& DigitClass() {
  static const RE2* re = new RE2("\\p{Nd}");
  return *re;
}

bool IsDigitAt(std::string_view text, size_t i, size_t* len) {
  const char32_t c = DecodeAt(text, i, len);
  if (c < 0x80) return c >= '0' && c <= '9';
  return c != kInvalid && InClass(DigitClass(), text, i, *len);
}

// First character of `tok` (non-empty): isupper / islower.
bool FirstUpper(std::string_view tok) {
  size_t len;
  const char32_t c = DecodeAt(tok, 0, &len);
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  return c != kInvalid && InClass(UpperClass(), tok, 0, len);
}
bool FirstLower(std::string_view tok) {
  size_t len;
  const char32_t c = DecodeAt(tok, 0, &len);
  if (c < 0x80) return c >= 'a' && c <= 'z';
  return c != kInvalid && InClass(LowerClass(), tok, 0, len);
}

// Python's str.lower(), as far as it matters here: every key of the English
// parameters is ASCII, and the only non-ASCII character whose lower case is
// all ASCII is U+212A KELVIN SIGN ("k"); lower() never creates or changes
// digits, '.', ',' or '-'. Other non-ASCII characters are kept as they are:
// a type holding them matches no key, as in Python.
std::string Lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= 'A' && c <= 'Z') {
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else if (c == '\xE2' && i + 2 < s.size() && s[i + 1] == '\x84' && s[i + 2] == '\xAA') {
      out.push_back('k');
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// PunktLanguageVars regular expressions, matched by hand.

// _re_non_word_chars: (?:[)\";}\]\*:@\'\({\[?!])
bool IsNonWord(char32_t c) {
  return c != 0 && c < 0x80 &&
         std::string_view(")\";}]*:@'({[?!").find(static_cast<char>(c)) != std::string_view::npos;
}

// Characters excluded by _re_word_start: [^\(\"\`{\[:;&\#\*@\)}\]\-,]
bool IsExcludedWordStart(char32_t c) {
  return c != 0 && c < 0x80 &&
         std::string_view("(\"`{[:;&#*@)}]-,").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsSentEndChar(char c) { return c == '.' || c == '?' || c == '!'; }

// _re_multi_char_punct at `i` of `line`: (?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)
// Returns the length of the (leftmost-alternative, greedy) match, 0 if none.
size_t MultiCharAt(std::string_view line, size_t i) {
  const size_t n = line.size();
  if (i + 1 >= n) return 0;
  if ((line[i] == '-' || line[i] == '.') && line[i + 1] == line[i]) {
    size_t j = i + 2;
    while (j < n && line[j] == line[i]) ++j;
    return j - i;
  }
  if (line[i] != '.') return 0;
  // (?:\.\s){2,}\. : take as many ". " pairs as possible, then back off one
  // pair if no period follows (the period opening that pair then closes it).
  size_t pairs = 0;
  size_t last_pair = i;
  size_t j = i;
  while (j < n && line[j] == '.') {
    const size_t ws = SpaceLenAt(line, j + 1);
    if (ws == 0) break;
    last_pair = j;
    j += 1 + ws;
    ++pairs;
  }
  if (pairs >= 2 && j < n && line[j] == '.') return j + 1 - i;
  if (pairs >= 3) return last_pair + 1 - i;
  return 0;
}

// The lookahead that ends a word in _word_tokenize_fmt, at `q` of `line`:
//   (?= \s | $ | NonWord | MultiChar | ,(?=$|\s|NonWord|MultiChar) )
bool WordEndsAt(std::string_view line, size_t q) {
  const size_t n = line.size();
  if (q >= n) return true;
  size_t len;
  const char32_t c = DecodeAt(line, q, &len);
  if (py::IsPySpace(c) || IsNonWord(c) || MultiCharAt(line, q) > 0) return true;
  if (c != ',') return false;
  if (q + 1 >= n) return true;
  const char32_t d = DecodeAt(line, q + 1, &len);
  return py::IsPySpace(d) || IsNonWord(d) || MultiCharAt(line, q + 1) > 0;
}

// PunktLanguageVars.word_tokenize on one line (no '\n' inside): findall of
//   ( MultiChar | (?=WordStart)\S+?(?=WordEnd) | \S )
// Appends the token texts to *out.
void WordTokenizeLine(std::string_view line, std::vector<std::string_view>* out) {
  const size_t n = line.size();
  size_t p = 0;
  while (p < n) {
    size_t len;
    const char32_t c = DecodeAt(line, p, &len);
    if (py::IsPySpace(c)) {
      p += len;
      continue;
    }
    size_t end;
    if (const size_t m = MultiCharAt(line, p); m > 0) {
      end = p + m;
    } else if (!IsExcludedWordStart(c)) {
      end = p + len;
      while (!WordEndsAt(line, end)) {
        size_t l;
        DecodeAt(line, end, &l);
        end += l;
      }
    } else {
      end = p + len;
    }
    out->push_back(line.substr(p, end - p));
    p = end;
  }
}

// _tokenize_words: str.split("\n"), then word_tokenize each line. The line
// and paragraph start flags only matter to training, so they are not kept.
void TokenizeWords(std::string_view text, std::vector<std::string_view>* out) {
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    WordTokenizeLine(text.substr(start, nl == std::string_view::npos ? nl : nl - start), out);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

// PunktToken._RE_NUMERIC: ^-?[\.,]?\d[\d,\.-]*\.?$ (on the lower-cased token).
bool IsNumeric(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) ++i;
  size_t len;
  if (i >= s.size() || !IsDigitAt(s, i, &len)) return false;
  for (i += len; i < s.size(); i += len) {
    if (s[i] == ',' || s[i] == '.' || s[i] == '-') {
      len = 1;
    } else if (!IsDigitAt(s, i, &len)) {
      return false;
    }
  }
  return true;
}

// PunktToken._RE_INITIAL: [^\W\d]\.$ (one letter and a period).
bool IsInitial(std::string_view tok) {
  if (tok.empty() || tok.back() != '.') return false;
  size_t len;
  const char32_t c = DecodeAt(tok, 0, &len);
  if (len + 1 != tok.size()) return false;
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return c != kInvalid && InClass(LetterClass(), tok, 0, len);
}

// PunktToken._RE_ELLIPSIS: \.\.+$
bool IsEllipsis(std::string_view tok) {
  return tok.size() >= 2 && tok.find_first_not_of('.') == std::string_view::npos;
}

// re_boundary_realignment.match on text[begin, end):
//   ["\')\]}]+?(?:\s+|(?=--)|$)   (MULTILINE)
// Returns the match length (m.end()) and sets *closers to the number of
// closing characters (len(m.group(0).rstrip())); returns 0 if no match.
size_t RealignMatch(std::string_view text, size_t begin, size_t end, size_t* closers) {
  size_t p = begin;
  while (p < end && (text[p] == '"' || text[p] == '\'' || text[p] == ')' || text[p] == ']' ||
                     text[p] == '}')) {
    ++p;
  }
  if (p == begin) return 0;
  // A shorter lazy match would be followed by another closer, which is
  // neither space, "--" nor the end, so only the full run can match.
  *closers = p - begin;
  if (p == end) return p - begin;
  if (text[p] == '-' && p + 1 < end && text[p + 1] == '-') return p - begin;
  size_t q = p;
  size_t len;
  while (q < end && py::IsPySpace(DecodeAt(text, q, &len))) q += len;
  return q > p ? q - begin : 0;
}

// Length of text.rstrip() (Unicode whitespace).
size_t RstripLen(std::string_view text) {
  size_t end = 0;
  size_t len;
  for (size_t i = 0; i < text.size(); i += len) {
    if (!py::IsPySpace(DecodeAt(text, i, &len))) end = i + len;
  }
  return end;
}

// string.whitespace of Python: ASCII only.
bool IsAsciiWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0b' || c == '\x0c';
}

constexpr std::string_view kNumber = "##number##";
constexpr int kOrthoBegUc = 1 << 1;
constexpr int kOrthoMidUc = 1 << 2;
constexpr int kOrthoUnkUc = 1 << 3;
constexpr int kOrthoBegLc = 1 << 4;
constexpr int kOrthoMidLc = 1 << 5;
constexpr int kOrthoUnkLc = 1 << 6;
constexpr int kOrthoUc = kOrthoBegUc + kOrthoMidUc + kOrthoUnkUc;
constexpr int kOrthoLc = kOrthoBegLc + kOrthoMidLc + kOrthoUnkLc;

// _realign_boundaries: closing quotes and brackets after a sentence end
// move to the sentence they close; empty sentences are dropped.
std::vector<std::pair<size_t, size_t>> RealignBoundaries(std::string_view text,
                                                         const std::vector<std::pair<size_t, size_t>>& slices) {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t realign = 0;
  for (size_t k = 0; k < slices.size(); ++k) {
    const size_t begin = slices[k].first + realign;
    const size_t end = slices[k].second;
    if (k + 1 == slices.size()) {
      if (begin < end) spans.emplace_back(begin, end);
      continue;
    }
    const auto& next = slices[k + 1];
    size_t closers = 0;
    const size_t m =
        next.first < next.second ? RealignMatch(text, next.first, next.second, &closers) : 0;
    if (m > 0) {
      spans.emplace_back(begin, next.first + closers);
      realign = m;
    } else {
      realign = 0;
      if (begin < end) spans.emplace_back(begin, end);
    }
  }
  return spans;
}

}  // namespace

// PunktToken with the annotations the tokenizer uses.
struct PunktModel::Token {
  std::string_view tok;
  std::string type;  // _get_type: lower case, numbers as "##number##"
  bool period_final = false;
  bool sentbreak = false;
  bool abbr = false;
  bool ellipsis = false;

  explicit Token(std::string_view t) : tok(t), period_final(!t.empty() && t.back() == '.') {
    type = Lower(t);
    if (IsNumeric(type)) type = kNumber;
  }
  std::string_view TypeNoPeriod() const {
    std::string_view t = type;
    if (t.size() > 1 && t.back() == '.') t.remove_suffix(1);
    return t;
  }
  std::string_view TypeNoSentPeriod() const {
    return sentbreak ? TypeNoPeriod() : std::string_view(type);
  }
};

struct PunktModel::Scratch {
  std::vector<std::string_view> words;
  std::vector<Token> tokens;
};

int PunktModel::OrthoContext(std::string_view type) const {
  const auto it = ortho_context_.find(type);
  return it == ortho_context_.end() ? 0 : it->second;
}

bool PunktModel::IsCollocation(std::string_view first, std::string_view second) const {
  for (const auto& [a, b] : collocations_) {
    if (a == first && b == second) return true;
  }
  return false;
}

// _first_pass_annotation.
void PunktModel::FirstPass(Token* t) const {
  const std::string_view tok = t->tok;
  if (tok == "." || tok == "?" || tok == "!") {
    t->sentbreak = true;
  } else if (IsEllipsis(tok)) {
    t->ellipsis = true;
  } else if (t->period_final && !(tok.size() >= 2 && tok[tok.size() - 2] == '.')) {
    const std::string lower = Lower(tok.substr(0, tok.size() - 1));
    const size_t dash = lower.rfind('-');
    const std::string_view last_part = dash == std::string::npos
                                           ? std::string_view(lower)
                                           : std::string_view(lower).substr(dash + 1);
    if (abbrev_types_.count(lower) > 0 || abbrev_types_.count(last_part) > 0) {
      t->abbr = true;
    } else {
      t->sentbreak = true;
    }
  }
}

// _ortho_heuristic.
int PunktModel::OrthoHeuristic(const Token& t) const {
  if (t.tok.size() == 1 && std::string_view(";:,.!?").find(t.tok[0]) != std::string_view::npos) {
    return 0;
  }
  const int ctx = OrthoContext(t.TypeNoSentPeriod());
  if (FirstUpper(t.tok) && (ctx & kOrthoLc) && !(ctx & kOrthoMidUc)) return 1;
  if (FirstLower(t.tok) && ((ctx & kOrthoUc) || !(ctx & kOrthoBegLc))) return 0;
  return -1;
}

// _second_pass_annotation: updates tok1 given the following token.
void PunktModel::SecondPass(Token* t1, const Token& t2) const {
  if (!t1->period_final) return;
  const std::string_view typ = t1->TypeNoPeriod();
  const std::string_view next_typ = t2.TypeNoSentPeriod();
  const bool tok_is_initial = IsInitial(t1->tok);

  // [4.1.2. Collocation Heuristic]
  if (IsCollocation(typ, next_typ)) {
    t1->sentbreak = false;
    t1->abbr = true;
    return;
  }
  // [4.2. Token-Based Reclassification of Abbreviations]
  if ((t1->abbr || t1->ellipsis) && !tok_is_initial) {
    if (OrthoHeuristic(t2) == 1) {
      t1->sentbreak = true;
      return;
    }
    if (FirstUpper(t2.tok) && sent_starters_.count(next_typ) > 0) {
      t1->sentbreak = true;
      return;
    }
  }
  // [4.3. Token-Based Detection of Initials and Ordinals]
  if (tok_is_initial || typ == kNumber) {
    const int is_sent_starter = OrthoHeuristic(t2);
    if (is_sent_starter == 0) {
      t1->sentbreak = false;
      t1->abbr = true;
      return;
    }
    if (is_sent_starter == -1 && tok_is_initial && FirstUpper(t2.tok) &&
        !(OrthoContext(next_typ) & kOrthoLc)) {
      t1->sentbreak = false;
      t1->abbr = true;
    }
  }
}

// text_contains_sentbreak: tokenize, annotate both passes, and report whether
// a token other than the last is a sentence break.
bool PunktModel::ContainsSentbreak(std::string_view context, Scratch* scratch) const {
  scratch->words.clear();
  TokenizeWords(context, &scratch->words);
  std::vector<Token>& tokens = scratch->tokens;
  tokens.clear();
  for (std::string_view w : scratch->words) tokens.emplace_back(w);
  for (Token& t : tokens) FirstPass(&t);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    SecondPass(&tokens[i], tokens[i + 1]);
    if (tokens[i].sentbreak) return true;
  }
  return false;
}

std::vector<std::pair<size_t, size_t>> PunktModel::SplitSpans(std::string_view text) const {
  const size_t n = text.size();
  Scratch scratch;

  // _slices_from_text over _match_potential_end_contexts.
  std::vector<std::pair<size_t, size_t>> slices;
  size_t last_break = 0;

  // One match of period_context_re: [.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+)))
  struct Match {
    size_t pos = 0;                            // the sentence end character; match.end() == pos + 1
    size_t after_end = 0;                      // end of after_tok
    size_t next_tok = std::string_view::npos;  // start of next_tok, if any
  };
  auto decide = [&](const Match& m, size_t word_start) {
    const std::string_view context = text.substr(word_start, m.after_end - word_start);
    if (!ContainsSentbreak(context, &scratch)) return;
    slices.emplace_back(last_break, m.pos + 1);
    last_break = m.next_tok != std::string_view::npos ? m.next_tok : m.pos + 1;
  };

  bool have_prev = false;
  Match prev;
  size_t prev_start = 0, prev_stop = 0;  // previous_slice
  for (size_t i = 0; i < n; ++i) {
    if (!IsSentEndChar(text[i])) continue;
    Match m;
    m.pos = i;
    size_t len;
    if (i + 1 < n && IsNonWord(DecodeAt(text, i + 1, &len))) {
      m.after_end = i + 2;
    } else {
      size_t j = i + 1;
      while (j < n && py::IsPySpace(DecodeAt(text, j, &len))) j += len;
      if (j == i + 1 || j >= n) continue;
      m.next_tok = j;
      while (j < n && !py::IsPySpace(DecodeAt(text, j, &len))) j += len;
      m.after_end = j;
    }
    // The word before the match: after the last ASCII whitespace in
    // text[previous_slice.stop : match.start()] (_get_last_whitespace_index,
    // which answers 0 both for "none" and for index 0).
    size_t last_ws = 0;
    for (size_t k = i; k > prev_stop; --k) {
      if (IsAsciiWhitespace(text[k - 1])) {
        last_ws = k - 1 - prev_stop;
        break;
      }
    }
    const size_t word_start = last_ws != 0 ? last_ws + prev_stop + 1 : prev_start;
    // Yield the previous match only if its word does not overlap this one.
    if (have_prev && prev_stop <= word_start) decide(prev, prev_start);
    have_prev = true;
    prev = m;
    prev_start = word_start;
    prev_stop = i;
  }
  if (have_prev) decide(prev, prev_start);
  // The last sentence should not contain trailing whitespace.
  slices.emplace_back(last_break, RstripLen(text));
  return RealignBoundaries(text, slices);
}

std::vector<std::string> PunktModel::Split(std::string_view text) const {
  std::vector<std::string> out;
  for (const auto& [b, e] : SplitSpans(text)) out.emplace_back(text.substr(b, e - b));
  return out;
}

}  // namespace evalrun
