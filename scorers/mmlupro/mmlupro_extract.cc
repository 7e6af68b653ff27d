#include "scorers/mmlupro/mmlupro_extract.h"

#include <re2/re2.h>

#include <string>

#include "scorers/answer_extract.h"
#include "scorers/choice_extract.h"

namespace evalrun {
namespace {

// Python's str `\s` (str.isspace) as an RE2 class.
#define PY_SPACE "[\\t\\n\\x{0b}\\f\\r\\x{1c}-\\x{1f} \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]"

char OfficialChain(std::string_view text) {
  static const RE2 kAnswerIs("answer is \\(?([A-J])\\)?");
  static const RE2 kAnswerColon(".*[aA]nswer:" PY_SPACE "*([A-J])");
  std::string letter;
  if (RE2::PartialMatch(text, kAnswerIs, &letter)) return letter[0];
  if (RE2::PartialMatch(text, kAnswerColon, &letter)) return letter[0];
  // Last standalone A-J (Python \b: Unicode word characters).
  for (size_t i = text.size(); i-- > 0;) {
    char c = text[i];
    if (c >= 'A' && c <= 'J' && StandsAlone(text, i)) return c;
  }
  return 0;
}

}  // namespace

char ExtractOfficialMmluPro(std::string_view response) {
  std::string cleaned;
  cleaned.reserve(response.size());
  // response.replace('**', ''): non-overlapping, left to right.
  for (size_t i = 0; i < response.size(); ++i) {
    if (response[i] == '*' && i + 1 < response.size() && response[i + 1] == '*') {
      ++i;
      continue;
    }
    cleaned.push_back(response[i]);
  }
  return OfficialChain(cleaned);
}

char ExtractOfficialMmluProNoCleanup(std::string_view response) { return OfficialChain(response); }

char ExtractMmluProAnswerIsOnly(std::string_view response) {
  static const RE2 kAnswerIs("answer is \\(?([A-J])\\)?");
  std::string letter;
  return RE2::PartialMatch(response, kAnswerIs, &letter) ? letter[0] : 0;
}

namespace {
// The official chain by name, for a task file's choice answer
// (scorers/answer_extract.h): "mmlupro-official".
const LetterChainRegistrar kOfficialChain("mmlupro-official", [](std::string_view answer, int) {
  return ExtractOfficialMmluPro(answer);
});
}  // namespace

}  // namespace evalrun
