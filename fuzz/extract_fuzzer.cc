// libFuzzer target: the multiple-choice answer extractors on arbitrary model
// output (scorers/choice_extract.h, scorers/mmlupro/mmlupro_extract.h,
// evals/benchmarks/gpqa/gpqa_data.h).
//
// Input: the first byte picks the number of options (1..10) for
// ExtractFirstLetter; the rest is the response. Besides running clean under
// the sanitizers, the extractors must keep their contracts:
//  - every result is 0 or a letter the pattern can produce;
//  - without any '*' in the text, the official chain with and without its
//    '**' clean-up agree, and when "answer is (X)" matches the official
//    chain returns that letter (its first step is the same pattern);
//  - StripMarkdownEmphasis never grows the text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "evals/benchmarks/gpqa/gpqa_data.h"
#include "scorers/choice_extract.h"
#include "scorers/mmlupro/mmlupro_extract.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

bool InRange(char c, char first, char last) { return c >= first && c <= last; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int num_options = 1 + data[0] % 10;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  const char first = evalrun::ExtractFirstLetter(text, num_options);
  Require(first == 0 || InRange(first, 'A', static_cast<char>('A' + num_options - 1)));

  const char official = evalrun::ExtractOfficialMmluPro(text);
  const char no_cleanup = evalrun::ExtractOfficialMmluProNoCleanup(text);
  const char answer_is = evalrun::ExtractMmluProAnswerIsOnly(text);
  for (char c : {official, no_cleanup, answer_is}) Require(c == 0 || InRange(c, 'A', 'J'));
  if (answer_is != 0) Require(text.find("answer is") != std::string_view::npos);
  if (text.find('*') == std::string_view::npos) {
    Require(official == no_cleanup);
    if (answer_is != 0) Require(official == answer_is);
  }

  const char gpqa = evalrun::ExtractSimpleEvalsLetter(text);
  Require(gpqa == 0 || InRange(gpqa, 'A', 'D') || InRange(gpqa, 'a', 'd'));

  Require(evalrun::StripMarkdownEmphasis(text).size() <= text.size());
  return 0;
}
