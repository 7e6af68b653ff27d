// instructions_util.py's counts, which IFEval's length checkers use
// (google-research instruction_following_eval): words by nltk's \w+ tokenizer
// and sentences by Punkt. Pure given the model; thread-safe.
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_TEXT_UTIL_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_TEXT_UTIL_H_

#include <string_view>

namespace evalrun {
class PunktModel;
}

namespace evalrun::ifeval {

// instructions_util.count_words: len(nltk RegexpTokenizer(r"\w+").tokenize(text)).
int CountWords(std::string_view text);

// instructions_util.count_sentences: the number of Punkt sentences.
int CountSentences(const PunktModel& punkt, std::string_view text);

}  // namespace evalrun::ifeval

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_TEXT_UTIL_H_
