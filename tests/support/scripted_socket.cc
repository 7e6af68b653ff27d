#include "tests/support/scripted_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace evalrun::testing {

std::string ReplyHead(const std::string& headers, int status) {
  return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Error") + "\r\n" + headers + "\r\n";
}

std::string Chunk(const std::string& bytes) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
  return size + bytes + "\r\n";
}

ScriptedSocketServer::ScriptedSocketServer(SocketScript script) : script_(std::move(script)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    std::abort();
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

ScriptedSocketServer::~ScriptedSocketServer() { Stop(); }

void ScriptedSocketServer::Stop() {
  if (stop_.exchange(true)) return;
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
}

std::string ScriptedSocketServer::last_request() const {
  while (busy_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return last_request_;
}

void ScriptedSocketServer::Serve() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Answer(fd);
    ::close(fd);
  }
}

// Sleeps `ms` in steps, false once stopping.
static bool Pause(const std::atomic<bool>& stop, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (stop.load()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ms, 5)));
  }
  return !stop.load();
}

void ScriptedSocketServer::Answer(int fd) {
  busy_ = true;
  std::string req;
  char buf[65536];
  for (int i = 0; i < 500; ++i) {  // at most ~5 s for the request
    const size_t head_end = req.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const size_t cl = req.find("Content-Length: ");
      const size_t body = cl == std::string::npos ? 0 : std::strtoul(req.c_str() + cl + 16, nullptr, 10);
      if (req.size() >= head_end + 4 + body) break;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    req.append(buf, static_cast<size_t>(n));
  }
  last_request_ = req;
  busy_ = false;
  for (const auto& w : script_.writes) {
    if (!Pause(stop_, w.pause_ms)) return;
    ++written_;  // before the send: the client may see the bytes before send() returns
    if (::send(fd, w.bytes.data(), w.bytes.size(), MSG_NOSIGNAL) < 0) return;
  }
  Pause(stop_, script_.hold_ms);
}

}  // namespace evalrun::testing
