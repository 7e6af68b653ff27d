// The only file that includes httplib.h (cf. llama.cpp's server-http.h):
// the https:// transport, MakeHttpTransport (http:// goes to evalrun's own
// transport, socket_transport.cc), and the whole-URL GETs along redirects
// that HttpGetUrl and HttpDownload (http_download.cc) use.
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
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "evals/server/http.h"
#include "evals/server/http_internal.h"

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

}  // namespace

std::unique_ptr<HttpTransport> MakeHttpTransport(const std::string& origin,
                                                 const std::string& bearer_token, size_t max_reply_bytes) {
  HttpUrl u;
  if (ParseHttpUrl(origin, &u) && u.scheme == "http")
    return http_internal::MakeSocketTransport(u, bearer_token, max_reply_bytes);
  return std::make_unique<HttplibTransport>(origin, bearer_token, max_reply_bytes);
}

// ---------------------------------------------------------------------------
// Whole-URL GETs with redirects (downloads).

namespace {

constexpr int kMaxRedirects = 10;
constexpr time_t kConnectTimeoutS = 15;

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

// A reply's head as http_internal::GetFollowing's callers see it.
class HttplibHead : public http_internal::ReplyHead {
 public:
  explicit HttplibHead(const httplib::Response& r) : r_(r) {}
  int status() const override { return r_.status; }
  bool HasHeader(const std::string& name) const override { return r_.has_header(name); }
  std::string Header(const std::string& name) const override { return r_.get_header_value(name); }

 private:
  const httplib::Response& r_;
};

}  // namespace

namespace http_internal {

// http_internal.h says what it does.
std::string GetFollowing(const std::string& url, const HttpHeaders& base_headers,
                         const std::string& bearer_token, double read_timeout_s,
                         const std::function<bool(const ReplyHead&)>& on_response,
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
    httplib::Headers headers(base_headers.begin(), base_headers.end());
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
          if (!on_response(HttplibHead(r))) {
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

}  // namespace http_internal

HttpResponse HttpGetUrl(const std::string& url, const HttpHeaders& headers,
                        const std::string& bearer_token, double timeout_s) {
  HttpResponse out;
  std::string final_url;
  bool refused = false;
  std::string err = http_internal::GetFollowing(
      url, headers, bearer_token, timeout_s, [](const http_internal::ReplyHead&) { return true; },
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

}  // namespace evalrun
