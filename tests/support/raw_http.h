// A raw HTTP/1.1 client over one loopback connection, for tests that look
// at the wire (the order of headers, Keep-Alive, when the server closes).
// Bounded: every read waits at most the timeout given. Tests only; not
// thread-safe (one connection, one thread).
#ifndef EVALRUN_TESTS_SUPPORT_RAW_HTTP_H_
#define EVALRUN_TESTS_SUPPORT_RAW_HTTP_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evalrun::testing {

struct RawReply {
  int status = 0;  // 0: no reply (closed, timeout or garbage)
  std::vector<std::pair<std::string, std::string>> headers;  // in the order sent
  std::string body;                                          // chunked replies joined
  std::string Header(std::string_view name) const;           // case-insensitive; "" when absent
  std::vector<std::string> HeaderNames() const;
};

class RawHttp {
 public:
  RawHttp() = default;
  ~RawHttp();
  RawHttp(const RawHttp&) = delete;
  RawHttp& operator=(const RawHttp&) = delete;

  bool Connect(int port);  // 127.0.0.1
  void Close();
  // Sends one request (Content-Length when body is not empty or method is
  // POST) and reads its reply, waiting at most timeout_s for each part.
  RawReply Request(const std::string& method, const std::string& path, const std::string& body = "",
                   double timeout_s = 10, const std::string& extra_headers = "");
  // Sends a request without reading the reply.
  bool Send(const std::string& method, const std::string& path, const std::string& body = "");
  RawReply Read(double timeout_s = 10);
  // True when the server closes the connection within timeout_s (EOF or
  // reset); false when it is still open then, or data came instead.
  bool ClosedWithin(double timeout_s);

 private:
  bool Fill(double timeout_s);
  int fd_ = -1;
  std::string buf_;
};

// The status and header lines of a reference .headers file
// (../shared/reference/llama-server/NAME.headers).
RawReply ParseHeadersFile(const std::string& text);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_RAW_HTTP_H_
