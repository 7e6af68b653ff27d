// MMLU-Pro's own answer extraction: the official chains of TIGER-AI-Lab/
// MMLU-Pro as named profiles of parts.mmlupro.extract (`official`), and the
// older scripts that produced published predictions (the parity test:
// tests/benchmarks/mmlupro/mmlupro_official_parity_test.cc).
//
// Thread-safe: patterns are compiled once (RE2 is linear-time on any model
// output). Every function returns the extracted letter, or 0 when none.
#ifndef EVALRUN_SCORERS_MMLUPRO_MMLUPRO_EXTRACT_H_
#define EVALRUN_SCORERS_MMLUPRO_MMLUPRO_EXTRACT_H_

#include <string_view>

namespace evalrun {

// `official`: TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py, exactly: the text
// is first cleaned with response.replace('**', ''), then
//   1. re.search(r"answer is \(?([A-J])\)?")
//   2. re.search(r'.*[aA]nswer:\s*([A-J])')
//   3. the last standalone [A-J] (r"\b[A-J]\b(?!.*\b[A-J]\b)", re.DOTALL),
// with Python's Unicode \s and \b semantics. No random guess afterwards.
char ExtractOfficialMmluPro(std::string_view response);

// The same chain without the '**' clean-up (the scripts before it was added,
// which produced some of the published predictions).
char ExtractOfficialMmluProNoCleanup(std::string_view response);

// TIGER-AI-Lab/MMLU-Pro run_gpt4o.py / run_deepseek.py, which produced the
// published gpt4o and deepseek predictions: only
// re.search(r"answer is \(?([ABCDEFGHIJ])\)?") on the raw response, no
// clean-up and no fallback.
char ExtractMmluProAnswerIsOnly(std::string_view response);

}  // namespace evalrun

#endif  // EVALRUN_SCORERS_MMLUPRO_MMLUPRO_EXTRACT_H_
