// A Tokenizer (evals/server/tokenizer.h) whose counts come from two plain
// functions, with the round trips a real one would make counted; the fakes
// of the RULER and fit tests differ only in those functions. Tests only.
//
//   class FakeTokenizer : public testing::CountingTokenizer {
//    public:
//     FakeTokenizer() : CountingTokenizer(Words, [](std::string_view c) { return Words(c) + 9; }) {}
//   };
#ifndef EVALRUN_TESTS_SUPPORT_COUNTING_TOKENIZER_H_
#define EVALRUN_TESTS_SUPPORT_COUNTING_TOKENIZER_H_

#include <string_view>

#include "evals/server/tokenizer.h"

namespace evalrun::testing {

class CountingTokenizer : public Tokenizer {
 public:
  using CountFn = int (*)(std::string_view);

  // `count` answers Count(text), `count_chat` CountChat(content).
  CountingTokenizer(CountFn count, CountFn count_chat) : count_(count), count_chat_(count_chat) {}

  // Never fail; each call adds one to calls().
  Status Count(std::string_view text, int* n) override;
  Status CountChat(std::string_view content, int* n) override;
  int calls() const override { return calls_; }

 private:
  CountFn count_;
  CountFn count_chat_;
  int calls_ = 0;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_COUNTING_TOKENIZER_H_
