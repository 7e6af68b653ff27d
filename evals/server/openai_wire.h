// The OpenAI-compatible wire format: request bodies out, replies in.
// Pure functions, no I/O; tested on the real llama-server replies in
// ../shared/reference/llama-server.
#ifndef EVALRUN_EVALS_SERVER_OPENAI_WIRE_H_
#define EVALRUN_EVALS_SERVER_OPENAI_WIRE_H_

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "evals/base/status.h"
#include "evals/server/types.h"

namespace evalrun {

// The JSON body of POST /v1/chat/completions. `model` is sent when not empty.
std::string ChatRequestBody(const Prompt& prompt, const std::string& model);

// Parses a 200 reply of /chat/completions. A body that is not JSON, carries
// an `error` object, or has no choices is a ServerError naming what is wrong.
// Reasoning is kept apart: `reasoning_content`, else a leading
// <think>...</think> block; an opened but never closed <think> leaves
// content empty and sets unclosed_think.
Status ParseChatReply(std::string_view body, Completion* out);

// llama-server's `timings` object (prompt_n, prompt_ms, predicted_n,
// predicted_ms, cache_n, ...; a missing or non-numeric key reads 0), present.
ServerTimings TimingsOf(const nlohmann::json& timings);

// The message of an error reply ({"error": {"message": ...}}), or the body
// cut to a readable length when it has no such shape.
std::string ErrorMessageOf(std::string_view body);

// Splits a leading <think>...</think> block off `text` (whitespace before it
// allowed). Returns false when there is none.
bool SplitThinkBlock(std::string_view text, std::string* reasoning, std::string* answer,
                     bool* unclosed);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_OPENAI_WIRE_H_
