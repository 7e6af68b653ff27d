// Sentence splitting exactly as NLTK's `sent_tokenize(text)` (English Punkt).
//
// Official checkers count sentences with nltk.tokenize.sent_tokenize, and
// essay haystacks are split with the same function. PunktModel is a
// port of NLTK 3.8's PunktSentenceTokenizer (nltk/tokenize/punkt.py) applied
// with the pre-trained English parameters; `sent_tokenize` adds nothing on
// top of `PunktSentenceTokenizer.tokenize` (no further splitting).
//
// Text is UTF-8. Offsets are byte offsets, always on code point boundaries;
// the sentences are the same as Python's (which counts code points). Python's
// Unicode notions are reproduced where Punkt uses them: `\s`, `str.strip`
// (Unicode whitespace), `\w`/`\d` (Unicode letters and decimal digits),
// `str.isupper`/`islower` on the first letter of a word, and `str.lower`
// (as far as it can change a lookup in the English parameters). Bytes that
// are not valid UTF-8 are treated as single non-space, non-letter characters.
//
// Thread-safety: a loaded PunktModel is immutable; Split is const and
// may run on several threads at once.
#ifndef EVALRUN_SCORERS_PUNKT_H_
#define EVALRUN_SCORERS_PUNKT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

class PunktModel {
 public:
  // Loads the four parameter files from `dir` (e.g. "<data-dir>/punkt-english",
  // see /work/shared/datasets/punkt-english/README.md):
  //   abbrev_types.txt   one abbreviation per line (kept verbatim, spaces too)
  //   collocations.tab   "first<TAB>second" per line
  //   sent_starters.txt  one word per line
  //   ortho_context.tab  "word<TAB>flags" per line, flags a decimal in [0,127]
  // Blank lines are skipped; a trailing "\r" is removed.
  // On success stores a new model in *out (the caller owns it) and returns Ok.
  // Fails with NotFound/IoError naming the file, or InvalidInput naming the
  // file and line of a malformed row (wrong field count, bad flags, duplicate
  // word, empty file); *out is left untouched on failure.
  static Status Load(const std::string& dir, std::unique_ptr<PunktModel>* out);

  // Same result as Python nltk.tokenize.sent_tokenize(text) with the English
  // Punkt model: the sentences in order, each a copy of a substring of `text`
  // (leading whitespace of the first sentence is kept as NLTK keeps it;
  // empty or whitespace-only text gives no sentences).
  // Thread-safe (const, no shared mutable state). Linear in the text size.
  std::vector<std::string> Split(std::string_view text) const;

  // Byte spans [begin, end) into `text` of the same sentences (NLTK's
  // span_tokenize with realign_boundaries=True).
  std::vector<std::pair<size_t, size_t>> SplitSpans(std::string_view text) const;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;
  struct Token;
  struct Scratch;  // per-call buffers, so that const calls share nothing

  PunktModel() = default;

  // True when the context around one candidate ('.', '?' or '!' plus the
  // word before and the token after) holds a sentence break
  // (PunktSentenceTokenizer.text_contains_sentbreak).
  bool ContainsSentbreak(std::string_view context, Scratch* scratch) const;
  void FirstPass(Token* tok) const;
  void SecondPass(Token* tok1, const Token& tok2) const;
  // 1 = sentence starter, 0 = not, -1 = unknown (PunktSentenceTokenizer._ortho_heuristic).
  int OrthoHeuristic(const Token& tok) const;
  int OrthoContext(std::string_view type) const;
  bool IsCollocation(std::string_view first, std::string_view second) const;

  StringSet abbrev_types_;
  StringSet sent_starters_;
  std::vector<std::pair<std::string, std::string>> collocations_;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> ortho_context_;
};

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_PUNKT_H_
