// The bodies the fake llama-server answers with, key for key and in
// llama-server b10470's order (../shared/reference/llama-server/*.body):
// error objects, /props, /models, /metrics, the generation settings of a
// task, and the chat and completion replies and stream chunks. Pure
// functions of their arguments.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_REPLIES_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_REPLIES_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fake_logprobs.h"
#include "tests/support/fake_slots.h"
#include "tests/support/fake_tokenizer.h"

namespace evalrun::testing {

using OrderedJson = nlohmann::ordered_json;

// {"error":{"code":..,"message":..,"type":..}} (llama-server's
// format_error_response).
std::string FakeErrorBody(int code, const std::string& message, const std::string& type);
// The order httplib's middleware uses: {"error":{"message","type","code"}}
// (404 "File Not Found", 503 "Loading model").
std::string FakeMiddlewareErrorBody(int code, const std::string& message, const std::string& type);
// 400 exceed_context_size_error with n_prompt_tokens and n_ctx.
std::string FakeContextErrorBody(int n_prompt_tokens, int n_ctx);

// What /props, /models and the replies say about the server.
struct FakeServerFacts {
  int total_slots = 4;
  int n_ctx_slot = 8192;
  int n_ctx_train = 131072;
  std::string model_alias;   // the --alias, else the model path
  std::string model_path;
  std::string build_info = "b10470-34af94c";
  bool endpoint_slots = true;
  bool endpoint_metrics = false;
  bool thinking_switch = false;  // /props shows kFakeQwen3ChatTemplate
};

// default_generation_settings.params of /props.
OrderedJson FakeDefaultParams();
// The params of a task (GET /slots), from its request: the defaults with
// the request's sampling, limit and stream; `chat` for a chat request.
OrderedJson FakeTaskParams(const nlohmann::json& request, int n_predict, bool chat);

// The generation_settings of a POST /completion reply: the task's params
// with the keys only that reply carries (stop, logit_bias, grammar, ...).
OrderedJson FakeCompletionSettings(const OrderedJson& params);

std::string FakePropsBody(const FakeServerFacts& f);
std::string FakeModelsBody(const FakeServerFacts& f, long long created);
// The Prometheus text of GET /metrics.
std::string FakeMetricsBody(const FakeMetrics& m);

// One finished generation, as the replies report it.
struct FakeGeneration {
  std::string id;              // "chatcmpl-..."
  long long created = 0;
  std::string model;           // the alias
  std::string build_info;
  std::string content;
  std::string reasoning_content;
  std::string finish_reason;   // "stop" or "length"
  int prompt_tokens = 0;
  int cached_tokens = 0;
  int completion_tokens = 0;
  double prompt_ms = 0, predicted_ms = 0;
  // A completion asked with n_probs / logprobs: the first token's
  // candidates (the content is then the first candidate's text).
  std::vector<FakeCandidate> top;
};

OrderedJson FakeTimings(const FakeGeneration& g);
std::string FakeChatBody(const FakeGeneration& g);
// POST /v1/completions and POST /completion.
std::string FakeOaiCompletionBody(const FakeGeneration& g);
std::string FakeCompletionBody(const FakeGeneration& g, const OrderedJson& settings, const std::string& prompt,
                               int slot);

// SSE events of a streamed chat reply ("data: {...}\n\n").
// /completion's stream (llama-server b10470, no [DONE]): an event per
// token, {"content": piece, "stop": false, ...}, then the last one, the
// non-streamed reply's fields with "content": "" and "stop": true.
std::string FakeCompletionEvent(const FakeGeneration& g, const std::string& piece, int predicted);
std::string FakeCompletionStreamEnd(const FakeGeneration& g, const OrderedJson& settings, const std::string& prompt);
std::string FakeChunkRole(const FakeGeneration& g);
std::string FakeChunkDelta(const FakeGeneration& g, const char* field, const std::string& piece);
// The finish chunk; with include_usage the timings move to a last chunk
// with "choices": [] and the usage. Ends with "data: [DONE]".
std::string FakeChunksEnd(const FakeGeneration& g, bool include_usage);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_REPLIES_H_
