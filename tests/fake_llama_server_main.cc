// evalrun-fake-server: the fake llama-server (tests/support/fake_server.h)
// as a program, so tests and the bench can run it as a managed engine.
//
// llama-server's flags (the ones evalrun's cards use):
//   --port N              listen on 127.0.0.1:N (default 8080)
//   --host H              127.0.0.1 or localhost only (the fake binds loopback)
//   -c, --ctx-size N      total context (default 4096); /props reports the
//                         per-slot n_ctx = N / slots, as llama-server does
//   -np, --parallel N     slots (default 1)
//   -m, --model PATH      reported as model_path
// Test flags:
//   --load-ms N           GET /health answers 503 (loading) for N ms
//   --fail-load-above N   with a context above N, exit 1 after the load time
//                         with llama.cpp-like "failed to allocate" lines
//   --ignore-sigterm      ignore SIGTERM (only SIGKILL stops it)
// Chat prompts of n_ctx tokens or more get llama-server's 400
// exceed_context_size_error. The answer repeats the needle "The special
// magic number is N." found in the last user message.
//
// SIGTERM or SIGINT: stops serving and exits 0. Unknown flags: exit 1.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/fake_server.h"

namespace {

constexpr const char* kNeedle = "The special magic number is ";

evalrun::testing::FakeReply EchoNeedle(const nlohmann::json& request) {
  std::string last_user;
  const auto& messages = request["messages"];
  if (messages.is_array()) {
    for (const auto& m : messages)
      if (m.is_object() && m.value("role", std::string()) == "user" && m.contains("content") &&
          m["content"].is_string())
        last_user = m["content"].get<std::string>();
  }
  evalrun::testing::FakeReply reply;
  size_t at = last_user.find(kNeedle);
  if (at == std::string::npos) {
    reply.content = "I could not find a special magic number.";
    return reply;
  }
  size_t begin = at + std::string(kNeedle).size(), end = begin;
  while (end < last_user.size() && last_user[end] >= '0' && last_user[end] <= '9') ++end;
  reply.content = "The special magic number is " + last_user.substr(begin, end - begin) + ".";
  return reply;
}

bool ParseInt(const char* s, long long* out) {
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0') return false;
  *out = v;
  return true;
}

int Usage(const std::string& what) {
  std::fprintf(stderr, "error: %s\nusage: evalrun-fake-server [--port N] [--host 127.0.0.1] [-c N] [-np N] "
                       "[-m PATH] [--load-ms N] [--fail-load-above N] [--ignore-sigterm]\n",
               what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  long long port = 8080, ctx = 4096, slots = 1, load_ms = 0, fail_above = -1;
  std::string model = "models/fake.gguf";
  bool ignore_sigterm = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](long long* out) {
      if (i + 1 >= argc) return false;
      return ParseInt(argv[++i], out);
    };
    if (a == "--port") {
      if (!value(&port) || port < 1 || port > 65535) return Usage("--port: expected 1..65535");
    } else if (a == "-c" || a == "--ctx-size") {
      if (!value(&ctx) || ctx < 1) return Usage(a + ": expected a positive number");
    } else if (a == "-np" || a == "--parallel") {
      if (!value(&slots) || slots < 1) return Usage(a + ": expected a positive number");
    } else if (a == "--load-ms") {
      if (!value(&load_ms) || load_ms < 0) return Usage("--load-ms: expected a number >= 0");
    } else if (a == "--fail-load-above") {
      if (!value(&fail_above) || fail_above < 0) return Usage("--fail-load-above: expected a number >= 0");
    } else if (a == "--host") {
      if (i + 1 >= argc) return Usage("--host: expected a value");
      const std::string h = argv[++i];
      if (h != "127.0.0.1" && h != "localhost") return Usage("--host: the fake serves 127.0.0.1 only");
    } else if (a == "-m" || a == "--model") {
      if (i + 1 >= argc) return Usage(a + ": expected a path");
      model = argv[++i];
    } else if (a == "--ignore-sigterm") {
      ignore_sigterm = true;
    } else {
      return Usage("invalid argument: " + a);
    }
  }

  // What the program inherited (tests check that a managed engine starts
  // with SIGINT/SIGTERM neither blocked nor ignored).
  {
    sigset_t old;
    sigprocmask(SIG_BLOCK, nullptr, &old);
    struct sigaction term;
    sigaction(SIGTERM, nullptr, &term);
    std::fprintf(stderr, "main: inherited signals: SIGINT %s, SIGTERM %s%s\n",
                 sigismember(&old, SIGINT) ? "blocked" : "unblocked",
                 sigismember(&old, SIGTERM) ? "blocked" : "unblocked",
                 term.sa_handler == SIG_IGN ? " (ignored)" : "");
  }

  // Signals are taken by sigwait below; block them before any thread starts.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  if (ignore_sigterm) signal(SIGTERM, SIG_IGN);
  else sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  const bool fail = fail_above >= 0 && ctx > fail_above;
  evalrun::testing::FakeServerOptions o;
  o.port = static_cast<int>(port);
  o.slots = static_cast<int>(slots);
  o.n_ctx = static_cast<int>(ctx / slots);
  o.model_path = model;
  o.check_context = true;
  // Loading: /health answers 503 until main says the model is loaded (a
  // load that fails never does).
  o.load_ms = fail || load_ms > 0 ? 1 << 30 : 0;
  evalrun::testing::FakeServer server(o);
  server.SetResponder(EchoNeedle);

  std::fprintf(stderr, "main: build = 10470 (34af94c) [evalrun-fake-server]\n");
  std::fprintf(stderr, "main: n_ctx = %lld, n_parallel = %lld, n_ctx_slot = %lld\n", ctx, slots, ctx / slots);
  if (!server.Start()) {
    std::fprintf(stderr, "main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: %lld\n", port);
    return 1;
  }
  std::fprintf(stderr, "main: HTTP server is listening, hostname: 127.0.0.1, port: %lld\n", port);
  std::fprintf(stderr, "main: loading model\n");

  auto wait_signal = [&](long long ms) {  // true when a signal came within ms (-1: forever)
    int sig = 0;
    if (ms < 0) return sigwait(&set, &sig) == 0;
    struct timespec ts = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    return sigtimedwait(&set, nullptr, &ts) > 0;
  };

  if (fail) {
    if (wait_signal(load_ms)) {
      server.Stop();
      return 0;
    }
    const long long bytes = ctx * 131072LL;
    std::fprintf(stderr,
                 "ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc failed: "
                 "out of memory\n"
                 "alloc_tensor_range: failed to allocate CUDA0 buffer of size %lld\n"
                 "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n"
                 "common_init_from_params: failed to create context with model '%s'\n"
                 "srv    load_model: failed to load model, '%s'\n"
                 "main: exiting due to model loading error\n",
                 bytes / 1048576.0, bytes, model.c_str(), model.c_str());
    server.Stop();
    return 1;
  }

  if (load_ms > 0 && wait_signal(load_ms)) {
    std::fprintf(stderr, "srv    operator(): operator(): cleaning up before exit...\n");
    server.Stop();
    return 0;
  }
  std::fprintf(stderr, "main: model loaded\n");
  std::fprintf(stderr, "main: server is listening on http://127.0.0.1:%lld - starting the main loop\n", port);
  if (load_ms > 0) {
    o.load_ms = 0;  // healthy from now on (after the lines above)
    server.SetOptions(o);
  }
  wait_signal(-1);
  std::fprintf(stderr, "srv    operator(): operator(): cleaning up before exit...\n");
  server.Stop();
  return 0;
}
