// An HttpTransport (evals/server/http.h) that answers from a script instead
// of a socket: the OpenAI client's retries, backoff and refusals are tested
// against exact replies (a 503, a reset, a reply that arrives after the
// deadline) in microseconds. Tests only.
//
//   testing::FakeClock clock;
//   auto t = std::make_unique<testing::FakeTransport>([&](const testing::FakeRequest& r) {
//     if (r.n < 2) return testing::HttpStatus(503, "busy");
//     return testing::HttpStatus(200, testing::ChatReplyBody("B"));
//   });
//
// A script may move a FakeClock to stand for the time a request takes (a
// read timeout is told from a reset by the time it took).
// Not thread-safe (one transport per worker, as the real one).
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_TRANSPORT_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_TRANSPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "evals/server/http.h"

namespace evalrun::testing {

struct FakeRequest {
  int n = 0;            // 0-based, over Get and Post together
  std::string method;   // "GET" or "POST"
  std::string path;
  std::string body;     // POST only
  double timeout_s = 0;
};

class FakeTransport : public HttpTransport {
 public:
  using Script = std::function<HttpResponse(const FakeRequest& request)>;
  explicit FakeTransport(Script script) : script_(std::move(script)) {}

  HttpResponse Get(const std::string& path, double timeout_s) override;
  HttpResponse Post(const std::string& path, const std::string& json_body, double timeout_s) override;
  int connections_opened() const override { return connections_; }

  // What connections_opened() answers (a script may raise it: "the server
  // closed the connection and a new one was opened").
  void set_connections_opened(int n) { connections_ = n; }
  // Every request so far, in order.
  const std::vector<FakeRequest>& requests() const { return requests_; }

 private:
  Script script_;
  std::vector<FakeRequest> requests_;
  int connections_ = 1;
};

// A reply with that status and body.
HttpResponse HttpStatus(int status, std::string body);
// No reply: status 0 and the transport's error, as httplib_client.cc and socket_transport.cc word
// them: "connection closed or reset while reading the reply (or read
// timeout)", "could not connect (connection refused or host unreachable)".
HttpResponse HttpBroken(std::string error);
// A llama-server chat completion whose answer is `content`.
std::string ChatReplyBody(const std::string& content, const std::string& finish_reason = "stop");

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_TRANSPORT_H_
