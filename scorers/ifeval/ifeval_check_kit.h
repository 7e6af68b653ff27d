// What the IFEval checker families share (internal to scorers/; the contract
// of the checkers is ifeval_checkers.h):
//   - Args: build_description's keyword arguments, read from the kwargs
//     object with errors that name the instruction and the argument;
//   - Relation and Compare: _COMPARISON_RELATION;
//   - NeedPunkt / Detect: the resources a checker needs (a missing one is a
//     wiring bug and aborts);
//   - each family's factories, which the registry (ifeval_checkers.cc) lists
//     in instructions_registry.INSTRUCTION_DICT's order.
// The families, one file each: ifeval_check_keywords.cc, _length.cc,
// _format.cc (detectable_content and detectable_format), _language.cc
// (language and change_case), _combination.cc (combination, startend,
// punctuation).
//
// Thread-safety: a checker is built once and then only read; checks are
// const and may run on several threads at once.
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_CHECK_KIT_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_CHECK_KIT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "scorers/ifeval/ifeval_instruction.h"
#include "scorers/ifeval/ifeval_py_regex.h"

namespace evalrun::ifeval {

enum class Relation { kLessThan, kAtLeast };  // _COMPARISON_RELATION

inline bool Compare(int64_t actual, Relation rel, int64_t threshold) {
  return rel == Relation::kLessThan ? actual < threshold : actual >= threshold;
}

// "\"" + s + "\"", for messages.
std::string Quote(std::string_view s);

// Reads build_description's keyword arguments from the kwargs object. A
// getter leaves its output alone when the argument is absent or null, and
// returns InvalidInput `instruction "<id>": argument "<name>": ...` when it
// has the wrong type. `kwargs` must outlive the Args.
class Args {
 public:
  // `names`: the keyword arguments build_description takes.
  Args(std::string_view id, const nlohmann::json& kwargs, std::vector<std::string> names)
      : id_(id), kwargs_(kwargs), names_(std::move(names)) {}

  // Fails unless kwargs is an object or null.
  Status Init() const;

  // A present, non-null value, or nullptr.
  const nlohmann::json* Get(const std::string& name) const;

  Status Int(const std::string& name, std::optional<int64_t>* out);
  Status Str(const std::string& name, std::optional<std::string>* out);
  Status StrList(const std::string& name, std::optional<std::vector<std::string>>* out);
  // A count that upstream replaces by a random one when None or < 0:
  // required here, and >= 0.
  Status Count(const std::string& name, int64_t* out);
  // "less than" / "at least"; upstream draws one when None, raises otherwise.
  Status Rel(const std::string& name, Relation* out);

  // Upstream: TypeError for an unexpected keyword argument (with a "did you
  // mean" here).
  Status CheckNames() const;

  Status Error(const std::string& name, const std::string& what) const;
  // The argument is required (upstream would draw a random value).
  Status Missing(const std::string& name) const;

 private:
  std::string id_;
  const nlohmann::json& kwargs_;
  std::vector<std::string> names_;
};

// PyPattern::Compile, its error reported as argument `name`'s.
Status CompilePattern(Args& args, const std::string& name, std::string_view pattern, bool ignore_case,
                      bool multiline, std::unique_ptr<const PyPattern>* out);

// res.punkt, or abort naming instruction `id` (a wiring bug).
const PunktModel& NeedPunkt(const IfevalResources& res, std::string_view id);

// langdetect.detect(value) through res.lang (abort naming `id` when it is
// null); false when langdetect raises LangDetectException.
bool Detect(const IfevalResources& res, std::string_view id, std::string_view value, std::string* lang);

// Runs checker->Init(args) and hands the checker over on success.
template <typename Checker>
Status MakeChecker(std::unique_ptr<Checker> checker, Args& args, std::unique_ptr<const IfevalInstruction>* out) {
  EVALRUN_RETURN_IF_ERROR(checker->Init(args));
  *out = std::move(checker);
  return Status::Ok();
}

// A factory: builds instruction `id` from `args` (see BuildIfevalInstruction).
using CheckerFactory = Status (*)(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);

// ifeval_check_keywords.cc
Status MakeKeywordExistence(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeKeywordFrequency(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeForbiddenWords(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeLetterFrequency(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
// ifeval_check_length.cc
Status MakeNumberOfSentences(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeNumberOfParagraphs(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeNumberOfWords(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeNthParagraphFirstWord(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
// ifeval_check_format.cc
Status MakeNumberOfPlaceholders(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakePostscript(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeNumberOfBullets(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeConstrainedResponse(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeNumberOfHighlights(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeMultipleSections(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeJsonFormat(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeTitle(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
// ifeval_check_language.cc
Status MakeResponseLanguage(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeCapitalWordFrequency(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeEnglishCapital(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeEnglishLowercase(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
// ifeval_check_combination.cc
Status MakeTwoResponses(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeRepeatPrompt(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeEndPhrase(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeQuotation(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);
Status MakeNoComma(std::string id, Args& args, std::unique_ptr<const IfevalInstruction>* out);

}  // namespace evalrun::ifeval

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_CHECK_KIT_H_
