// Strict and loose evaluation of one IFEval prompt's response, as Google's
// official checker: google-research instruction_following_eval/evaluation_lib.py
// (@ fe0241392b11f0c2e7fa5ba0c3e98b6d220cf163, same scoring code as
// 4c4299485319ed72ef782020c81784be5468924e): test_instruction_following_strict,
// test_instruction_following_loose and the accuracies of print_report.
//
// Usage: parse each dataset row into an IfevalPromptSpec, Compile it once
// (every id and argument is validated there, so a broken dataset fails before
// any request), then Evaluate* any number of responses.
//
// Upstream details mirrored here:
//  - kwargs reach build_description as they are; evaluation_lib's second call,
//    build_description(prompt=...) "if 'prompt' in get_instruction_args()",
//    never fires: no registered instruction has a `prompt` argument
//    (combination:repeat_prompt takes prompt_to_repeat from kwargs). So the
//    prompt text is carried for reporting only and no checker reads it.
//  - Null kwargs are ignored (see ifeval_checkers.h).
//  - Strict: followed = response.strip() != "" and check_following(response).
//  - Loose: the same on 8 variants (IfevalLooseVariants); followed when any
//    variant passes.
//
// Thread-safety: a compiled IfevalPrompt is immutable and its Evaluate*
// methods may run concurrently.
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_EVAL_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_EVAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "scorers/ifeval/ifeval_checkers.h"

namespace evalrun {

// One row of input_data.jsonl.
struct IfevalPromptSpec {
  int64_t key = 0;
  std::string prompt;
  std::vector<std::string> instruction_ids;
  std::vector<nlohmann::json> kwargs;  // one per id: an object (or null)
};

// Parses one input_data.jsonl row: {"key": int, "prompt": str,
// "instruction_id_list": [str], "kwargs": [object]} (other fields are
// ignored). `where` names the row in messages ("input_data.jsonl:12").
// On failure returns InvalidInput naming `where` and the field; *out is then
// unspecified.
Status ParseIfevalPromptSpec(const nlohmann::json& row, const std::string& where,
                             IfevalPromptSpec* out);

struct IfevalVerdict {
  bool follow_all = false;        // all(follow_list)
  std::vector<bool> follow_list;  // one per instruction, in spec order
};

class IfevalPrompt {
 public:
  // Builds every instruction of `spec`. On success stores the prompt in *out
  // (caller owns it). Fails with InvalidInput such as
  //   prompt 1001: instruction 2 "keywords:frequency": argument "relation": ...
  // for an unknown id, a bad argument, or kwargs not matching the ids in
  // number; *out is left untouched.
  static Status Compile(const IfevalPromptSpec& spec, std::unique_ptr<const IfevalPrompt>* out);

  int64_t key() const { return key_; }
  const std::string& prompt() const { return prompt_; }
  const std::vector<std::string>& instruction_ids() const { return ids_; }

  // test_instruction_following_strict. Never fails.
  IfevalVerdict EvaluateStrict(const IfevalResources& res, std::string_view response) const;
  // test_instruction_following_loose. Never fails.
  IfevalVerdict EvaluateLoose(const IfevalResources& res, std::string_view response) const;

 private:
  IfevalPrompt() = default;

  int64_t key_ = 0;
  std::string prompt_;
  std::vector<std::string> ids_;
  std::vector<std::unique_ptr<const IfevalInstruction>> instructions_;
};

// The 8 responses test_instruction_following_loose tries, in its order:
// response, response without '*', without its first line, without its last
// line, without both (each of these three .strip()ped), then the last three
// without '*'.
std::vector<std::string> IfevalLooseVariants(std::string_view response);

// print_report's numbers for a set of verdicts (strict or loose).
struct IfevalAccuracy {
  struct Count {
    int64_t total = 0;
    int64_t followed = 0;
  };
  int64_t prompt_total = 0;
  int64_t prompt_correct = 0;          // prompts with all instructions followed
  int64_t instruction_total = 0;
  int64_t instruction_correct = 0;
  std::map<std::string, Count> by_category;     // "keywords" (tier 0: id before ':')
  std::map<std::string, Count> by_instruction;  // "keywords:frequency" (tier 1)

  // Adds one prompt; `ids` and `verdict.follow_list` have the same length.
  void Add(const std::vector<std::string>& ids, const IfevalVerdict& verdict);
  double PromptLevel() const;       // prompt_correct / prompt_total (0 when empty)
  double InstructionLevel() const;  // instruction_correct / instruction_total
};

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_EVAL_H_
