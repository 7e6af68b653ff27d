// The only file that includes httplib.h (cf. llama.cpp's server-http.h).
//
// Debian's libcpp-httplib is built with CPPHTTPLIB_OPENSSL_SUPPORT, which
// changes the layout of httplib's classes: every file that includes the
// header must define it too (`pkg-config --cflags cpp-httplib`; CMake's
// PkgConfig::HTTPLIB target does). Defined here as well so that a bare g++
// line cannot build a mismatched object.
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#include <httplib.h>

#include <netdb.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string_view>

#include "evals/base/files.h"
#include "evals/server/http.h"
#include "evals/server/http_reply.h"

namespace evalrun {
namespace {

class HttplibTransport : public HttpTransport {
 public:
  HttplibTransport(const std::string& origin, const std::string& token, size_t max_reply_bytes)
      : client_(origin), token_(token), max_reply_bytes_(max_reply_bytes) {
    client_.set_keep_alive(true);
    // httplib writes headers and body with two write(2)s; with Nagle on, the
    // body waits for the server's delayed ACK (~40 ms) on every request while
    // the slot sits idle (measured by evalrun-bench). llama-server sets the
    // same option on its side. Set here as well as through set_tcp_nodelay:
    // the socket-options hook also counts the connections opened.
    client_.set_tcp_nodelay(true);
    client_.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      sock_ = sock;
      ++connections_;
    });
    client_.set_connection_timeout(10, 0);
  }

  HttpResponse Get(const std::string& path, double timeout_s) override {
    return Send("GET", path, "", timeout_s, nullptr);
  }

  HttpResponse Post(const std::string& path, const std::string& body, double timeout_s) override {
    return Send("POST", path, body, timeout_s, nullptr);
  }

  HttpResponse PostStreamed(const std::string& path, const std::string& body, double timeout_s,
                            const std::function<bool(std::string_view)>& on_piece) override {
    return Send("POST", path, body, timeout_s, &on_piece);
  }

  int connections_opened() const override { return connections_; }

 private:
  // One exchange; the body is taken by a receiver that enforces the reply
  // limit and the whole-exchange deadline (a server trickling bytes forever
  // never trips a read timeout).
  // With `on_piece`, a 2xx body goes to it as it comes (httplib has
  // de-chunked it; the response handler has seen the status first).
  HttpResponse Send(const char* method, const std::string& path, const std::string& body, double timeout_s,
                    const std::function<bool(std::string_view)>* on_piece) {
    auto us = std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
    client_.set_read_timeout(us);
    client_.set_write_timeout(us);
    const auto deadline = std::chrono::steady_clock::now() + us;
    httplib::Request req;
    req.method = method;
    req.path = path;
    req.headers = Headers();
    if (!body.empty() || std::string(method) == "POST") {
      req.body = body;
      req.headers.emplace("Content-Type", "application/json");
    }
    // Never reuse a connection with something waiting on it (a reply
    // nobody asked for, or the server's close).
    if (client_.is_socket_open() && sock_ >= 0) {
      struct pollfd p = {sock_, POLLIN, 0};
      if (::poll(&p, 1, 0) != 0) client_.stop();
    }
    std::string reply;
    size_t received = 0;
    bool too_big = false, too_slow = false, stopped = false, streaming = false;
    req.response_handler = [&](const httplib::Response& head) {
      streaming = on_piece != nullptr && head.status >= 200 && head.status < 300;
      return true;
    };
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      if (received + n > max_reply_bytes_) {
        too_big = true;
        return false;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        too_slow = true;
        return false;
      }
      received += n;
      if (!streaming) {
        reply.append(data, n);
      } else if (!(*on_piece)(std::string_view(data, n))) {
        stopped = true;
        return false;
      }
      return true;
    };
    httplib::Result r = client_.send(req);
    HttpResponse out;
    if (stopped) {
      client_.stop();
      out.status = r ? r->status : 200;
      out.error = "stopped by the reader";
      return out;
    }
    if (too_big || too_slow) {
      client_.stop();  // the rest of that reply must not be read as the next one
      char buf[160];
      if (too_big)
        std::snprintf(buf, sizeof buf, "the reply is larger than %zu MiB (evalrun's limit); cut off",
                      max_reply_bytes_ >> 20);
      else
        std::snprintf(buf, sizeof buf, "no complete reply within %.1f s (the reply was still arriving)", timeout_s);
      out.error = buf;
      return out;
    }
    if (!r) {
      out.error = Describe(r.error());
      return out;
    }
    out.status = r->status;
    out.body = std::move(reply);
    if (out.body.empty() && !r->body.empty() && !streaming) out.body = r->body;
    out.retry_after = r->get_header_value("Retry-After");
    return out;
  }

  httplib::Headers Headers() const {
    httplib::Headers h;
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    return h;
  }

  static std::string Describe(httplib::Error e) {
    switch (e) {
      case httplib::Error::Connection: return "could not connect (connection refused or host unreachable)";
      case httplib::Error::Read: return "connection closed or reset while reading the reply (or read timeout)";
      case httplib::Error::Write: return "connection closed while sending the request";
      case httplib::Error::ConnectionTimeout: return "connection timeout";
      case httplib::Error::SSLConnection: return "TLS connection failed";
      case httplib::Error::SSLServerVerification: return "TLS server certificate not trusted";
      default: return "HTTP transport error: " + httplib::to_string(e);
    }
  }

  httplib::Client client_;
  std::string token_;
  size_t max_reply_bytes_;
  int connections_ = 0;
  socket_t sock_ = -1;
};

// ---------------------------------------------------------------------------
// Plain http: evalrun's own HTTP/1.1 client over one kept-alive socket, so
// that a reply is known to be exactly one reply (HttpReplyReader) and a
// connection is reused only when nothing is pending on it. httplib cannot
// promise either: it reuses a connection with bytes waiting, and bytes
// after a reply's end are lost in its read buffer or read as the next reply.

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

std::unique_ptr<HttpTransport> MakeHttpTransport(const std::string& origin,
                                                 const std::string& bearer_token, size_t max_reply_bytes) {
  HttpUrl u;
  if (ParseHttpUrl(origin, &u) && u.scheme == "http")
    return std::make_unique<SocketTransport>(u, bearer_token, max_reply_bytes);
  return std::make_unique<HttplibTransport>(origin, bearer_token, max_reply_bytes);
}

}  // namespace evalrun

// ---------------------------------------------------------------------------
// Whole-URL GETs with redirects (downloads).

namespace evalrun {
namespace {

constexpr int kMaxRedirects = 10;
constexpr time_t kConnectTimeoutS = 15;
constexpr double kDownloadReadTimeoutS = 60;

int DefaultPort(const std::string& scheme) { return scheme == "https" ? 443 : 80; }

std::string DescribeError(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "could not connect (connection refused, host unknown or unreachable)";
    case httplib::Error::Read: return "connection closed or reset while reading the reply (or read timeout)";
    case httplib::Error::Write: return "connection closed while sending the request";
    case httplib::Error::ConnectionTimeout: return "connection timeout";
    case httplib::Error::SSLConnection: return "TLS connection failed";
    case httplib::Error::SSLLoadingCerts: return "could not load the system's TLS certificates";
    case httplib::Error::SSLServerVerification: return "TLS server certificate not trusted";
    default: return "HTTP transport error: " + httplib::to_string(e);
  }
}

// Why no connection to `u` could be made: the name does not resolve, or it
// does and connecting failed.
std::string DescribeNoConnection(const HttpUrl& u, httplib::Error e) {
  struct addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(u.host.c_str(), nullptr, &hints, &res);
  if (res != nullptr) ::freeaddrinfo(res);
  if (rc != 0)
    return "cannot resolve host name " + u.host + " (" + ::gai_strerror(rc) + "; no network, or no DNS?)";
  return "cannot connect to " + u.host + ":" + std::to_string(u.port) +
         (e == httplib::Error::ConnectionTimeout ? " (connection timeout)" : " (connection refused or host unreachable)");
}

bool IsNoConnection(httplib::Error e) {
  return e == httplib::Error::Connection || e == httplib::Error::ConnectionTimeout;
}

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// One GET along its redirects. `on_response` sees the final (non-redirect)
// answer's status and headers and may refuse it (return false: the transfer
// stops, *refused is set); `on_data` gets its body and may stop it the same
// way. Returns "" when an answer came (whatever its status), else what went
// wrong; *not_connected when no connection could be made. *status /
// *final_url describe the last hop.
std::string GetFollowing(const std::string& url, const httplib::Headers& base_headers,
                         const std::string& bearer_token, double read_timeout_s,
                         const std::function<bool(const httplib::Response&)>& on_response,
                         const std::function<bool(const char*, size_t)>& on_data, int* status,
                         std::string* final_url, bool* refused, bool* not_connected) {
  HttpUrl first;
  *not_connected = false;
  if (!ParseHttpUrl(url, &first)) return "not an http(s) URL";
  HttpUrl cur = first;
  *refused = false;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    *final_url = cur.Origin() + cur.path;
    httplib::Client cli(cur.Origin());
    cli.set_follow_location(false);  // redirects are ours: the token must not follow them
    cli.set_url_encode(false);       // send paths (signed redirect URLs) exactly as given
    cli.set_connection_timeout(kConnectTimeoutS, 0);
    cli.set_read_timeout(std::chrono::microseconds(static_cast<int64_t>(read_timeout_s * 1e6)));
    cli.set_write_timeout(30, 0);
    httplib::Headers headers = base_headers;
    headers.emplace("User-Agent", "evalrun");
    // The token goes to the host it was given for, over the same scheme.
    if (!bearer_token.empty() && cur.scheme == first.scheme && cur.host == first.host &&
        cur.port == first.port) {
      headers.emplace("Authorization", "Bearer " + bearer_token);
    }
    std::string location;
    bool redirect = false;
    auto result = cli.Get(
        cur.path, headers,
        [&](const httplib::Response& r) {
          *status = r.status;
          if (IsRedirect(r.status) && r.has_header("Location")) {
            location = r.get_header_value("Location");
            redirect = true;
            return false;  // drop the redirect's body
          }
          if (!on_response(r)) {
            *refused = true;
            return false;
          }
          return true;
        },
        [&](const char* data, size_t n) {
          if (!on_data(data, n)) {
            *refused = true;
            return false;
          }
          return true;
        });
    if (redirect) {
      HttpUrl next;
      if (!ParseHttpUrl(ResolveLocation(cur, location), &next))
        return "redirect to an unsupported location \"" + location + "\"";
      cur = next;
      continue;
    }
    if (*refused) return "";
    if (!result && IsNoConnection(result.error())) {
      *not_connected = true;
      return DescribeNoConnection(cur, result.error());
    }
    if (!result) return DescribeError(result.error());
    return "";
  }
  return "more than " + std::to_string(kMaxRedirects) + " redirects";
}

// "bytes 100-199/1000" -> first=100, total=1000; "bytes */1000" -> first=-1,
// total=1000; total -1 when "*" or unparsable.
void ParseContentRange(const std::string& v, int64_t* first, int64_t* total) {
  *first = -1;
  *total = -1;
  if (v.rfind("bytes ", 0) != 0) return;
  std::string rest = v.substr(6);
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return;
  std::string range = rest.substr(0, slash), tot = rest.substr(slash + 1);
  if (range != "*") {
    size_t dash = range.find('-');
    if (dash != std::string::npos) *first = std::strtoll(range.substr(0, dash).c_str(), nullptr, 10);
  }
  if (!tot.empty() && tot != "*") *total = std::strtoll(tot.c_str(), nullptr, 10);
}

// The start of an error page for a message: whitespace collapsed, at most
// 300 bytes; HTML pages are left out (their markup says nothing useful).
std::string BodyExcerpt(const std::string& body, const std::string& content_type) {
  if (content_type.find("html") != std::string::npos) return "";
  std::string b;
  for (char c : body) {
    if (b.size() >= 300) break;
    bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (space && (b.empty() || b.back() == ' ')) continue;
    b.push_back(space ? ' ' : c);
  }
  while (!b.empty() && b.back() == ' ') b.pop_back();
  if (b.size() >= 300) b += "...";
  return b;
}

}  // namespace

std::string HttpUrl::Origin() const {
  std::string o = scheme + "://" + host;
  if (port != DefaultPort(scheme)) o += ":" + std::to_string(port);
  return o;
}

bool ParseHttpUrl(const std::string& url, HttpUrl* out) {
  size_t sep = url.find("://");
  if (sep == std::string::npos) return false;
  std::string scheme = url.substr(0, sep);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "http" && scheme != "https") return false;
  size_t start = sep + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (authority.empty() || authority.find('@') != std::string::npos || authority[0] == '[') return false;
  out->scheme = scheme;
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos) {
    std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out->port = std::stoi(port);
    if (out->port <= 0 || out->port > 65535) return false;
    out->host = authority.substr(0, colon);
  } else {
    out->port = DefaultPort(scheme);
    out->host = authority;
  }
  if (out->host.empty()) return false;
  std::transform(out->host.begin(), out->host.end(), out->host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string path = end == std::string::npos ? "" : url.substr(end);
  if (size_t hash = path.find('#'); hash != std::string::npos) path.resize(hash);
  if (path.empty() || path[0] != '/') path = "/" + path;
  out->path = path;
  return true;
}

std::string ResolveLocation(const HttpUrl& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  if (location.rfind("//", 0) == 0) return base.scheme + ":" + location;
  if (!location.empty() && location[0] == '/') return base.Origin() + location;
  std::string dir = base.path.substr(0, base.path.find('?'));
  dir = dir.substr(0, dir.rfind('/') + 1);
  return base.Origin() + dir + location;
}

HttpResponse HttpGetUrl(const std::string& url, const HttpHeaders& headers,
                        const std::string& bearer_token, double timeout_s) {
  HttpResponse out;
  httplib::Headers h;
  for (const auto& [k, v] : headers) h.emplace(k, v);
  std::string final_url;
  bool refused = false;
  std::string err = GetFollowing(
      url, h, bearer_token, timeout_s, [](const httplib::Response&) { return true; },
      [&](const char* d, size_t n) {
        out.body.append(d, n);
        return true;
      },
      &out.status, &final_url, &refused, &out.not_connected);
  if (!err.empty()) {
    out.status = 0;
    out.body.clear();
    out.error = err;
  }
  return out;
}

namespace {

// Where one GET of a download puts its bytes (the file, or an error page's
// start for the message), and what went wrong on the way.
struct DownloadSink {
  DownloadSink(const std::string& dest, int64_t from, const DownloadProgress& p, HttpDownloadInfo* i)
      : dest_path(dest), resume_from(from), progress(p), info(i) {}
  const std::string& dest_path;
  int64_t resume_from;
  const DownloadProgress& progress;
  HttpDownloadInfo* info;
  FILE* f = nullptr;
  std::string io_error, err_body, content_range, content_type, bad_range;
  int64_t got = 0;

  // 206 for the asked range: the partial file cut to it and appended to.
  bool Resume(const httplib::Response& r) {
    content_range = r.get_header_value("Content-Range");
    int64_t first = -1;
    ParseContentRange(content_range, &first, &info->total);
    if (first != resume_from) {
      bad_range = content_range.empty() ? "(none)" : content_range;
      return false;
    }
    if (::truncate(dest_path.c_str(), resume_from) != 0) {
      io_error = dest_path + ": cannot cut the partial file to " + std::to_string(resume_from) +
                 " bytes: " + std::strerror(errno);
      return false;
    }
    f = std::fopen(dest_path.c_str(), "ab");
    info->resumed = true;
    got = resume_from;
    return true;
  }

  bool OnResponse(const httplib::Response& r) {
    if (r.status == 206 && resume_from > 0) {
      if (!Resume(r)) return false;
    } else if (r.status == 200) {
      f = std::fopen(dest_path.c_str(), "wb");
      got = 0;
      if (r.has_header("Content-Length"))
        info->total = std::strtoll(r.get_header_value("Content-Length").c_str(), nullptr, 10);
    } else {
      content_range = r.get_header_value("Content-Range");
      content_type = r.get_header_value("Content-Type");
      return true;  // an error page: keep its start for the message
    }
    if (f == nullptr) {
      io_error = dest_path + ": cannot open for writing: " + std::strerror(errno);
      return false;
    }
    return true;
  }

  bool OnData(const char* d, size_t n) {
    if (f == nullptr) {
      if (err_body.size() < 4096) err_body.append(d, std::min(n, 4096 - err_body.size()));
      return true;
    }
    if (std::fwrite(d, 1, n, f) != n) {
      io_error = dest_path + ": write failed: " + std::strerror(errno);
      return false;
    }
    got += static_cast<int64_t>(n);
    info->bytes_written += static_cast<int64_t>(n);
    if (progress) progress(got, info->total);
    return true;
  }
};

// What one round came to; *again: the server's file changed under a resume
// (416), so the caller starts over from byte 0 (*resume_from set to 0).
Status RoundOutcome(const std::string& url, const std::string& err, const DownloadSink& sink, int64_t* resume_from,
                    HttpDownloadInfo* info, bool* again) {
  const std::string& dest_path = sink.dest_path;
  *again = false;
  if (!sink.io_error.empty()) return Status::IoError(sink.io_error);
  if (!sink.bad_range.empty())
    return Status::ServerError(url + ": asked for bytes from " + std::to_string(*resume_from) +
                               ", the server answered 206 with Content-Range " + sink.bad_range);
  const bool body = info->status == 200 || info->status == 206;
  if (!err.empty()) {
    std::string kept = info->file_size > 0 && body ? "; the " + std::to_string(info->file_size) +
                                                         " bytes received are kept in " + dest_path +
                                                         " (run again to resume)"
                                                   : "";
    return Status::Unavailable(url + ": " + err + kept);
  }
  if (body) {
    if (info->total >= 0 && info->file_size != info->total)
      return Status::Unavailable(url + ": the transfer ended after " + std::to_string(info->file_size) + " of " +
                                 std::to_string(info->total) + " bytes (kept in " + dest_path +
                                 "; run again to resume)");
    return Status::Ok();
  }
  if (info->status == 416 && *resume_from > 0) {
    int64_t first = -1, total = -1;
    ParseContentRange(sink.content_range, &first, &total);
    if (total == *resume_from && FileSize(dest_path) == *resume_from) {
      info->total = total;
      info->file_size = total;
      return Status::Ok();  // the partial file was already whole
    }
    *resume_from = 0;  // the server's file changed: start again
    *again = true;
    return Status::Ok();
  }
  std::string excerpt = BodyExcerpt(sink.err_body, sink.content_type);
  return Status::ServerError(url + ": HTTP " + std::to_string(info->status) + (excerpt.empty() ? "" : ": " + excerpt));
}

}  // namespace

Status HttpDownload(const std::string& url, const std::string& dest_path, int64_t resume_from,
                    const std::string& bearer_token, const DownloadProgress& progress,
                    HttpDownloadInfo* info) {
  HttpDownloadInfo local;
  if (info == nullptr) info = &local;
  *info = HttpDownloadInfo();
  HttpUrl parsed;
  if (!ParseHttpUrl(url, &parsed)) return Status::InvalidInput(url + ": not an http(s) URL");
  for (int round = 0; round < 2; ++round) {
    httplib::Headers headers{{"Accept-Encoding", "identity"}};
    if (resume_from > 0) headers.emplace("Range", "bytes=" + std::to_string(resume_from) + "-");
    info->resumed = false;
    info->total = -1;
    DownloadSink sink(dest_path, resume_from, progress, info);
    bool refused = false;
    std::string err = GetFollowing(
        url, headers, bearer_token, kDownloadReadTimeoutS,
        [&sink](const httplib::Response& r) { return sink.OnResponse(r); },
        [&sink](const char* d, size_t n) { return sink.OnData(d, n); }, &info->status, &info->final_url, &refused,
        &info->not_connected);
    if (sink.f != nullptr && std::fclose(sink.f) != 0 && sink.io_error.empty())
      sink.io_error = dest_path + ": write failed: " + std::strerror(errno);
    info->file_size = std::max<int64_t>(FileSize(dest_path), 0);
    bool again = false;
    Status st = RoundOutcome(url, err, sink, &resume_from, info, &again);
    if (!again) return st;
  }
  return Status::ServerError(url + ": HTTP 416 twice (Range Not Satisfiable)");
}

}  // namespace evalrun
