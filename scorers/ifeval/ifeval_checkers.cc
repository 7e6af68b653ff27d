// The registry of IFEval's instructions (instructions_registry.py @
// 1d49f2c0d5506a6e11115726164d42f6b7b7b95a): each id with its factory and the
// keyword arguments build_description takes. The checkers themselves are in
// the family files (ifeval_check_kit.h lists them).
#include "scorers/ifeval/ifeval_checkers.h"

#include <string>
#include <utility>
#include <vector>

#include "evals/base/near_miss.h"
#include "scorers/ifeval/ifeval_check_kit.h"

namespace evalrun {
namespace {

struct Entry {
  const char* id;
  ifeval::CheckerFactory make;
  std::vector<std::string> args;  // build_description's keyword arguments
};

const std::vector<Entry>& Registry() {
  static const std::vector<Entry> registry = {
      {"keywords:existence", ifeval::MakeKeywordExistence, {"keywords"}},
      {"keywords:frequency", ifeval::MakeKeywordFrequency, {"keyword", "frequency", "relation"}},
      {"keywords:forbidden_words", ifeval::MakeForbiddenWords, {"forbidden_words"}},
      {"keywords:letter_frequency", ifeval::MakeLetterFrequency, {"letter", "let_frequency", "let_relation"}},
      {"language:response_language", ifeval::MakeResponseLanguage, {"language"}},
      {"length_constraints:number_sentences", ifeval::MakeNumberOfSentences, {"num_sentences", "relation"}},
      {"length_constraints:number_paragraphs", ifeval::MakeNumberOfParagraphs, {"num_paragraphs"}},
      {"length_constraints:number_words", ifeval::MakeNumberOfWords, {"num_words", "relation"}},
      {"length_constraints:nth_paragraph_first_word", ifeval::MakeNthParagraphFirstWord,
       {"num_paragraphs", "nth_paragraph", "first_word"}},
      {"detectable_content:number_placeholders", ifeval::MakeNumberOfPlaceholders, {"num_placeholders"}},
      {"detectable_content:postscript", ifeval::MakePostscript, {"postscript_marker"}},
      {"detectable_format:number_bullet_lists", ifeval::MakeNumberOfBullets, {"num_bullets"}},
      {"detectable_format:constrained_response", ifeval::MakeConstrainedResponse, {}},
      {"detectable_format:number_highlighted_sections", ifeval::MakeNumberOfHighlights, {"num_highlights"}},
      {"detectable_format:multiple_sections", ifeval::MakeMultipleSections,
       {"section_spliter", "num_sections"}},
      {"detectable_format:json_format", ifeval::MakeJsonFormat, {}},
      {"detectable_format:title", ifeval::MakeTitle, {}},
      {"combination:two_responses", ifeval::MakeTwoResponses, {}},
      {"combination:repeat_prompt", ifeval::MakeRepeatPrompt, {"prompt_to_repeat"}},
      {"startend:end_checker", ifeval::MakeEndPhrase, {"end_phrase"}},
      {"change_case:capital_word_frequency", ifeval::MakeCapitalWordFrequency,
       {"capital_frequency", "capital_relation"}},
      {"change_case:english_capital", ifeval::MakeEnglishCapital, {}},
      {"change_case:english_lowercase", ifeval::MakeEnglishLowercase, {}},
      {"punctuation:no_comma", ifeval::MakeNoComma, {}},
      {"startend:quotation", ifeval::MakeQuotation, {}},
  };
  return registry;
}

}  // namespace

const std::vector<std::string>& IfevalInstructionIds() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const Entry& e : Registry()) v.emplace_back(e.id);
    return v;
  }();
  return ids;
}

Status BuildIfevalInstruction(std::string_view id, const nlohmann::json& kwargs,
                              std::unique_ptr<const IfevalInstruction>* out) {
  for (const Entry& e : Registry()) {
    if (id != e.id) continue;
    ifeval::Args args(id, kwargs, e.args);
    EVALRUN_RETURN_IF_ERROR(args.Init());
    // An unknown (e.g. misspelt) argument explains a missing one: report it first.
    EVALRUN_RETURN_IF_ERROR(args.CheckNames());
    std::unique_ptr<const IfevalInstruction> instr;
    EVALRUN_RETURN_IF_ERROR(e.make(std::string(id), args, &instr));
    *out = std::move(instr);
    return Status::Ok();
  }
  return Status::InvalidInput("unknown instruction id " + ifeval::Quote(id) +
                              DidYouMean(id, IfevalInstructionIds()));
}

}  // namespace evalrun
