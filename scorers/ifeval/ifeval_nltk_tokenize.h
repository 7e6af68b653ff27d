// nltk.word_tokenize as of NLTK 3.8, which IFEval's
// change_case:capital_word_frequency checker uses (ifeval_nltk_tokenize.cc
// says how each of NLTKWordTokenizer's substitutions is ported). Pure given
// the model; thread-safe.
#ifndef EVALRUN_SCORERS_IFEVAL_IFEVAL_NLTK_TOKENIZE_H_
#define EVALRUN_SCORERS_IFEVAL_IFEVAL_NLTK_TOKENIZE_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun {
class PunktModel;
}

namespace evalrun::ifeval {

// nltk.word_tokenize(text) (NLTK 3.8: Punkt sentences, then
// NLTKWordTokenizer.tokenize on each).
std::vector<std::string> NltkWordTokenize(const PunktModel& punkt, std::string_view text);
// NLTKWordTokenizer().tokenize(text) for one sentence.
std::vector<std::string> NltkTreebankTokenize(std::string_view text);

}  // namespace evalrun::ifeval

#endif  // EVALRUN_SCORERS_IFEVAL_IFEVAL_NLTK_TOKENIZE_H_
