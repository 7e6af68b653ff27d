// The IFEval checkers of length_constraints:number_sentences,
// number_paragraphs, number_words, nth_paragraph_first_word.
// Each class ports one class of google-research
// instruction_following_eval/instructions.py (@ 4c4299485319ed72ef782020c81784be5468924e);
// the comment above it names the class and quotes what must match.
#include "scorers/ifeval/ifeval_check_kit.h"

#include <optional>
#include <string>
#include <vector>

#include "scorers/ifeval/ifeval_text_util.h"
#include "scorers/py_unicode.h"

namespace evalrun::ifeval {
namespace {

using py::PyLower;
using py::PyStrip;

// NumberOfSentences: instructions_util.count_sentences(value) (Punkt) <, >=
// num_sentences (random when None or < 0).
class NumberOfSentences : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    EVALRUN_RETURN_IF_ERROR(args.Count("num_sentences", &threshold_));
    return args.Rel("relation", &relation_);
  }
  bool Check(const IfevalResources& res, std::string_view value) const override {
    return Compare(CountSentences(NeedPunkt(res, id()), value), relation_, threshold_);
  }

 private:
  int64_t threshold_ = 0;
  Relation relation_ = Relation::kAtLeast;
};

// ParagraphChecker: re.split(r"\s?\*\*\*\s?", value); empty pieces are
// dropped at either end and fail the check in the middle; the count must
// equal num_paragraphs.
class NumberOfParagraphs : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) { return args.Count("num_paragraphs", &num_paragraphs_); }
  bool Check(const IfevalResources&, std::string_view value) const override {
    static const auto* re = CompilePyFixed(R"(\s?\*\*\*\s?)", false).release();
    const std::vector<std::string_view> paragraphs = SplitByRegex(*re, value);
    int64_t count = static_cast<int64_t>(paragraphs.size());
    for (size_t i = 0; i < paragraphs.size(); ++i) {
      if (!PyStrip(paragraphs[i]).empty()) continue;
      if (i == 0 || i == paragraphs.size() - 1) {
        --count;
      } else {
        return false;
      }
    }
    return count == num_paragraphs_;
  }

 private:
  int64_t num_paragraphs_ = 0;
};

// NumberOfWords: instructions_util.count_words(value) (nltk RegexpTokenizer
// r"\w+") <, >= num_words (random when None or < 0).
class NumberOfWords : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    EVALRUN_RETURN_IF_ERROR(args.Count("num_words", &num_words_));
    return args.Rel("relation", &relation_);
  }
  bool Check(const IfevalResources&, std::string_view value) const override {
    return Compare(CountWords(value), relation_, num_words_);
  }

 private:
  int64_t num_words_ = 0;
  Relation relation_ = Relation::kAtLeast;
};

// ParagraphFirstWordCheck: paragraphs = re.split(r"\n\n", value); the count
// of non-blank ones must equal num_paragraphs, and paragraphs[nth - 1] (an
// index into the raw split, blank pieces included) stripped must be
// non-empty and start with first_word: its first whitespace-separated word,
// lstrip("'") then lstrip('"'), cut at the first of . , ? ! ' " and lowered
// one character at a time.
class NthParagraphFirstWord : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    EVALRUN_RETURN_IF_ERROR(args.Count("num_paragraphs", &num_paragraphs_));
    std::optional<int64_t> nth;
    EVALRUN_RETURN_IF_ERROR(args.Int("nth_paragraph", &nth));
    if (!nth) return args.Missing("nth_paragraph");
    if (*nth <= 0 || *nth > num_paragraphs_) {
      return args.Error("nth_paragraph",
                        "must be in [1, num_paragraphs] (upstream draws a random value "
                        "otherwise), got " + std::to_string(*nth));
    }
    nth_ = *nth;
    std::optional<std::string> first_word;
    EVALRUN_RETURN_IF_ERROR(args.Str("first_word", &first_word));
    if (!first_word) return args.Missing("first_word");
    first_word_ = PyLower(*first_word);
    return Status::Ok();
  }
  bool Check(const IfevalResources&, std::string_view value) const override {
    std::vector<std::string_view> paragraphs;
    size_t start = 0;
    while (true) {
      const size_t at = value.find("\n\n", start);
      if (at == std::string_view::npos) break;
      paragraphs.push_back(value.substr(start, at - start));
      start = at + 2;
    }
    paragraphs.push_back(value.substr(start));
    int64_t count = static_cast<int64_t>(paragraphs.size());
    for (std::string_view p : paragraphs) {
      if (PyStrip(p).empty()) --count;
    }
    if (nth_ > count) return false;
    const std::string_view paragraph = PyStrip(paragraphs[nth_ - 1]);
    if (paragraph.empty()) return false;
    std::string_view word = py::PySplitWhitespace(paragraph)[0];
    word = py::PyLStripChars(word, "'");
    word = py::PyLStripChars(word, "\"");
    std::string first_word;
    size_t pos = 0;
    while (pos < word.size()) {
      const char32_t c = py::DecodeUtf8(word, &pos);
      if (c == '.' || c == ',' || c == '?' || c == '!' || c == '\'' || c == '"') break;
      first_word += py::PyLowerChar(c);
    }
    return count == num_paragraphs_ && first_word == first_word_;
  }

 private:
  int64_t num_paragraphs_ = 0;
  int64_t nth_ = 1;
  std::string first_word_;
};

}  // namespace

Status MakeNumberOfSentences(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NumberOfSentences>(std::move(id)), args, out);
}
Status MakeNumberOfParagraphs(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NumberOfParagraphs>(std::move(id)), args, out);
}
Status MakeNumberOfWords(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NumberOfWords>(std::move(id)), args, out);
}
Status MakeNthParagraphFirstWord(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<NthParagraphFirstWord>(std::move(id)), args, out);
}

}  // namespace evalrun::ifeval
