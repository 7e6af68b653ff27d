// An OpenAI-compatible test server that behaves as llama.cpp's llama-server
// b10470 does, measured against the real binary and its replies in
// ../shared/reference/llama-server; only the model is scripted (a
// Responder says what it would write). Loopback only (127.0.0.1).
// fake_server.md lists what is matched, how it was checked, and what is
// knowingly not; fake_server_test.cc and friends compare it with the
// reference. In short:
//   - the connection (fake_http.h): Keep-Alive: timeout=5, max=100, idle
//     connections closed after 5 s, 100 replies per connection, every
//     reply of 400 or more with Connection: close, streams closed after;
//   - /health (503 "Loading model" on every endpoint while loading), /props
//     (all 19 keys), /slots (idle and busy), /metrics (501 unless
//     `metrics`), /models and /v1/models, /tokenize (with_pieces),
//     /detokenize, /apply-template, 404 "File Not Found" elsewhere, 401
//     without the api_key when one is set;
//   - POST /v1/chat/completions (and /chat/completions): the reply's model
//     is the alias; the answer is cut at max_tokens / n_predict /
//     max_completion_tokens (finish_reason "length"), at a stop string
//     ("stop") and at the slot context; a prompt of n_ctx tokens or more
//     gets the 400 exceed_context_size_error; a finished answer costs its
//     tokens plus the end-of-sequence token, "ignore_eos": true makes the
//     model go on to the limit; "stream": true answers with SSE chunks
//     (a role chunk with the first token, one chunk per token, the finish
//     chunk, the usage chunk with stream_options.include_usage, `timings`
//     on the last), then "data: [DONE]"; /completion streams an event per
//     token and a last one with "stop": true (no [DONE]); planted prefill and decode times
//     and ": ping" comments (prefill_ms_per_token, ping_every_ms);
//     "cache_prompt": false evaluates the whole prompt (cache_n 0);
//   - the slots and the KV cache (fake_slots.h): requests beyond the slots
//     wait and are not served in arrival order; with kv_unified the running
//     requests share kv_size cells and all fail with HTTP 500 "Context size
//     has been exceeded." when they outgrow them; a request whose client
//     goes away is cancelled and frees its slot;
//   - POST /completion and /v1/completions (non-streamed), with the first
//     token's candidates for n_probs (completion_probabilities) and
//     logprobs (choices[0].logprobs.content), shaped as b10470 writes them
//     (fake_logprobs.h scripts the distribution);
//   - a thinking model: FakeReply::reasoning_content comes back as
//     message.reasoning_content (or the script writes <think>...</think>
//     into the content itself); reasoning_budget_tokens (or
//     thinking_budget_tokens) ends the reasoning after that many tokens and
//     the answer follows; the template's switch (thinking_switch) and a
//     gateway that drops it (drop_template_kwargs).
// Malformed JSON gets 500 with nlohmann's parse error, as llama-server.
//
// Thread-safe: the handlers run on the server's own threads; options and
// the responder may be changed between requests through the setters.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_SERVER_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fake_tokenizer.h"

namespace evalrun::testing {

enum class Fault {
  kNone,
  kHttp500,            // {"error": {"code": 500, ...}}
  kHttp503,
  kHttp429,
  kHttp400,
  kResetMidBody,       // headers and half a body, then the connection closes
  kHang,               // sleeps hang_ms before answering (cut short by Stop() or the client leaving)
  kMalformedJson,      // 200 with a body that is not JSON
  kEmptyChoices,       // 200 with "choices": []
  kErrorIn200,         // 200 carrying an error object
  kHugeBody,           // 200 with a ~20 MB content: 20 MiB of 'x', then "\n" + content
                       // when the reply's content is not empty
  kContextOverflow,    // all running requests fail with 500 "Context size has been exceeded."
  // llama-server's chat output parser refuses what the model wrote (b10470,
  // common/chat.cpp: invalid UTF-8 or text outside the template's format):
  // the chat request gets HTTP 500 "The model produced output that does not
  // match the expected peg-native format". The model writes the same text
  // for the same prompt on /completion (the prompt as /apply-template gives
  // it), where it comes back only with a per-request "chat_parser" (any: the
  // fake does not read it); without one, /completion's own content-only
  // parser refuses it too (500 "... Content-only format"), as the real one
  // does. A stream (a chat's, or /completion's without a chat_parser) sends
  // half the answer, then that error as its last event, as b10470's chat
  // stream stops at the first token its parser cannot take.
  kParserRefusal,
  kHttp503Busy,        // 503 "no slot available" (unavailable_error): llama-server busy
  kTooLong400,         // 400 exceed_context_size_error, whatever the prompt's length
};

// What the scripted model writes for one request. The server, not the
// script, decides how much of it is sent: it cuts the text at the
// request's token limit, a stop string and the slot context, as
// llama-server does.
struct FakeReply {
  std::string content;
  std::string reasoning_content;   // generated before the content; sent as message.reasoning_content
  // How the model ends: "stop" = it writes the end-of-sequence token after
  // the text (one more generated token, as llama-server counts it);
  // "length" = it never ends: after the text it goes on ("... and so on")
  // until the server's limit. Any other value ends as "stop" does. Either
  // way the reply says "length" when a limit cut it.
  std::string finish_reason = "stop";
  int completion_tokens = -1;      // the text's token count; -1: the fake tokenizer's
  int delay_ms = 0;                // service time inside a slot (the tokens come evenly over it)
  Fault fault = Fault::kNone;
  int hang_ms = 0;
};

// Called for every chat request (the parsed body); returns the reply.
using Responder = std::function<FakeReply(const nlohmann::json& request)>;

struct FakeServerOptions {
  int port = 0;                     // 0: a free port
  int slots = 4;                    // llama-server's -np
  int n_ctx = 8192;                 // per slot (n_ctx_slot, GET /props)
  // llama-server's -kvu: the running requests share one pool of kv_size
  // cells (its -c; 0: slots * n_ctx) and fail together when they outgrow it.
  bool kv_unified = false;
  int kv_size = 0;
  int n_ctx_train = 131072;         // the model's training context (/models meta)
  double ms_per_token = 0;          // service time per generated token, besides FakeReply::delay_ms
  // Planted prefill (the speed part's tests): the first token comes
  // prefill_base_ms + prefill_ms_per_token * (prompt tokens evaluated, the
  // cached ones not) after the request took its slot; each further token
  // then ms_per_token after the one before (one stream chunk each), and
  // FakeReply::delay_ms is not used. The reply's `timings` are then the
  // fake's own clock: prompt_ms the time it spent until the first token,
  // predicted_ms from the first token to the last (llama-server's t_prompt
  // and t_token_generation). Both 0: tokens come evenly over the service
  // time from admission and the timings are nominal.
  double prefill_ms_per_token = 0;
  double prefill_base_ms = 0;
  // A stream sends a ": ping" comment whenever this long passed without an
  // event (llama-server's --sse-ping-interval, in ms here); 0: never.
  int ping_every_ms = 0;
  // A server that reuses its cache whatever the request says: this many
  // prompt tokens (at most prompt - 1) are reported cached (timings.cache_n,
  // usage.prompt_tokens_details.cached_tokens) and not evaluated. -1: the
  // slots' own prefix cache, which "cache_prompt": false turns off.
  int force_cache_n = -1;
  std::string alias;                // -a; "": the model path
  bool metrics = false;             // --metrics: GET /metrics answers (else 501, as llama-server)
  bool slots_endpoint = true;       // --no-slots: GET /slots answers 501
  // --api-key: every endpoint but /health and /models wants "Authorization:
  // Bearer <key>" (or X-Api-Key) and answers 401 "Invalid API Key" without.
  std::string api_key;
  int health_503_count = 0;         // the first N GET /health answer 503 (loading)
  std::string model_path = "models/fake.gguf";
  std::string build_info = "b10470-34af94c";
  bool tokenize_endpoints = true;   // /tokenize, /detokenize, /apply-template (false: 404)
  int tokenize_delay_ms = 0;        // per tokenizer call
  bool props_endpoint = true;       // false: GET /props is 404 (a server that is not llama-server)
  // Every endpoint answers 503 "Loading model" for this long after Start()
  // (llama-server while it loads the model).
  int load_ms = 0;
  // Bends the scripted next-token distribution of completions asked with
  // n_probs / logprobs (fake_logprobs.h): 0 = the reference model; a small
  // value stands for an engine bug that shifts every distribution a little.
  double logprob_shift = 0;
  // Qwen3's thinking switch in the chat template: a request with
  // chat_template_kwargs {"enable_thinking": false} (chat or /apply-template)
  // gets the empty think block "<think>\n\n</think>\n\n" after the
  // generation prompt, and /props shows a template that names
  // enable_thinking (kFakeQwen3ChatTemplate). false: chatml, no switch.
  bool thinking_switch = false;
  // A gateway in front that strips chat_template_kwargs from chat requests:
  // neither the template nor the Responder sees them (/apply-template is
  // not behind it).
  bool drop_template_kwargs = false;
};

// The options of a server whose distributions are bent by `shift`
// (logprob_shift): an engine bug, for the probe's tests.
inline FakeServerOptions LogprobShifted(double shift) {
  FakeServerOptions o;
  o.logprob_shift = shift;
  return o;
}

class FakeServer {
 public:
  explicit FakeServer(FakeServerOptions opts = {});
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  // Binds 127.0.0.1 (opts.port, or a free port) and serves on its own
  // threads. False on failure.
  bool Start();
  // Cuts running and waiting requests short (their connections close
  // without a reply) and stops serving.
  void Stop();

  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string base_url() const { return origin() + "/v1"; }

  void SetResponder(Responder r);
  void SetOptions(const FakeServerOptions& o);

  // What the server saw.
  int max_running() const;                                  // the most requests generating at once
  int max_waiting() const;                                  // requests queued beyond the slots
  int chat_requests() const { return chat_requests_.load(); }
  int tokenize_requests() const { return tokenize_requests_.load(); }
  int health_requests() const { return health_requests_.load(); }
  int connections() const;                                  // TCP connections accepted
  std::vector<nlohmann::json> requests() const;            // chat and completion request bodies, arrival order
  // The Authorization header of every request received (any endpoint, any
  // method), in arrival order; "" for a request that had none.
  std::vector<std::string> authorizations() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<int> chat_requests_{0}, tokenize_requests_{0}, health_requests_{0};
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_SERVER_H_
