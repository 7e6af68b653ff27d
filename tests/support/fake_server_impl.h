// The fake llama-server's inside, shared by its endpoint files:
// fake_server.cc (routing, /health, /props, /slots, /metrics, /models, the
// tokenizer endpoints) and fake_chat.cc (chat and completions). Not for
// tests: they use fake_server.h.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_SERVER_IMPL_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_SERVER_IMPL_H_

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/fake_http.h"
#include "tests/support/fake_replies.h"
#include "tests/support/fake_server.h"
#include "tests/support/fake_slots.h"

namespace evalrun::testing {

struct FakeServer::Impl {
  explicit Impl(FakeServer* s, const FakeServerOptions& o);

  // The FakeHttpServer's handler: Route, with an exception answered 500.
  void Handle(const FakeHttpRequest& req, FakeHttpResponse* res);
  void Route(const FakeHttpRequest& req, FakeHttpResponse* res);
  // POST /v1/chat/completions, /chat/completions (`chat`), or /completion,
  // /completions, /v1/completions (`oai` for the OpenAI shape) (fake_chat.cc).
  void Generate(const FakeHttpRequest& req, FakeHttpResponse* res, bool chat, bool oai);
  FakeReply RefusedBefore(const std::string& prompt_text);
  void RefuseOutput(const std::string& prompt_text, bool chat, const FakeReply& reply, FakeHttpResponse* res);
  std::string StreamRefusal(const std::string& prompt_text, bool chat, const FakeReply& reply);

  FakeServerOptions options() const;
  FakeServerFacts Facts() const;
  static FakeSlotsConfig SlotsConfig(const FakeServerOptions& o);
  std::string NextId();   // "chatcmpl-" and 32 letters

  FakeServer* self;
  FakeSlots slots;
  FakeHttpServer http;
  mutable std::mutex mu;  // guards what follows
  FakeServerOptions opts;
  Responder responder;
  int health_seen = 0;
  std::chrono::steady_clock::time_point started;
  long long start_unix = 0;
  std::vector<nlohmann::json> requests;
  std::vector<std::string> authorizations;
  // What the model wrote for a templated prompt whose chat answer the
  // output parser refused (Fault::kParserRefusal): /completion of that
  // prompt text writes it again.
  std::map<std::string, FakeReply> parser_refused;
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> ids{0};
};

// Replies with a JSON error body (and its status).
inline void FakeError(FakeHttpResponse* res, int code, const std::string& message, const std::string& type) {
  res->status = code;
  res->body = FakeErrorBody(code, message, type);
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_SERVER_IMPL_H_
