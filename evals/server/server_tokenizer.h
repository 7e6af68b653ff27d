// The server's own tokenizer, over HTTP (parts that size prompts by tokens use it).
//
// llama-server: POST /apply-template {"messages": [...]} gives the templated
// prompt; POST /tokenize {"content", "add_special", "parse_special"} counts
// it. vLLM and SGLang: POST /tokenize {"model", "messages"} answers "count"
// (or "tokens") for a chat, {"prompt"} for plain text. The dialect is found
// on the first call. A server that can count nothing fails with a clear
// Status; the estimator is used only when the card allows it.
//
// Thread-safety: one tokenizer per thread (it owns one transport).
#ifndef EVALRUN_EVALS_SERVER_SERVER_TOKENIZER_H_
#define EVALRUN_EVALS_SERVER_SERVER_TOKENIZER_H_

#include <memory>
#include <string>

#include "evals/server/server_config.h"
#include "evals/server/http.h"
#include "evals/server/tokenizer.h"

namespace evalrun {

// Not thread-safe (one transport); make one per thread.
// `thinking` is passed to the chat template (chat_template_kwargs.
// enable_thinking) as the requests will pass it.
std::unique_ptr<Tokenizer> MakeServerTokenizer(std::unique_ptr<HttpTransport> transport,
                                               const ServerConfig& server, bool thinking);

// A stand-in when the server cannot count: ceil(bytes / 3) plus 5 % and
// 64 tokens of margin, so prompts err on the short side. Only when the card
// sets parts.<name>.allow_estimated_tokens.
std::unique_ptr<Tokenizer> MakeEstimatingTokenizer();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_SERVER_TOKENIZER_H_
