// The IFEval checkers of language:response_language and
// change_case:capital_word_frequency, english_capital, english_lowercase
// (langdetect, and nltk.word_tokenize).
// Each class ports one class of google-research
// instruction_following_eval/instructions.py (@ 4c4299485319ed72ef782020c81784be5468924e);
// the comment above it names the class and quotes what must match.
#include "scorers/ifeval/ifeval_check_kit.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "evals/base/near_miss.h"
#include "scorers/ifeval/ifeval_nltk_tokenize.h"
#include "scorers/py_unicode.h"

namespace evalrun::ifeval {
namespace {

using py::PyLower;
using py::PyStrip;

// instructions_util.LANGUAGE_CODES (ResponseLanguageChecker formats the
// language's name from it, so any other code is a KeyError upstream).
constexpr const char* kLanguageCodes[] = {
    "en", "es", "pt", "ar", "hi", "fr", "ru", "de", "ja", "it", "bn", "uk", "th", "ur", "ta",
    "te", "bg", "ko", "pl", "he", "fa", "vi", "ne", "sw", "kn", "mr", "gu", "pa", "ml", "fi"};

// ResponseLanguageChecker: langdetect.detect(value) == language; True when
// langdetect raises LangDetectException.
class ResponseLanguage : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    std::optional<std::string> language;
    EVALRUN_RETURN_IF_ERROR(args.Str("language", &language));
    if (!language) return args.Missing("language");
    const std::vector<std::string> codes(std::begin(kLanguageCodes), std::end(kLanguageCodes));
    if (std::find(codes.begin(), codes.end(), *language) == codes.end()) {
      return args.Error("language", "not one of instructions_util.LANGUAGE_CODES: " +
                                        Quote(*language) + DidYouMean(*language, codes));
    }
    language_ = *language;
    return Status::Ok();
  }
  bool Check(const IfevalResources& res, std::string_view value) const override {
    std::string detected;
    if (!Detect(res, id(), value, &detected)) return true;
    return detected == language_;
  }

 private:
  std::string language_;
};

// CapitalWordFrequencyChecker: capital_frequency (random only when None;
// negative values are kept), capital_relation; the number of
// nltk.word_tokenize(value) tokens with str.isupper() <, >= the frequency.
class CapitalWordFrequency : public IfevalInstruction {
 public:
  using IfevalInstruction::IfevalInstruction;
  Status Init(Args& args) {
    std::optional<int64_t> frequency;
    EVALRUN_RETURN_IF_ERROR(args.Int("capital_frequency", &frequency));
    if (!frequency) return args.Missing("capital_frequency");
    frequency_ = *frequency;
    return args.Rel("capital_relation", &relation_);
  }
  bool Check(const IfevalResources& res, std::string_view value) const override {
    int64_t capital = 0;
    for (const std::string& word : NltkWordTokenize(NeedPunkt(res, id()), value)) {
      if (py::PyIsUpper(word)) ++capital;
    }
    return Compare(capital, relation_, frequency_);
  }

 private:
  int64_t frequency_ = 0;
  Relation relation_ = Relation::kAtLeast;
};

// CapitalLettersEnglishChecker / LowercaseLettersEnglishChecker:
// value.isupper() (islower()) and langdetect.detect(value) == "en"; True when
// langdetect raises (only reached when the case test passed).
class EnglishCase : public IfevalInstruction {
 public:
  EnglishCase(std::string id, bool upper) : IfevalInstruction(std::move(id)), upper_(upper) {}
  Status Init(Args&) { return Status::Ok(); }
  bool Check(const IfevalResources& res, std::string_view value) const override {
    if (!(upper_ ? py::PyIsUpper(value) : py::PyIsLower(value))) return false;
    std::string detected;
    if (!Detect(res, id(), value, &detected)) return true;
    return detected == "en";
  }

 private:
  bool upper_;
};

}  // namespace

Status MakeResponseLanguage(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<ResponseLanguage>(std::move(id)), args, out);
}
Status MakeCapitalWordFrequency(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<CapitalWordFrequency>(std::move(id)), args, out);
}
Status MakeEnglishCapital(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<EnglishCase>(std::move(id), true), args, out);
}
Status MakeEnglishLowercase(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  return MakeChecker(std::make_unique<EnglishCase>(std::move(id), false), args, out);
}

}  // namespace evalrun::ifeval
