// An OpenAI-compatible test server that speaks as llama.cpp's llama-server
// does (replies modelled on ../shared/reference/llama-server): its own
// slots and queue, scripted answers, finish_reason "length", /health
// answering 503 while "loading", /props, /tokenize, /apply-template, and
// injected faults. Loopback only (127.0.0.1, a free port).
//
// Thread-safe: the handlers run on the server's own threads; options and
// the responder may be changed between requests through the setters.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_SERVER_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

enum class Fault {
  kNone,
  kHttp500,            // {"error": {"code": 500, ...}}
  kHttp503,
  kHttp429,
  kHttp400,
  kResetMidBody,       // headers and half a body, then the connection closes
  kHang,               // sleeps hang_ms before answering (cut short by Stop())
  kMalformedJson,      // 200 with a body that is not JSON
  kEmptyChoices,       // 200 with "choices": []
  kErrorIn200,         // 200 carrying an error object
  kHugeBody,           // 200 with a ~20 MB content: 20 MiB of 'x', then "\n" + content
                       // when the reply's content is not empty
  kContextOverflow,    // all running requests fail with 500 "Context size has been exceeded."
};

struct FakeReply {
  std::string content;
  std::string reasoning_content;   // sent as message.reasoning_content when not empty
  std::string finish_reason = "stop";
  int completion_tokens = -1;      // -1: counted by the fake tokenizer
  int delay_ms = 0;                // service time inside a slot
  Fault fault = Fault::kNone;
  int hang_ms = 0;
};

// Called for every chat request (the parsed body); returns the reply.
using Responder = std::function<FakeReply(const nlohmann::json& request)>;

struct FakeServerOptions {
  int port = 0;                     // 0: a free port
  int slots = 4;
  int n_ctx = 8192;                 // per slot (GET /props)
  int health_503_count = 0;         // the first N GET /health answer 503 (loading)
  std::string model_path = "models/fake.gguf";
  std::string build_info = "b10470-34af94c";
  bool tokenize_endpoints = true;   // /tokenize, /apply-template
  int tokenize_delay_ms = 0;        // per tokenizer call
  bool props_endpoint = true;
  int load_ms = 0;                  // GET /health answers 503 for this long after Start() (loading)
  // llama-server's check: a chat prompt of n_ctx tokens or more (per slot,
  // counted as usage.prompt_tokens) gets HTTP 400 exceed_context_size_error
  // (../shared/reference/llama-server/err_toolong.body).
  bool check_context = false;
};

// The fake tokenizer: one token per run of letters/digits, one per other
// non-space character; spaces are free. Deterministic and not additive
// across joins ("a" + "b" = 1 token, not 2), like BPE.
int FakeTokenCount(std::string_view text);

// The chat template the fake applies (chatml, as the reference server's
// fallback): "<|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n".
std::string FakeApplyTemplate(const nlohmann::json& messages);

class FakeServer {
 public:
  explicit FakeServer(FakeServerOptions opts = {});
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  // Binds 127.0.0.1 on a free port and serves on a thread. False on failure.
  bool Start();
  void Stop();

  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string base_url() const { return origin() + "/v1"; }

  void SetResponder(Responder r);
  void SetOptions(const FakeServerOptions& o);

  // What the server saw.
  int max_running() const { return max_running_.load(); }
  int max_waiting() const { return max_waiting_.load(); }   // requests queued beyond the slots
  int chat_requests() const { return chat_requests_.load(); }
  int tokenize_requests() const { return tokenize_requests_.load(); }
  int health_requests() const { return health_requests_.load(); }
  std::vector<nlohmann::json> requests() const;            // chat request bodies, arrival order
  // The Authorization header of every request received (any endpoint, any
  // method), in arrival order; "" for a request that had none.
  std::vector<std::string> authorizations() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<int> max_running_{0}, max_waiting_{0}, chat_requests_{0}, tokenize_requests_{0},
      health_requests_{0};
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_SERVER_H_
