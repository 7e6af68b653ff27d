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
// The instruction interface and the resources it checks with are in
// ifeval_instruction.h; the checkers, by family, in ifeval_check_*.cc.
//
// Thread-safety: a built checker is immutable; Check is const and
// may run on several threads at once (the scoring stage).
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_CHECKERS_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_CHECKERS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "scorers/ifeval/ifeval_instruction.h"

namespace evalrun {

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

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_CHECKERS_H_
