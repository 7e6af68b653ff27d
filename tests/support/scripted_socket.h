// A loopback server that answers every connection with scripted bytes: it
// reads one request (head and Content-Length body), then sends each write
// of the script after its pause, then closes or holds the connection.
// For tests of how a client reads replies that arrive in pieces (streams,
// framing faults, timeouts). Bounded: a held connection is released by
// Stop() or after hold_ms; every wait is bounded.
//
// Thread-safe: the server runs on its own thread; the script is fixed at
// construction; written() may be read from any thread.
#ifndef EVALRUN_TESTS_SUPPORT_SCRIPTED_SOCKET_H_
#define EVALRUN_TESTS_SUPPORT_SCRIPTED_SOCKET_H_

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace evalrun::testing {

struct ScriptedWrite {
  int pause_ms = 0;  // before this write
  std::string bytes;
};

struct SocketScript {
  std::vector<ScriptedWrite> writes;
  int hold_ms = 0;   // keep the connection open this long after the writes (0: close at once)
};

class ScriptedSocketServer {
 public:
  explicit ScriptedSocketServer(SocketScript script);
  ~ScriptedSocketServer();  // Stop()
  ScriptedSocketServer(const ScriptedSocketServer&) = delete;
  ScriptedSocketServer& operator=(const ScriptedSocketServer&) = delete;

  int port() const { return port_; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Writes of the script begun so far (over all connections).
  int written() const { return written_.load(); }
  // The last request received, head and body.
  std::string last_request() const;
  void Stop();

 private:
  void Serve();
  void Answer(int fd);

  SocketScript script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> written_{0};
  mutable std::atomic<bool> busy_{false};
  std::string last_request_;
  std::thread thread_;
};

// The head of a 200 reply: "HTTP/1.1 200 OK\r\n" + `headers` + "\r\n".
std::string ReplyHead(const std::string& headers, int status = 200);
// One chunk of a chunked body: hex size, CRLF, the bytes, CRLF.
std::string Chunk(const std::string& bytes);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_SCRIPTED_SOCKET_H_
