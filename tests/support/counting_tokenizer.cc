#include "tests/support/counting_tokenizer.h"

namespace evalrun::testing {

Status CountingTokenizer::Count(std::string_view text, int* n) {
  ++calls_;
  *n = count_(text);
  return Status::Ok();
}

Status CountingTokenizer::CountChat(std::string_view content, int* n) {
  ++calls_;
  *n = count_chat_(content);
  return Status::Ok();
}

}  // namespace evalrun::testing
