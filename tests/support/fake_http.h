// The HTTP/1.1 side of the fake llama-server: a small loopback server that
// speaks on the wire as llama-server b10470 (cpp-httplib 0.53) does, so that
// a client meets the same connection behaviour (checked against the real
// binary, ../shared/reference/llama-server/*.headers):
//   - every reply starts "Server: llama.cpp", "Access-Control-Allow-Origin: ";
//   - a reply below 400 carries "Keep-Alive: timeout=5, max=100" and the
//     connection stays open; an idle connection is closed 5 s after its last
//     reply; the 100th reply on a connection says "Connection: close" and
//     the connection closes after it;
//   - a reply of 400 or more says "Connection: close" and closes (httplib:
//     "Don't leave connections open after errors");
//   - a streamed reply is chunked ("X-Accel-Buffering: no",
//     "Transfer-Encoding: chunked") and the connection closes after it;
//   - "Connection: close" from the client, or HTTP/1.0 without keep-alive,
//     closes after the reply;
//   - TCP_NODELAY on every connection, listen backlog 512.
// Only this file and fake_http.cc touch sockets.
//
// Thread-safe: one thread per connection calls the handler; the handler
// must return for Stop() to finish (it can watch FakeHttpRequest::client_gone).
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_HTTP_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_HTTP_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evalrun::testing {

struct FakeHttpRequest {
  std::string method;   // "GET", "POST"
  std::string path;     // without the query: "/v1/chat/completions"
  std::string query;    // after '?', "" when none
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  // The header's value (name compared case-insensitively), "" when absent.
  std::string Header(std::string_view name) const;
  // True once the client has closed or reset its end of the connection
  // (llama-server then cancels the request). A cheap poll; any thread.
  std::function<bool()> client_gone;
};

// Sends one chunk of a streamed reply; false once the client is gone.
using FakeChunkWriter = std::function<bool(std::string_view)>;

struct FakeHttpResponse {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  // Sent after Access-Control-Allow-Origin, before Content-Type.
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the reply is streamed: status and headers, then `stream` is
  // called with the chunk writer; the stream ends (and the connection
  // closes) when it returns. Always called once, even when the headers
  // could not be sent (its writer then fails), so it can release what the
  // handler took.
  std::function<void(const FakeChunkWriter&)> stream;
  // A fault: Content-Length says the whole body but only its first
  // `truncate_body_at` bytes are sent, then the connection closes (-1: all).
  long long truncate_body_at = -1;
  // Close the connection without answering (a cancelled request whose
  // client is gone).
  bool no_reply = false;
};

using FakeHttpHandler = std::function<void(const FakeHttpRequest&, FakeHttpResponse*)>;

struct FakeHttpOptions {
  int keep_alive_timeout_s = 5;   // llama-server's (httplib's default)
  int keep_alive_max_count = 100; // replies per connection
};

class FakeHttpServer {
 public:
  FakeHttpServer(FakeHttpHandler handler, FakeHttpOptions opts = {});
  ~FakeHttpServer();  // Stop()
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  // Binds 127.0.0.1:`port` (0: a free port) and serves on its own threads.
  // False when it cannot bind or listen.
  bool Listen(int port);
  int port() const;
  // From now on nothing is answered: no new connection is served and a
  // request on an open one gets no reply (as when the process dies), while
  // handlers still running may finish. Returns at once. Idempotent.
  void BeginStop();
  // BeginStop, then shuts every open connection down and joins the
  // connection threads (each waits for its handler to return). Idempotent.
  void Stop();

  // Connections accepted so far (a test can see a reconnect).
  int connections_accepted() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_HTTP_H_
