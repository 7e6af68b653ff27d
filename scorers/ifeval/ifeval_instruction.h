// One IFEval instruction, built and ready to check responses
// (ifeval_checkers.h builds them from a prompt's instruction ids and kwargs),
// and what some checkers need besides the response.
//
// Thread-safety: a built instruction is immutable; Check may be called from
// many threads at once, given resources that are themselves thread-safe
// (PunktModel::Split and LangDetector::Detect are const and thread-safe).
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_INSTRUCTION_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_INSTRUCTION_H_

#include <string>
#include <string_view>
#include <utility>

namespace evalrun {

class PunktModel;
class LangDetector;

// What some checkers need besides the response; not owned, must outlive
// every Check call that uses them.
//   punkt: length_constraints:number_sentences (instructions_util.count_sentences)
//          and change_case:capital_word_frequency (nltk.word_tokenize).
//   lang:  language:response_language, change_case:english_capital,
//          change_case:english_lowercase (langdetect.detect, seed 0).
// A checker that needs a null resource aborts the program (a wiring bug,
// not a data error): load both before scoring.
struct IfevalResources {
  const PunktModel* punkt = nullptr;
  const LangDetector* lang = nullptr;
};

class IfevalInstruction {
 public:
  explicit IfevalInstruction(std::string id) : id_(std::move(id)) {}
  virtual ~IfevalInstruction() = default;

  // The registry id, e.g. "keywords:frequency".
  const std::string& id() const { return id_; }

  // instructions.py <Class>.check_following(value): true when `value`
  // (UTF-8) follows the instruction. Never fails.
  virtual bool Check(const IfevalResources& res, std::string_view value) const = 0;

 private:
  std::string id_;
};

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_INSTRUCTION_H_
