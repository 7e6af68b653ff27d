#include "tests/support/fake_http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>

namespace evalrun::testing {

std::string FakeHttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(k[i])) == std::tolower(static_cast<unsigned char>(name[i]));
    if (same) return v;
  }
  return "";
}

namespace {

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool ClientGone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Reads from a connection into a buffer; what a request did not use stays
// for the next one.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}

  // Waits up to timeout_ms for the first byte of a request.
  // False on timeout, close or error.
  bool WaitForData(int timeout_ms) {
    if (!buf_.empty()) return true;
    pollfd p{fd_, POLLIN, 0};
    int r;
    do r = ::poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    return r > 0 && Fill();
  }
  // Up to and including "\r\n\r\n"; false when the connection ends first.
  bool ReadHead(std::string* head) {
    for (;;) {
      size_t end = buf_.find("\r\n\r\n");
      if (end != std::string::npos) {
        *head = buf_.substr(0, end + 2);
        buf_.erase(0, end + 4);
        return true;
      }
      if (buf_.size() > (1 << 20) || !Fill()) return false;
    }
  }
  bool ReadExactly(size_t n, std::string* out) {
    while (buf_.size() < n)
      if (!Fill()) return false;
    out->append(buf_, 0, n);
    buf_.erase(0, n);
    return true;
  }
  bool ReadLine(std::string* line) {
    for (;;) {
      size_t end = buf_.find("\r\n");
      if (end != std::string::npos) {
        *line = buf_.substr(0, end);
        buf_.erase(0, end + 2);
        return true;
      }
      if (!Fill()) return false;
    }
  }

 private:
  bool Fill() {
    char tmp[65536];
    for (;;) {
      ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf_.append(tmp, static_cast<size_t>(n));
      return true;
    }
  }
  int fd_;
  std::string buf_;
};

// Parses the request line and headers; false on a malformed head.
bool ParseHead(const std::string& head, FakeHttpRequest* req, std::string* version) {
  size_t eol = head.find("\r\n");
  std::string line = head.substr(0, eol);
  size_t a = line.find(' '), b = line.rfind(' ');
  if (a == std::string::npos || b == a) return false;
  req->method = line.substr(0, a);
  std::string target = line.substr(a + 1, b - a - 1);
  *version = line.substr(b + 1);
  if (version->rfind("HTTP/1.", 0) != 0) return false;
  size_t q = target.find('?');
  req->path = target.substr(0, q);
  req->query = q == std::string::npos ? "" : target.substr(q + 1);
  size_t pos = eol + 2;
  while (pos < head.size()) {
    size_t e = head.find("\r\n", pos);
    if (e == std::string::npos) e = head.size();
    std::string h = head.substr(pos, e - pos);
    pos = e + 2;
    if (h.empty()) continue;
    size_t colon = h.find(':');
    if (colon == std::string::npos) return false;
    std::string v = h.substr(colon + 1);
    size_t s = v.find_first_not_of(" \t"), t = v.find_last_not_of(" \t");
    req->headers.emplace_back(h.substr(0, colon), s == std::string::npos ? "" : v.substr(s, t - s + 1));
  }
  return true;
}

bool ReadBody(Reader* in, const FakeHttpRequest& req, std::string* body) {
  if (Lower(req.Header("Transfer-Encoding")).find("chunked") != std::string::npos) {
    for (;;) {
      std::string line;
      if (!in->ReadLine(&line)) return false;
      size_t n = std::strtoul(line.c_str(), nullptr, 16);
      if (n == 0) {
        while (in->ReadLine(&line) && !line.empty()) {
        }
        return true;
      }
      if (!in->ReadExactly(n, body) || !in->ReadLine(&line)) return false;
    }
  }
  const std::string len = req.Header("Content-Length");
  if (len.empty()) return true;
  return in->ReadExactly(std::strtoull(len.c_str(), nullptr, 10), body);
}

}  // namespace

struct FakeHttpServer::Impl {
  FakeHttpHandler handler;
  FakeHttpOptions opts;
  int listen_fd = -1;
  int wake[2] = {-1, -1};
  int port = 0;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};  // BeginStop: nothing more is answered
  std::atomic<bool> stopped{false};   // Stop: the threads are joined
  std::atomic<int> accepted{0};

  struct Conn {
    int fd;
    std::thread thread;
    bool done = false;
  };
  std::mutex mu;
  std::list<Conn> conns;

  void AcceptLoop();
  void Serve(int fd);
  // Joins and closes the connections whose threads have finished.
  void Reap();
};

void FakeHttpServer::Impl::AcceptLoop() {
  for (;;) {
    pollfd p[2] = {{listen_fd, POLLIN, 0}, {wake[0], POLLIN, 0}};
    int r = ::poll(p, 2, 1000);
    if (stopping.load()) return;
    Reap();
    if (r <= 0 || !(p[0].revents & POLLIN)) continue;
    // accept(2), not accept4: the bench interposes accept (bench/tcp_nodelay_shim.cc).
    int fd = ::accept(listen_fd, nullptr, nullptr);
    if (fd < 0) continue;
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++accepted;
    std::lock_guard<std::mutex> l(mu);
    if (stopping.load()) {
      ::close(fd);
      return;
    }
    conns.push_back(Conn{fd, {}, false});
    Conn* c = &conns.back();
    c->thread = std::thread([this, c] {
      Serve(c->fd);
      std::lock_guard<std::mutex> l2(mu);
      ::shutdown(c->fd, SHUT_RDWR);
      c->done = true;
    });
  }
}

void FakeHttpServer::Impl::Reap() {
  std::list<Conn> finished;
  {
    std::lock_guard<std::mutex> l(mu);
    for (auto it = conns.begin(); it != conns.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), conns, it);
      it = next;
    }
  }
  for (auto& c : finished) {
    c.thread.join();
    ::close(c.fd);
  }
}

void FakeHttpServer::Impl::Serve(int fd) {
  Reader in(fd);
  const std::string keep_alive =
      "Keep-Alive: timeout=" + std::to_string(opts.keep_alive_timeout_s) + ", max=" +
      std::to_string(opts.keep_alive_max_count) + "\r\n";
  for (int served = 0; served < opts.keep_alive_max_count && !stopping.load(); ++served) {
    // Each request, the first too, must start within the keep-alive timeout
    // (httplib's keep_alive() before every request).
    if (!in.WaitForData(opts.keep_alive_timeout_s * 1000)) return;
    std::string head, version;
    FakeHttpRequest req;
    if (!in.ReadHead(&head) || !ParseHead(head, &req, &version)) return;
    if (Lower(req.Header("Expect")) == "100-continue" && !WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return;
    if (!ReadBody(&in, req, &req.body)) return;
    req.client_gone = [fd] { return ClientGone(fd); };

    FakeHttpResponse res;
    handler(req, &res);
    if (res.no_reply) return;
    if (stopping.load() && !res.stream) return;

    const std::string conn_hdr = Lower(req.Header("Connection"));
    const bool client_close = conn_hdr == "close" || (version == "HTTP/1.0" && conn_hdr != "keep-alive");
    const bool last = served + 1 >= opts.keep_alive_max_count;
    const bool close = client_close || last || res.status >= 400 || res.truncate_body_at >= 0;

    std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " + Reason(res.status) + "\r\n";
    out += "Server: llama.cpp\r\nAccess-Control-Allow-Origin: \r\n";
    if (res.stream) out += "X-Accel-Buffering: no\r\n";
    for (const auto& [k, v] : res.headers) out += k + ": " + v + "\r\n";
    out += "Content-Type: " + res.content_type + "\r\n";
    if (res.stream) {
      out += "Transfer-Encoding: chunked\r\n";
    } else {
      out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
    }
    out += close ? std::string("Connection: close\r\n") : keep_alive;
    out += "\r\n";

    if (res.stream) {
      // Called even when the headers could not be sent: it owns the task.
      bool ok = WriteAll(fd, out);
      res.stream([&](std::string_view chunk) {
        if (!ok || chunk.empty()) return ok;
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
        ok = WriteAll(fd, std::string(size) + std::string(chunk) + "\r\n");
        return ok;
      });
      if (ok) WriteAll(fd, "0\r\n\r\n");
      return;  // llama-server closes the connection after every stream
    }
    if (res.truncate_body_at >= 0) {
      out.append(res.body, 0, std::min<size_t>(res.body.size(), static_cast<size_t>(res.truncate_body_at)));
      WriteAll(fd, out);
      return;
    }
    out += res.body;
    if (!WriteAll(fd, out) || close) return;
  }
}

FakeHttpServer::FakeHttpServer(FakeHttpHandler handler, FakeHttpOptions opts) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  impl_->opts = opts;
}

FakeHttpServer::~FakeHttpServer() { Stop(); }

bool FakeHttpServer::Listen(int port) {
  Impl* im = impl_.get();
  im->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (im->listen_fd < 0) return false;
  int one = 1;
  ::setsockopt(im->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof addr;
  if (::bind(im->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(im->listen_fd, 512) != 0 ||
      ::getsockname(im->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::pipe2(im->wake, O_CLOEXEC) != 0) {
    ::close(im->listen_fd);
    im->listen_fd = -1;
    return false;
  }
  im->port = ntohs(addr.sin_port);
  im->accept_thread = std::thread([im] { im->AcceptLoop(); });
  return true;
}

int FakeHttpServer::port() const { return impl_->port; }

int FakeHttpServer::connections_accepted() const { return impl_->accepted.load(); }

void FakeHttpServer::BeginStop() {
  Impl* im = impl_.get();
  if (im->listen_fd < 0 || im->stopping.exchange(true)) return;
  (void)!::write(im->wake[1], "x", 1);
}

void FakeHttpServer::Stop() {
  Impl* im = impl_.get();
  if (im->listen_fd < 0 || im->stopped.exchange(true)) return;
  BeginStop();
  if (im->accept_thread.joinable()) im->accept_thread.join();
  {
    std::lock_guard<std::mutex> l(im->mu);
    for (auto& c : im->conns)
      if (!c.done) ::shutdown(c.fd, SHUT_RDWR);
  }
  for (auto& c : im->conns) {
    if (c.thread.joinable()) c.thread.join();
    ::close(c.fd);
  }
  im->conns.clear();
  ::close(im->listen_fd);
  ::close(im->wake[0]);
  ::close(im->wake[1]);
}

}  // namespace evalrun::testing
