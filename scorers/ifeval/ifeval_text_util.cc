#include "scorers/ifeval/ifeval_text_util.h"

#include "scorers/punkt.h"
#include "scorers/py_unicode.h"

namespace evalrun::ifeval {

int CountWords(std::string_view text) {
  int words = 0;
  bool in_word = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const bool w = py::IsPyWord(py::DecodeUtf8(text, &pos));
    if (w && !in_word) ++words;
    in_word = w;
  }
  return words;
}

int CountSentences(const PunktModel& punkt, std::string_view text) {
  return static_cast<int>(punkt.SplitSpans(text).size());
}

}  // namespace evalrun::ifeval
