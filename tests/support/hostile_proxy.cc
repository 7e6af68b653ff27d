#include "tests/support/hostile_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>

#include "tests/support/raw_http.h"

namespace evalrun::testing {
namespace {

// Reads one request (head + Content-Length body) from fd; false on close,
// error, timeout or stop.
bool ReadRequest(int fd, const std::atomic<bool>& stop, std::string* buf, std::string* head, std::string* body) {
  for (int waited_ms = 0; waited_ms < 10000;) {
    const size_t end = buf->find("\r\n\r\n");
    if (end != std::string::npos) {
      *head = buf->substr(0, end + 4);
      size_t length = 0;
      for (const char* name : {"Content-Length:", "content-length:"}) {
        const size_t at = head->find(name);
        if (at != std::string::npos) length = std::strtoul(head->c_str() + at + 15, nullptr, 10);
      }
      if (buf->size() >= end + 4 + length) {
        *body = buf->substr(end + 4, length);
        buf->erase(0, end + 4 + length);
        return true;
      }
    }
    if (stop) return false;
    struct pollfd p = {fd, POLLIN, 0};
    const int rc = ::poll(&p, 1, 100);
    if (rc == 0) {
      waited_ms += 100;
      continue;
    }
    char tmp[65536];
    const ssize_t n = rc > 0 ? ::recv(fd, tmp, sizeof tmp, 0) : -1;
    if (n <= 0) return false;
    buf->append(tmp, static_cast<size_t>(n));
  }
  return false;
}

bool SendAll(int fd, const std::string& data) {
  for (size_t off = 0; off < data.size();) {
    const ssize_t w = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (w <= 0) return false;
    off += static_cast<size_t>(w);
  }
  return true;
}

std::string Reason(int status) {
  static const std::map<int, std::string> reasons = {{200, "OK"}, {401, "Unauthorized"}, {429, "Too Many Requests"},
                                                     {500, "Internal Server Error"}, {503, "Service Unavailable"}};
  auto it = reasons.find(status);
  return it == reasons.end() ? "Status" : it->second;
}

}  // namespace

std::string ReplyBytes(int status, const std::string& body, const std::string& extra_headers, long content_length,
                       const std::string& content_type) {
  return "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(content_length >= 0 ? content_length : static_cast<long>(body.size())) +
         "\r\nKeep-Alive: timeout=5, max=100\r\n" + extra_headers + "\r\n" + body;
}

HostileAction PassThrough(const ProxiedExchange& x) {
  HostileAction a;
  if (x.status == 0) {
    a.close_after = true;
    return a;
  }
  a.writes.push_back(ReplyBytes(x.status, x.reply_body));
  return a;
}

HostileProxy::HostileProxy(int upstream_port, HostileScript script)
    : upstream_port_(upstream_port), script_(std::move(script)) {}

HostileProxy::~HostileProxy() { Stop(); }

bool HostileProxy::Start() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return false;
  int yes = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 64) != 0) return false;
  socklen_t len = sizeof a;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  start_ = std::chrono::steady_clock::now();
  acceptor_ = std::thread([this] { Accept(); });
  return true;
}

void HostileProxy::Stop() {
  if (stop_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> l(mu_);
    for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : servers_) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void HostileProxy::SetScript(HostileScript script) {
  std::lock_guard<std::mutex> l(mu_);
  script_ = std::move(script);
}

std::vector<ProxiedExchange> HostileProxy::exchanges() const {
  std::lock_guard<std::mutex> l(mu_);
  return seen_;
}

void HostileProxy::Accept() {
  while (!stop_) {
    struct pollfd p = {listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    // Each scripted write leaves at once (no Nagle wait for the client's ACK).
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    const int n = connections_++;
    std::lock_guard<std::mutex> l(mu_);
    client_fds_.push_back(fd);
    servers_.emplace_back([this, fd, n] { Serve(fd, n); });
  }
}

HostileAction HostileProxy::Decide(ProxiedExchange* x) {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& s : seen_) x->n += s.path == x->path ? 1 : 0;
  seen_.push_back(*x);
  return script_ ? script_(*x) : PassThrough(*x);
}

void HostileProxy::Serve(int fd, int connection) {
  RawHttp upstream;
  std::string buf, head, body;
  bool connected = false;
  while (!stop_ && ReadRequest(fd, stop_, &buf, &head, &body)) {
    ProxiedExchange x;
    auto since = [this] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); };
    x.at_s = since();
    const size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
    x.method = head.substr(0, sp1);
    x.path = head.substr(sp1 + 1, sp2 - sp1 - 1);
    x.request_head = head;
    x.request_body = body;
    x.connection = connection;
    if (!connected) connected = upstream.Connect(upstream_port_);
    std::string auth;
    const size_t at = head.find("Authorization: ");
    if (at != std::string::npos) auth = head.substr(at, head.find("\r\n", at) + 2 - at);
    RawReply r = connected ? upstream.Request(x.method, x.path, body, 10, auth) : RawReply{};
    if (r.status == 0 && connected) {  // the upstream closed its end: once more on a new one
      upstream.Close();
      connected = upstream.Connect(upstream_port_);
      if (connected) r = upstream.Request(x.method, x.path, body, 10, auth);
    }
    x.status = r.status;
    x.reply_body = r.body;
    x.replied_s = since();
    const HostileAction a = Decide(&x);
    bool ok = true;
    for (size_t i = 0; i < a.writes.size() && ok; ++i) {
      if (i > 0 && a.pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.pause_ms));
      ok = SendAll(fd, a.writes[i]);
    }
    if (!ok || a.close_after) break;
  }
  ::shutdown(fd, SHUT_RDWR);
  std::lock_guard<std::mutex> l(mu_);
  for (auto& c : client_fds_)
    if (c == fd) c = -1;
  ::close(fd);
}

}  // namespace evalrun::testing
