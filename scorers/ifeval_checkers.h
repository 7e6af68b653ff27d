// IFEval's instruction checkers, verdict for verdict as Google's official
// checker: google-research/google-research instruction_following_eval,
// instructions.py @ 4c4299485319ed72ef782020c81784be5468924e (same logic as
// 83282e4ec6e140949e0f51d04e279be7949409ff) and instructions_registry.py
// @ 1d49f2c0d5506a6e11115726164d42f6b7b7b95a (25 registered ids).
//
// Each upstream Instruction subclass is built once from its kwargs
// (build_description) and then checks responses (check_following). Upstream
// draws a random value when an argument is missing (None, and for some
// arguments also negative or empty); evalrun never draws: a missing or
// malformed argument is an InvalidInput naming the instruction and the
// argument, so a broken dataset fails before any request is sent.
//
// Arguments whose JSON value is null are ignored, whatever their name:
// upstream treats a None argument exactly like an absent one, and the Hugging
// Face copy of the dataset carries every argument name with null values.
// Falsy non-null values are NOT dropped (lm-evaluation-harness drops them; the
// official evaluation_lib passes them on): e.g. frequency 0 stays 0.
// A non-null argument the instruction does not take is an error (upstream:
// TypeError).
//
// Thread-safety: a built instruction is immutable; Check may be called from
// many threads at once, given resources that are themselves thread-safe
// (PunktModel::Split and LangDetector::Detect are const and thread-safe).
#ifndef EVALRUN_SCORERS_IFEVAL_CHECKERS_H_
#define EVALRUN_SCORERS_IFEVAL_CHECKERS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

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

// Builds instruction `id` from its kwargs object (a JSON object, or null for
// none). On success stores the instruction in *out (the caller owns it). On
// failure returns InvalidInput such as
//   instruction "keywords:frequency": argument "relation": expected "less than"
//   or "at least", got "more than"
// or, for an unknown id, `unknown instruction id "x" (did you mean "y"?)`;
// *out is left untouched.
Status BuildIfevalInstruction(std::string_view id, const nlohmann::json& kwargs,
                              std::unique_ptr<const IfevalInstruction>* out);

// Every id of instructions_registry.INSTRUCTION_DICT, in registry order.
const std::vector<std::string>& IfevalInstructionIds();

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_IFEVAL_CHECKERS_H_
