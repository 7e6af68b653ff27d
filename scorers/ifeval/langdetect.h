// langdetect 1.0.9 (Debian python3-langdetect; upstream Mimino666/langdetect,
// a port of Nakatani Shuyo's language-detection), answer for answer.
//
// IFEval's official checker calls langdetect.detect(text) for "response
// language" and for the English check of all-capital / all-lowercase answers.
// On short texts langdetect often names another language ("YES" -> cy), and
// the verdict follows it, so this is a port of its algorithm, random draws
// included, with DetectorFactory.seed = 0:
//   - text: URL and e-mail removal (Detector.URL_RE, MAIL_RE), Vietnamese
//     normalisation, space collapsing, the first 10000 code points, Latin
//     removal when non-Latin code points outnumber Latin ones 2:1
//     (cleaning_text, including its quirk of counting every code point
//     >= U+0300 as non-Latin);
//   - 1-3-gram extraction with NGram.normalize and the capital-word rule;
//   - 7 trials, each: alpha = 0.5 + gauss(0, 1) * 0.05, random.choice of an
//     n-gram, p *= alpha/10000 + P(gram|lang), normalised every 5th step
//     until max p > 0.99999 or 1000 steps; random.Random seeded with 0 once
//     per detection (Detector._detect_block), so every call draws the same
//     sequence and answers depend on the text alone.
// Floating-point operations run in langdetect's order (see langdetect.cc).
//
// Languages are indexed in a fixed order: the order os.listdir() gave for
// langdetect's profiles/ on the machine that produced the reference
// detections (Python uses the directory order, which only changes the last
// bits of the probabilities, through the order of summation).
//
// Text is UTF-8; Python sees code points, so invalid UTF-8 bytes are read as
// U+FFFD each.
//
// A loaded LangDetector is immutable: Detect and DetectLangs are const and
// may run on many threads at once.
#ifndef EVALRUN_SCORERS_IFEVAL_LANGDETECT_H_
#define EVALRUN_SCORERS_IFEVAL_LANGDETECT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evals/base/py_random.h"
#include "evals/base/status.h"

namespace evalrun {

class LangDetector {
 public:
  // Loads `dir`/messages.properties (NGram's normalisation tables) and the 55
  // profiles `dir`/profiles/<lang> (JSON: name, freq, n_words). On success
  // stores a detector in *out. Fails with NotFound / IoError / InvalidInput
  // naming the file (and key) when a file is missing, unreadable, not the
  // expected JSON, or when profiles/ holds a file langdetect 1.0.9 does not
  // ship (Python would try to load it; dot files are skipped as Python does).
  static Status Load(const std::string& dir, std::unique_ptr<LangDetector>* out);

  // == langdetect.detect(text) with DetectorFactory.seed = 0. Returns true
  // and stores the language code ("en", "zh-cn", ...; "unknown" when no
  // language reaches probability 0.1) in *lang. Returns false when langdetect
  // raises ("No features in text."), with its message in *error if given.
  bool Detect(std::string_view text, std::string* lang, std::string* error = nullptr) const;

  // == langdetect.detect_langs(text): the (lang, prob) pairs with prob > 0.1,
  // highest first, ties in language order. Same failure as Detect; *out is
  // cleared first.
  bool DetectLangs(std::string_view text, std::vector<std::pair<std::string, double>>* out,
                   std::string* error = nullptr) const;

  // The languages in index order (DetectorFactory.langlist).
  const std::vector<std::string>& langs() const { return langs_; }

 private:
  LangDetector() : seeded_rng_(0) {}

  struct PendingGram;  // (gram, language, probability) read from a profile

  Status LoadMessages(const std::string& path);
  Status AddProfile(const std::string& path, size_t index, std::vector<PendingGram>* grams);
  void BuildGramTable(std::vector<PendingGram>* grams);

  // Returns the gram's row, or -1 when no profile has it.
  int64_t FindGram(uint64_t key) const;
  char32_t NormalizeChar(char32_t ch) const;
  std::u32string NormalizeVi(const std::u32string& text) const;
  // Runs the 7 trials; false when the text has no known n-gram.
  bool Probabilities(std::string_view text, std::vector<double>* langprob) const;
  // Its steps: the text as the detector reads it, the rows of its known
  // n-grams, and the trials over them.
  std::u32string CleanedText(std::string_view input) const;
  std::vector<uint32_t> KnownGramRows(const std::u32string& text) const;
  void DetectBlock(const std::vector<uint32_t>& ngrams, std::vector<double>* langprob) const;

  std::vector<std::string> langs_;

  // Grams (1-3 code points, packed by PackGram in langdetect_grams.h) in an
  // open-addressing table of (key, row); key 0 marks an empty slot. Row r's
  // languages and probabilities are row_langs_/row_probs_[row_begin_[r],
  // row_begin_[r + 1]), in language order.
  struct Slot {
    uint64_t key;
    uint32_t row;
  };
  std::vector<Slot> slots_;
  int slot_shift_ = 64;
  std::vector<uint32_t> row_begin_;
  std::vector<uint8_t> row_langs_;
  std::vector<double> row_probs_;

  // messages.properties
  std::u32string latin1_excluded_;              // NGram.LATIN1_EXCLUDE
  std::u32string vi_alphabet_;                  // TO_NORMALIZE_VI_CHARS
  std::u32string vi_dmarks_;                    // DMARK_CLASS
  char32_t dmark_min_ = 0, dmark_max_ = 0;      // its smallest and largest
  std::vector<std::u32string> vi_normalized_;   // NORMALIZED_VI_CHARS_03xx
  std::vector<char32_t> cjk_map_;               // kCjkFirst..kCjkLast -> its class's first
  // NGram's CJK range (UNICODE_CJK_UNIFIED_IDEOGRAPHS), which cjk_map_ covers.
  static constexpr char32_t kCjkFirst = 0x4E00;
  static constexpr char32_t kCjkLast = 0x9FFF;

  PyRandom seeded_rng_;  // random.Random() after seed(0); copied per call
};

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_IFEVAL_LANGDETECT_H_
