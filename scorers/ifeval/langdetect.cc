// Port of Debian python3-langdetect 1.0.9's detection (/usr/lib/python3/
// dist-packages/langdetect/): detector.py (append, cleaning_text,
// _detect_block, _extract_ngrams, _update_lang_prob, _normalize_prob,
// _sort_probability), utils/ngram.py (NGram.add_char, normalize,
// normalize_vi) and utils/unicode_block.py. Loading the profiles is
// langdetect_profiles.cc. Comments name the Python they follow.
#include "scorers/ifeval/langdetect.h"

#include <algorithm>
#include <iterator>

#include "scorers/ifeval/langdetect_grams.h"
#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

// Detector constants.
constexpr double kAlphaDefault = 0.5;
constexpr double kAlphaWidth = 0.05;
constexpr int kIterationLimit = 1000;
constexpr double kProbThreshold = 0.1;
constexpr double kConvThreshold = 0.99999;
constexpr double kBaseFreq = 10000;
constexpr int kTrials = 7;
constexpr size_t kMaxTextLength = 10000;

// Returns x rounded to double and opaque to the optimizer, so that
// `a + Opaque(b * c)` cannot become a fused multiply-add.
inline double Opaque(double x) {
  volatile double v = x;
  return v;
}

bool IsAsciiAlnum(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// Detector.URL_RE = https?://[-_.?&~;+=/#0-9A-Za-z]{1,2076}
bool IsUrlChar(char32_t c) {
  if (IsAsciiAlnum(c)) return true;
  switch (c) {
    case '-': case '_': case '.': case '?': case '&': case '~':
    case ';': case '+': case '=': case '/': case '#':
      return true;
    default:
      return false;
  }
}

// MAIL_RE's classes: [-_.0-9A-Za-z] (local part and the domain's tail) and
// [-_0-9A-Za-z] (the domain's head).
bool IsMailChar(char32_t c) { return IsAsciiAlnum(c) || c == '-' || c == '_' || c == '.'; }
bool IsMailHeadChar(char32_t c) { return IsAsciiAlnum(c) || c == '-' || c == '_'; }

// Detector.URL_RE and MAIL_RE are matched by hand, not with RE2: RE2 caps a
// counted repetition at 1000 (URL_RE has {1,2076}), and both patterns reduce
// to linear scans. Checked against Python's re.sub on 30,000 fuzzed strings
// (runs around the 64 / 255 / 2076 limits included).

// URL_RE.sub(' ', text): leftmost matches, left to right, greedy.
std::u32string RemoveUrls(const std::u32string& t) {
  std::u32string out;
  out.reserve(t.size());
  const size_t n = t.size();
  size_t i = 0;
  while (i < n) {
    if (t[i] == 'h' && i + 4 <= n && t[i + 1] == 't' && t[i + 2] == 't' && t[i + 3] == 'p') {
      size_t j = i + 4;
      if (j < n && t[j] == 's') ++j;  // "https" cannot backtrack to "http" + "://"
      if (j + 3 <= n && t[j] == ':' && t[j + 1] == '/' && t[j + 2] == '/') {
        size_t k = j + 3;
        size_t end = k;
        while (end < n && end - k < 2076 && IsUrlChar(t[end])) ++end;
        if (end > k) {
          out.push_back(' ');
          i = end;
          continue;
        }
      }
    }
    out.push_back(t[i]);
    ++i;
  }
  return out;
}

// MAIL_RE.sub(' ', text), MAIL_RE =
//   [-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}
// Python tries each start left to right. '@' is in no class, so a start
// matches only if its run of mail characters reaches an '@' within 64; the
// first such start is max(start of run, '@' - 64). The domain (greedy, with
// backtracking of the head by one) matches head + tail when a tail follows
// the head, else head[:-1] + head[-1] when the head has >= 2 characters.
std::u32string RemoveMails(const std::u32string& t) {
  std::u32string out;
  out.reserve(t.size());
  const size_t n = t.size();
  size_t i = 0;
  while (i < n) {
    if (!IsMailChar(t[i])) {
      out.push_back(t[i]);
      ++i;
      continue;
    }
    size_t at = i;
    while (at < n && IsMailChar(t[at])) ++at;
    size_t match_end = 0;
    if (at < n && t[at] == '@') {
      size_t p = at + 1;
      size_t head = 0;
      while (p + head < n && head < 255 && IsMailHeadChar(t[p + head])) ++head;
      size_t tail = 0;
      while (p + head + tail < n && tail < 255 && IsMailChar(t[p + head + tail])) ++tail;
      if (head >= 1 && tail >= 1) {
        match_end = p + head + tail;
      } else if (head >= 2) {
        match_end = p + head;
      }
    }
    if (match_end == 0) {
      out.append(t, i, at - i);
      i = at;
      continue;
    }
    size_t start = std::max(i, at >= 64 ? at - 64 : size_t{0});
    out.append(t, i, start - i);
    out.push_back(' ');
    i = match_end;
  }
  return out;
}

// Detector.cleaning_text. unicode_block() returns an int, compared there
// with the string 'Latin Extended Additional', so every code point >=
// U+0300 counts as non-Latin.
void DropLatinWhenMostlyNot(std::u32string* text) {
  size_t latin = 0, non_latin = 0;
  for (char32_t ch : *text) {
    if (ch >= 'A' && ch <= 'z') {
      ++latin;
    } else if (ch >= 0x300) {
      ++non_latin;
    }
  }
  if (latin * 2 < non_latin) {
    std::u32string without_latin;
    without_latin.reserve(text->size());
    for (char32_t ch : *text) {
      if (ch < 'A' || ch > 'z') without_latin.push_back(ch);
    }
    *text = std::move(without_latin);
  }
}

}  // namespace

int64_t LangDetector::FindGram(uint64_t key) const {
  const size_t mask = slots_.size() - 1;
  for (size_t s = langdetect::HashSlot(key, slot_shift_);; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.key == key) return slot.row;
    if (slot.key == 0) return -1;
  }
}

char32_t LangDetector::NormalizeChar(char32_t ch) const {
  // NGram.normalize, block by block (unicode_block ranges).
  if (ch <= 0x7F) {  // Basic Latin
    if (ch < 'A' || (ch > 'Z' && ch < 'a') || ch > 'z') return ' ';
    return ch;
  }
  if (ch <= 0xFF) {  // Latin-1 Supplement
    return latin1_excluded_.find(ch) != std::u32string::npos ? U' ' : ch;
  }
  if (ch >= 0x180 && ch <= 0x24F) {  // Latin Extended-B (Romanian)
    if (ch == 0x219) return 0x15F;
    if (ch == 0x21B) return 0x163;
    return ch;
  }
  if (ch >= 0x2000 && ch <= 0x206F) return ' ';  // General Punctuation
  if (ch >= 0x600 && ch <= 0x6FF) return ch == 0x6CC ? 0x64A : ch;  // Arabic
  if (ch >= 0x1E00 && ch <= 0x1EFF) return ch >= 0x1EA0 ? 0x1EC3 : ch;  // Latin Ext. Additional
  if (ch >= 0x3040 && ch <= 0x309F) return 0x3042;  // Hiragana
  if (ch >= 0x30A0 && ch <= 0x30FF) return 0x30A2;  // Katakana
  if ((ch >= 0x3100 && ch <= 0x312F) || (ch >= 0x31A0 && ch <= 0x31BF)) return 0x3105;  // Bopomofo
  if (ch >= kCjkFirst && ch <= kCjkLast) return cjk_map_[ch - kCjkFirst];
  if (ch >= 0xAC00 && ch <= 0xD7AF) return 0xAC00;  // Hangul Syllables
  return ch;
}

std::u32string LangDetector::NormalizeVi(const std::u32string& t) const {
  // ALPHABET_WITH_DMARK.sub(repl): ([TO_NORMALIZE_VI_CHARS])([DMARK_CLASS]).
  std::u32string out;
  out.reserve(t.size());
  const size_t n = t.size();
  for (size_t i = 0; i < n; ++i) {
    // Marks are rare: look at the next character first.
    if (i + 1 < n && t[i + 1] >= dmark_min_ && t[i + 1] <= dmark_max_) {
      size_t a = vi_alphabet_.find(t[i]);
      size_t m = vi_dmarks_.find(t[i + 1]);
      if (a != std::u32string::npos && m != std::u32string::npos) {
        out.push_back(vi_normalized_[m][a]);
        ++i;
        continue;
      }
    }
    out.push_back(t[i]);
  }
  return out;
}

// Detector.append (URLs and mail addresses out, at most kMaxTextLength
// code points, runs of spaces as one) and Detector.cleaning_text.
std::u32string LangDetector::CleanedText(std::string_view input) const {
  std::u32string cleaned = NormalizeVi(RemoveMails(RemoveUrls(py::DecodeUtf8All(input))));
  std::u32string text;
  text.reserve(std::min(cleaned.size(), kMaxTextLength));
  char32_t pre = 0;
  for (size_t i = 0; i < std::min(cleaned.size(), kMaxTextLength); ++i) {
    char32_t ch = cleaned[i];
    if (ch != ' ' || pre != ' ') text.push_back(ch);
    pre = ch;
  }
  DropLatinWhenMostlyNot(&text);
  return text;
}

// Detector._extract_ngrams with NGram.add_char: rows of the known grams.
std::vector<uint32_t> LangDetector::KnownGramRows(const std::u32string& text) const {
  std::vector<uint32_t> ngrams;
  ngrams.reserve(text.size() * 3);
  char32_t grams[3] = {' ', 0, 0};
  size_t len = 1;
  bool capitalword = false;
  for (char32_t raw : text) {
    char32_t ch = NormalizeChar(raw);
    char32_t last = grams[len - 1];
    bool skip = false;
    if (last == ' ') {
      grams[0] = ' ';
      len = 1;
      capitalword = false;
      if (ch == ' ') skip = true;
    } else if (len >= 3) {
      grams[0] = grams[1];
      grams[1] = grams[2];
      len = 2;
    }
    if (!skip) {
      grams[len++] = ch;
      if (py::IsPyUpperChar(ch)) {  // str.isupper() of one character
        if (py::IsPyUpperChar(last)) capitalword = true;
      } else {
        capitalword = false;
      }
    }
    if (capitalword) continue;
    for (size_t n = 1; n <= 3; ++n) {
      if (len < n) break;
      const char32_t* w = grams + (len - n);
      if (n == 1 && w[0] == ' ') continue;
      int64_t row = FindGram(langdetect::PackGram(w, n));
      if (row >= 0) ngrams.push_back(static_cast<uint32_t>(row));
    }
  }
  return ngrams;
}

// Detector._detect_block over the rows of the text's known grams.
void LangDetector::DetectBlock(const std::vector<uint32_t>& ngrams, std::vector<double>* langprob) const {
  const size_t nlang = langs_.size();
  langprob->assign(nlang, 0.0);
  PyRandom rng = seeded_rng_;  // self.random.seed(self.seed), seed = 0
  // A language whose probability reaches 0 stays 0 for the rest of the trial
  // (0 * factor = 0, 0 / sum = 0, and s + 0 = s in the sum), so the loop
  // only touches the live ones, kept contiguous in language order: live[k]
  // is a language, prob[k] its probability. The arithmetic on live
  // languages is Python's, operation for operation.
  std::vector<uint8_t> live(nlang);
  std::vector<double> prob(nlang);
  std::vector<double> factor(nlang);  // by language
  for (int t = 0; t < kTrials; ++t) {
    size_t nlive = nlang;
    for (size_t l = 0; l < nlang; ++l) live[l] = static_cast<uint8_t>(l);
    // _init_probability: [1.0 / len(langlist)] * len(langlist)
    std::fill(prob.begin(), prob.end(), 1.0 / static_cast<double>(nlang));
    // alpha = self.alpha + self.random.gauss(0.0, 1.0) * self.ALPHA_WIDTH
    const double alpha = kAlphaDefault + Opaque(rng.Gauss(0.0, 1.0) * kAlphaWidth);
    // _update_lang_prob: weight = alpha / self.BASE_FREQ;
    // prob[i] *= weight + lang_prob_map[i] (0.0 for languages without the gram).
    const double weight = alpha / kBaseFreq;
    std::fill(factor.begin(), factor.end(), weight);
    for (int i = 0;; ++i) {
      const uint32_t row = ngrams[rng.Choice(ngrams.size())];  // random.choice(ngrams)
      const uint32_t row_end = row_begin_[row + 1];
      for (uint32_t e = row_begin_[row]; e < row_end; ++e) {
        factor[row_langs_[e]] = weight + row_probs_[e];
      }
      for (size_t k = 0; k < nlive; ++k) prob[k] *= factor[live[k]];
      for (uint32_t e = row_begin_[row]; e < row_end; ++e) factor[row_langs_[e]] = weight;
      if (i % 5 == 0) {
        // _normalize_prob: sump = sum(prob) (left to right), p = prob[i] / sump.
        double sump = 0.0;
        for (size_t k = 0; k < nlive; ++k) sump += prob[k];
        double maxp = 0.0;
        size_t kept = 0;
        for (size_t k = 0; k < nlive; ++k) {
          const double p = prob[k] / sump;
          if (maxp < p) maxp = p;
          if (p != 0.0) {
            live[kept] = live[k];
            prob[kept] = p;
            ++kept;
          }
        }
        nlive = kept;
        if (maxp > kConvThreshold || i >= kIterationLimit) break;
      }
    }
    // self.langprob[j] += prob[j] / self.n_trial (dead languages add 0.0).
    for (size_t k = 0; k < nlive; ++k) (*langprob)[live[k]] += prob[k] / kTrials;
  }
}

bool LangDetector::Probabilities(std::string_view input, std::vector<double>* langprob) const {
  const std::vector<uint32_t> ngrams = KnownGramRows(CleanedText(input));
  if (ngrams.empty()) return false;
  DetectBlock(ngrams, langprob);
  return true;
}

bool LangDetector::DetectLangs(std::string_view text,
                               std::vector<std::pair<std::string, double>>* out,
                               std::string* error) const {
  out->clear();
  std::vector<double> langprob;
  if (!Probabilities(text, &langprob)) {
    if (error) *error = "No features in text.";
    return false;
  }
  // _sort_probability: p > PROB_THRESHOLD, sort(reverse=True) keeps ties in
  // language order.
  for (size_t l = 0; l < langprob.size(); ++l) {
    if (langprob[l] > kProbThreshold) out->emplace_back(langs_[l], langprob[l]);
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return true;
}

bool LangDetector::Detect(std::string_view text, std::string* lang, std::string* error) const {
  std::vector<std::pair<std::string, double>> probs;
  if (!DetectLangs(text, &probs, error)) return false;
  *lang = probs.empty() ? "unknown" : probs.front().first;
  return true;
}

}  // namespace evalrun
