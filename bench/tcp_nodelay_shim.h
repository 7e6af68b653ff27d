// Switches of the bench's socket interposer (tcp_nodelay_shim.cc explains
// why it exists). Thread-safe (atomics).
#ifndef EVALRUN_BENCH_TCP_NODELAY_SHIM_H_
#define EVALRUN_BENCH_TCP_NODELAY_SHIM_H_

namespace evalrun::bench {

// The in-process fake server's sockets get llama-server's settings:
// TCP_NODELAY on every accepted socket and a listen backlog of at least 512.
// On by default.
void SetServerSocketsLikeLlamaServer(bool on);
bool ServerSocketsLikeLlamaServer();
// Sockets this process connects get TCP_NODELAY. Off by default; on only
// while the bare reference client runs (or --client-nodelay).
void SetClientNoDelay(bool on);
// How many sockets the shim has changed (a check that the interposition
// works): accepted, connected, listening.
int ShimServerSockets();
int ShimClientSockets();
int ShimListenSockets();

}  // namespace evalrun::bench

#endif  // EVALRUN_BENCH_TCP_NODELAY_SHIM_H_
