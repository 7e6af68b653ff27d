// LiveCodeBench's code-generation prompt and code extraction, as
// LiveCodeBench/LiveCodeBench (commit 28fef95e) builds and reads them for a
// chat model (LMStyle.OpenAIChat):
//   lcb_runner/prompts/code_generation.py  PromptConstants.SYSTEM_MESSAGE_GENERIC
//     and get_generic_question_template_answer (stdin form; LeetCode form
//     with the starter code);
//   lcb_runner/utils/extraction_utils.py   extract_code.
// Thread-safety: pure functions.
#ifndef EVALRUN_SCORERS_LIVECODEBENCH_LCB_PROMPT_H_
#define EVALRUN_SCORERS_LIVECODEBENCH_LCB_PROMPT_H_

#include <string>
#include <string_view>

namespace evalrun {

// The system message.
const std::string& LcbSystemMessage();

// The user message: "### Question:\n<content>\n\n", then the format line and
// a ```python block (the starter code, or "# YOUR CODE HERE" for stdin
// problems: an empty starter_code is the stdin form), then
// "### Answer: (use the provided format with backticks)\n\n".
std::string LcbUserPrompt(std::string_view question_content, std::string_view starter_code);

// The code of an answer: split on "\n", the lines between the last two lines
// that contain "```" (anywhere in the line), joined with "\n"; "" when fewer
// than two such lines (the official then grades "", which fails).
std::string ExtractLcbCode(std::string_view answer);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_LIVECODEBENCH_LCB_PROMPT_H_
