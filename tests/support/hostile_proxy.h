// A scripted hostile server for tests: a raw-socket HTTP/1.1 proxy on
// 127.0.0.1 in front of an upstream (the fake llama-server). Each request
// is forwarded over the client connection's own upstream connection, its
// reply read whole, and a script turns it into the exact bytes the client
// gets: the reply twice, a Content-Length too short, a 503 page, JSON
// nested 200,000 deep, a second write after a pause, a close.
//
// Bounded: reads wait at most 10 s, Stop() ends every thread within
// ~100 ms. Thread-safe: the script runs on the proxy's threads (one per
// connection); it may be replaced between requests.
#ifndef EVALRUN_TESTS_SUPPORT_HOSTILE_PROXY_H_
#define EVALRUN_TESTS_SUPPORT_HOSTILE_PROXY_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace evalrun::testing {

// One request and the upstream's reply to it.
struct ProxiedExchange {
  std::string method, path, request_body, request_head;
  int status = 0;          // the upstream's; 0 when it gave none
  std::string reply_body;
  int n = 0;               // 0 for the first request to this path, 1 for the second, ...
  int connection = 0;      // which client connection (0, 1, ...) it came on
  double at_s = 0;         // when it arrived, seconds since Start()
  double replied_s = 0;    // when the upstream's reply was in
};

// What the client gets: `writes`, each sent with its own send(2) after
// `pause_ms`, then the connection closed when `close_after`.
struct HostileAction {
  std::vector<std::string> writes;
  int pause_ms = 0;
  bool close_after = false;
};

// The bytes of one reply: status line, Content-Type (json unless
// `content_type` says otherwise), Content-Length (the body's size unless
// `content_length` >= 0), `extra_headers` ("Retry-After: 1\r\n"), the body.
std::string ReplyBytes(int status, const std::string& body, const std::string& extra_headers = "",
                       long content_length = -1, const std::string& content_type = "application/json");

// The upstream's reply, passed through unchanged (framed by Content-Length).
HostileAction PassThrough(const ProxiedExchange& x);

using HostileScript = std::function<HostileAction(const ProxiedExchange&)>;

class HostileProxy {
 public:
  HostileProxy(int upstream_port, HostileScript script);
  ~HostileProxy();
  HostileProxy(const HostileProxy&) = delete;
  HostileProxy& operator=(const HostileProxy&) = delete;

  bool Start();
  void Stop();
  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string base_url() const { return origin() + "/v1"; }
  void SetScript(HostileScript script);

  int connections() const { return connections_.load(); }
  // Every request seen, in arrival order (reply fields as the upstream gave them).
  std::vector<ProxiedExchange> exchanges() const;

 private:
  void Accept();
  void Serve(int fd, int connection);
  HostileAction Decide(ProxiedExchange* x);

  const int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex mu_;
  HostileScript script_;
  std::vector<ProxiedExchange> seen_;
  std::vector<int> client_fds_;
  std::thread acceptor_;
  std::vector<std::thread> servers_;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_HOSTILE_PROXY_H_
