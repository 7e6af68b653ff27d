// llama-server's socket settings for the bench's own sockets, by
// interposing accept(2), listen(2) and connect(2) in the evalrun-bench
// executable (cpp-httplib is a shared library here; its calls bind to these
// definitions first).
//
// Why: llama.cpp's server compiles cpp-httplib with
//   CPPHTTPLIB_TCP_NODELAY true     ("disable Nagle's algorithm") and
//   CPPHTTPLIB_LISTEN_BACKLOG 512   ("avoid connection resets for >> 1 slots")
// (llama.cpp tools/server utils.hpp). The fake server (tests/support/
// fake_server.cc, Debian's libcpp-httplib 0.11.4) has neither:
//  - with Nagle on, httplib's two write(2)s per reply (headers, then body)
//    make the body wait for the client's delayed ACK: ~35-40 ms a reply;
//  - with a backlog of 5, and the server closing every keep-alive connection
//    after 5 requests (CPPHTTPLIB_KEEPALIVE_MAX_COUNT), 16 clients that
//    reconnect together overflow the accept queue; a dropped SYN is sent
//    again after 1 s, and that request takes ~1040 ms.
// Neither is llama-server's behaviour, so both would be charged to the
// runner. The evalrun child is another process: its client is measured as
// shipped.
//
//  - accept: accepted sockets get TCP_NODELAY, and listen: the backlog is
//    raised to 512, while ServerSocketsLikeLlamaServer() (the default;
//    --fake-httplib-defaults turns it off);
//  - connect: AF_INET/AF_INET6 sockets get TCP_NODELAY while
//    SetClientNoDelay(true) (the bare reference client, --client-nodelay).
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>

#include "bench/tcp_nodelay_shim.h"

namespace evalrun::bench {
namespace {
std::atomic<bool> g_server_like_llama{true};
std::atomic<bool> g_client_nodelay{false};
std::atomic<int> g_server_sockets{0};
std::atomic<int> g_client_sockets{0};
std::atomic<int> g_listen_sockets{0};
}  // namespace

void SetServerSocketsLikeLlamaServer(bool on) { g_server_like_llama = on; }
bool ServerSocketsLikeLlamaServer() { return g_server_like_llama.load(); }
void SetClientNoDelay(bool on) { g_client_nodelay = on; }
int ShimServerSockets() { return g_server_sockets.load(); }
int ShimClientSockets() { return g_client_sockets.load(); }
int ShimListenSockets() { return g_listen_sockets.load(); }

namespace {
void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}
}  // namespace

}  // namespace evalrun::bench

extern "C" int accept(int fd, sockaddr* addr, socklen_t* len) {
  using Fn = int (*)(int, sockaddr*, socklen_t*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "accept"));
  const int s = real(fd, addr, len);
  if (s >= 0 && evalrun::bench::g_server_like_llama.load()) {
    evalrun::bench::SetNoDelay(s);
    ++evalrun::bench::g_server_sockets;
  }
  return s;
}

extern "C" int listen(int fd, int backlog) {
  using Fn = int (*)(int, int);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "listen"));
  if (evalrun::bench::g_server_like_llama.load() && backlog < 512) {
    backlog = 512;
    ++evalrun::bench::g_listen_sockets;
  }
  return real(fd, backlog);
}

extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  using Fn = int (*)(int, const sockaddr*, socklen_t);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "connect"));
  if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6) &&
      evalrun::bench::g_client_nodelay.load()) {
    evalrun::bench::SetNoDelay(fd);
    ++evalrun::bench::g_client_sockets;
  }
  return real(fd, addr, len);
}
