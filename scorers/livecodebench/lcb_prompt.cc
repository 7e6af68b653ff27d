#include "scorers/livecodebench/lcb_prompt.h"

#include <vector>

namespace evalrun {

namespace {

// The texts of lcb_runner/prompts/code_generation.py (PromptConstants).
constexpr char kSystem[] =
    "You are an expert Python programmer. You will be given a question (problem specification) and will "
    "generate a correct Python program that matches the specification and passes all tests.";
constexpr char kWithStarter[] =
    "You will use the following starter code to write the solution to the problem and enclose your code "
    "within delimiters.";
constexpr char kWithoutStarter[] =
    "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test on "
    "the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python program "
    "runs, it reads the inputs, runs the algorithm and writes output to STDOUT.";

}  // namespace

const std::string& LcbSystemMessage() {
  static const std::string kText = kSystem;
  return kText;
}

std::string LcbUserPrompt(std::string_view question_content, std::string_view starter_code) {
  std::string p = "### Question:\n";
  p += question_content;
  p += "\n\n";
  if (!starter_code.empty()) {
    p += "### Format: ";
    p += kWithStarter;
    p += "\n```python\n";
    p += starter_code;
    p += "\n```\n\n";
  } else {
    p += "### Format: ";
    p += kWithoutStarter;
    p += "\n```python\n# YOUR CODE HERE\n```\n\n";
  }
  p += "### Answer: (use the provided format with backticks)\n\n";
  return p;
}

std::string ExtractLcbCode(std::string_view answer) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (true) {
    size_t nl = answer.find('\n', pos);
    lines.push_back(answer.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  std::vector<size_t> fences;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find("```") != std::string_view::npos) fences.push_back(i);
  if (fences.size() < 2) return "";
  std::string code;
  for (size_t i = fences[fences.size() - 2] + 1; i < fences.back(); ++i) {
    if (i > fences[fences.size() - 2] + 1) code += '\n';
    code += lines[i];
  }
  return code;
}

}  // namespace evalrun
