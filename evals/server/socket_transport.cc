// Plain http: evalrun's own HTTP/1.1 client over one kept-alive socket, so
// that a reply is known to be exactly one reply (HttpReplyReader) and a
// connection is reused only when nothing is pending on it. httplib cannot
// promise either: it reuses a connection with bytes waiting, and bytes
// after a reply's end are lost in its read buffer or read as the next reply.

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "evals/server/http.h"
#include "evals/server/http_internal.h"
#include "evals/server/http_reply.h"

namespace evalrun {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// Rounded up: a wait never ends before the deadline.
int MillisLeft(SteadyTime deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>((left.count() + 999) / 1000, 0, 1 << 30));
}

// Waits for `events` on fd until `deadline`: true when ready.
bool WaitFd(int fd, short events, SteadyTime deadline) {
  for (;;) {
    struct pollfd p = {fd, events, 0};
    const int rc = ::poll(&p, 1, MillisLeft(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

using PieceFn = std::function<bool(std::string_view)>;

class SocketTransport : public HttpTransport {
 public:
  SocketTransport(const HttpUrl& origin, const std::string& token, size_t max_reply_bytes)
      : host_(origin.host), port_(origin.port), max_reply_bytes_(max_reply_bytes) {
    if (!token.empty()) auth_ = "Authorization: Bearer " + token + "\r\n";
  }
  ~SocketTransport() override { Close(); }

  HttpResponse Get(const std::string& path, double timeout_s) override {
    return Exchange("GET", path, nullptr, timeout_s, nullptr);
  }
  HttpResponse Post(const std::string& path, const std::string& body, double timeout_s) override {
    return Exchange("POST", path, &body, timeout_s, nullptr);
  }
  HttpResponse PostStreamed(const std::string& path, const std::string& body, double timeout_s,
                            const PieceFn& on_piece) override {
    return Exchange("POST", path, &body, timeout_s, &on_piece);
  }
  int connections_opened() const override { return connections_; }
  void DropConnection() override { Close(); }

 private:
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // The kept connection may carry a new request only when nothing waits on
  // it: neither bytes (a reply nobody asked for) nor the server's close.
  void DropIfNotIdle() {
    if (fd_ < 0) return;
    struct pollfd p = {fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) != 0) Close();
  }

  // "" when connected, else why not.
  std::string Connect(SteadyTime deadline) {
    struct addrinfo hints = {};
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo* res = nullptr;
    if (::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res) != 0 || res == nullptr)
      return "could not connect (cannot resolve host name " + host_ + ")";
    std::string err = "could not connect (connection refused or host unreachable)";
    for (struct addrinfo* a = res; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) continue;
      int yes = 1;
      // The headers and the body are one write; no Nagle wait either way.
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        if (!WaitFd(fd, POLLOUT, deadline)) {
          err = "connection timeout";
          ::close(fd);
          continue;
        }
        int so = 0;
        socklen_t len = sizeof so;
        rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) == 0 && so == 0 ? 0 : -1;
      }
      if (rc != 0) {
        ::close(fd);
        continue;
      }
      fd_ = fd;
      ++connections_;
    }
    ::freeaddrinfo(res);
    return fd_ >= 0 ? "" : err;
  }

  bool SendAll(const std::string& data, SteadyTime deadline) {
    for (size_t off = 0; off < data.size();) {
      const ssize_t w = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (w > 0) {
        off += static_cast<size_t>(w);
      } else if (w < 0 && errno == EINTR) {
        continue;
      } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!WaitFd(fd_, POLLOUT, deadline)) return false;
      } else {
        return false;
      }
    }
    return true;
  }

  std::string Request(const char* method, const std::string& path, const std::string* body) const {
    std::string req;
    req.reserve(256 + path.size() + (body ? body->size() : 0));
    req.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: ").append(host_);
    req.append(":").append(std::to_string(port_)).append("\r\nAccept: application/json\r\nUser-Agent: evalrun\r\n");
    req.append(auth_);
    if (body != nullptr) {
      req.append("Content-Type: application/json\r\nContent-Length: ").append(std::to_string(body->size()));
      req.append("\r\n\r\n").append(*body);
    } else {
      req.append("\r\n");
    }
    return req;
  }

  // Hands what `reader` holds of a 2xx body to *on_piece (when streaming);
  // false when on_piece said stop.
  static bool Hand(HttpReplyReader* reader, const PieceFn* on_piece) {
    if (on_piece == nullptr || !reader->head_done() || reader->status() < 200 || reader->status() >= 300 ||
        reader->state() == HttpReplyReader::State::kBad || reader->body().empty())
      return true;
    const std::string piece = reader->TakeBody();
    return (*on_piece)(piece);
  }

  static std::string TooSlow(double timeout_s) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "no complete reply within %.1f s (the reply was still arriving)", timeout_s);
    return msg;
  }

  // Reads one reply into `reader`; "" when it came whole (the reader says
  // whether it was well formed), else what went wrong.
  // `*broke`: the connection closed or reset (not a timeout). A 2xx body
  // goes to *on_piece as it comes (when not null); `*stopped` when it said
  // stop.
  std::string Receive(HttpReplyReader* reader, SteadyTime deadline, double timeout_s, const PieceFn* on_piece,
                      bool* broke, bool* stopped) {
    char buf[64 * 1024];
    *broke = *stopped = false;
    // Nothing can have come yet: wait before the first read (a read first
    // is one failed system call per request).
    if (!WaitFd(fd_, POLLIN, deadline)) return "connection closed or reset while reading the reply (or read timeout)";
    while (reader->state() == HttpReplyReader::State::kNeedMore) {
      if (reader->started() && std::chrono::steady_clock::now() > deadline) return TooSlow(timeout_s);
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        reader->Feed(std::string_view(buf, static_cast<size_t>(n)));
        if (!Hand(reader, on_piece)) {
          *stopped = true;
          return "stopped by the reader";
        }
      } else if (n == 0) {
        *broke = true;
        reader->End();
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (WaitFd(fd_, POLLIN, deadline)) continue;
        if (!reader->started()) return "connection closed or reset while reading the reply (or read timeout)";
        return TooSlow(timeout_s);
      } else {
        *broke = true;
        return "connection closed or reset while reading the reply (or read timeout)";
      }
    }
    // Bytes that came with the reply but after its end, still in the
    // socket: the reply is not alone on this connection.
    if (reader->state() == HttpReplyReader::State::kDone) {
      const ssize_t more = ::recv(fd_, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
      if (more > 0) reader->Feed(std::string_view(buf, static_cast<size_t>(more)));
    }
    return "";
  }

  HttpResponse Exchange(const char* method, const std::string& path, const std::string* body, double timeout_s,
                        const PieceFn* on_piece) {
    const auto us = std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
    const SteadyTime deadline = std::chrono::steady_clock::now() + us;
    const std::string request = Request(method, path, body);
    HttpResponse out;
    DropIfNotIdle();
    // A kept connection the server closed as the request went out is
    // tried once more on a new one (nothing of the reply had come).
    for (int round = 0; round < 2; ++round) {
      const bool reused = fd_ >= 0;
      if (!reused) {
        out.error = Connect(std::chrono::steady_clock::now() + std::chrono::seconds(10));
        if (!out.error.empty()) return out;
      }
      if (!SendAll(request, deadline)) {
        Close();
        out.error = "connection closed while sending the request";
        if (reused) continue;
        return out;
      }
      RequestSent();
      HttpReplyReader reader(max_reply_bytes_);
      bool broke = false, stopped = false;
      out.error = Receive(&reader, deadline, timeout_s, on_piece, &broke, &stopped);
      if (reused && broke && !reader.started()) {
        Close();
        out.error.clear();
        continue;
      }
      if (stopped) {
        Close();  // the rest of that reply must not be read as the next one
        out.status = reader.status();
        return out;
      }
      return Finish(&reader, &out);
    }
    return out;
  }

  HttpResponse Finish(HttpReplyReader* reader, HttpResponse* out) {
    const bool whole = out->error.empty() && reader->state() == HttpReplyReader::State::kDone && reader->extra() == 0;
    if (!whole || !reader->keep_alive()) Close();
    if (!out->error.empty()) return *out;
    if (reader->too_big()) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "the reply is larger than %zu MiB (evalrun's limit); cut off",
                    max_reply_bytes_ >> 20);
      out->error = msg;
    } else if (reader->state() == HttpReplyReader::State::kBad) {
      out->error = reader->started() && reader->error().find("closed") == std::string::npos
                       ? "not one well-formed HTTP reply: " + reader->error()
                       : "connection closed or reset while reading the reply (" + reader->error() + ")";
    } else if (reader->extra() > 0) {
      out->error = "the reply (HTTP " + std::to_string(reader->status()) + ") was followed by " +
                   std::to_string(reader->extra()) +
                   " more bytes on the connection (a second reply, or a Content-Length shorter than the body): "
                   "not used, the connection closed";
    } else {
      out->status = reader->status();
      out->body = std::move(reader->mutable_body());
      out->retry_after = reader->retry_after();
    }
    return *out;
  }

  const std::string host_;
  const int port_;
  const size_t max_reply_bytes_;
  std::string auth_;
  int fd_ = -1;
  int connections_ = 0;
};

}  // namespace

namespace http_internal {

std::unique_ptr<HttpTransport> MakeSocketTransport(const HttpUrl& origin, const std::string& bearer_token,
                                                   size_t max_reply_bytes) {
  return std::make_unique<SocketTransport>(origin, bearer_token, max_reply_bytes);
}

}  // namespace http_internal
}  // namespace evalrun
