// Counting tokens the way the server will (parts that size prompts by tokens use it).
//
// Thread-safety: thread-compatible: one instance per thread, or a lock around it.
#ifndef EVALRUN_EVALS_SERVER_TOKENIZER_H_
#define EVALRUN_EVALS_SERVER_TOKENIZER_H_

#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

// Thread-compatible: one instance per thread, or external locking.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Tokens of `text` on its own, with no special tokens added (llama-server
  // POST /tokenize {"content": text, "add_special": false}).
  virtual Status Count(std::string_view text, int* n) = 0;

  // Prompt tokens of a chat request whose only message is the user message
  // `content`, after the server's chat template and its special tokens:
  // exactly what the server's usage.prompt_tokens will say.
  virtual Status CountChat(std::string_view content, int* n) = 0;

  // How many round trips to the server so far (for the bench and tests).
  virtual int calls() const = 0;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_TOKENIZER_H_
