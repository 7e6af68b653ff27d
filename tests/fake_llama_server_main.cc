// evalrun-fake-server: the fake llama-server (tests/support/fake_server.h)
// as a program, so tests and the bench can run it as a managed engine. It
// takes llama-server's own flags for what they share, so one card command
// template can drive either binary; see Usage() below (--help).
//
// Contexts as llama-server b10470 sizes them: -c 0 (the default) is the
// model's training context; the total is padded up to a multiple of 256;
// without a unified KV cache each slot gets total / slots (padded up to a
// multiple of 256), with one each slot may use the whole total; a slot
// context above the training context is capped ("the slot context (X)
// exceeds the training context of the model (Y) - capping"). Without -np:
// 4 slots and a unified KV cache.
//
// The answer repeats the needle "The special magic number is N." found in
// the last user message. SIGTERM or SIGINT: stops serving and exits 0.
// Unknown flags: exit 1.
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/fake_server.h"

namespace {

constexpr const char* kNeedle = "The special magic number is ";

const char kUsage[] =
    "usage: evalrun-fake-server [options]\n"
    "\n"
    "llama-server's flags (the same meaning):\n"
    "  --host HOST              127.0.0.1 or localhost (the fake serves loopback only)\n"
    "  --port PORT              port to listen (default: 8080)\n"
    "  -np, --parallel N        number of server slots (default: -1, -1 = auto: 4 and a unified KV cache)\n"
    "  -c, --ctx-size N         size of the context (default: 0, 0 = the model's training context)\n"
    "  -kvu, --kv-unified       one KV cache shared by all slots (-no-kvu, --no-kv-unified: one per slot)\n"
    "  -a, --alias STRING       the model name the API reports (default: the model path)\n"
    "  --metrics                enable the prometheus compatible metrics endpoint (default: disabled)\n"
    "  --slots, --no-slots      expose the slots monitoring endpoint (default: enabled)\n"
    "  --api-key KEY            the key every endpoint but /health and /models asks for\n"
    "  -m, --model FNAME        model path (default: models/fake.gguf; never read)\n"
    "accepted and ignored (so a llama-server command line works unchanged):\n"
    "  -t, --threads N    --no-webui    --chat-template NAME\n"
    "\n"
    "test flags (the fake's own):\n"
    "  --n-ctx-train N          the model's training context (default: 131072)\n"
    "  --load-ms N              every endpoint answers 503 \"Loading model\" for N ms\n"
    "  --fail-load-above N      with a context above N, exit 1 after the load time with\n"
    "                           llama.cpp-like \"failed to allocate\" lines\n"
    "  --ignore-sigterm         ignore SIGTERM (only SIGKILL stops it)\n"
    "  --crash-on-chat-above N  with a context above N, a chat request kills the program with\n"
    "                           SIGBUS (no core file) after a log line: an engine that dies mid-request\n"
    "  --ms-per-token X         service time per generated token (default: 0)\n"
    "  --never-stop             the model never writes end-of-sequence: every answer runs on to\n"
    "                           max_tokens or the slot context (as the tiny reference model's do)\n"
    "  -h, --help               this text\n";

struct Flags {
  long long port = 8080, ctx = 0, slots = -1, load_ms = 0, fail_above = -1, n_ctx_train = 131072, crash_above = -1;
  int kv_unified = -1;  // -1: as the slots say
  double ms_per_token = 0;
  bool metrics = false, slots_endpoint = true, ignore_sigterm = false, never_stop = false;
  std::string model = "models/fake.gguf", alias, api_key;
};

evalrun::testing::FakeReply EchoNeedle(const nlohmann::json& request, bool never_stop) {
  std::string last_user;
  auto messages = request.find("messages");
  if (messages != request.end() && messages->is_array()) {
    for (const auto& m : *messages)
      if (m.is_object() && m.value("role", std::string()) == "user" && m.contains("content") &&
          m["content"].is_string())
        last_user = m["content"].get<std::string>();
  }
  evalrun::testing::FakeReply reply;
  if (never_stop) reply.finish_reason = "length";
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

int Fail(const std::string& what) {
  std::fprintf(stderr, "error: %s\n\n%s", what.c_str(), kUsage);
  return 1;
}

// 0 when the flags are good, else the exit code (after the message).
int ParseFlags(int argc, char** argv, Flags* f, bool* help) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](long long* out) { return i + 1 < argc && ParseInt(argv[++i], out); };
    auto text = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string ignored;
    long long n = 0;
    if (a == "-h" || a == "--help") {
      *help = true;
    } else if (a == "--port") {
      if (!value(&f->port) || f->port < 1 || f->port > 65535) return Fail("--port: expected 1..65535");
    } else if (a == "-c" || a == "--ctx-size") {
      if (!value(&f->ctx) || f->ctx < 0) return Fail(a + ": expected a number >= 0");
    } else if (a == "-np" || a == "--parallel") {
      if (!value(&f->slots) || (f->slots < 1 && f->slots != -1)) return Fail(a + ": expected a positive number or -1");
    } else if (a == "-kvu" || a == "--kv-unified") {
      f->kv_unified = 1;
    } else if (a == "-no-kvu" || a == "--no-kv-unified") {
      f->kv_unified = 0;
    } else if (a == "-a" || a == "--alias") {
      if (!text(&f->alias)) return Fail(a + ": expected a name");
      f->alias = f->alias.substr(0, f->alias.find(','));  // llama-server takes a list; the first is reported
    } else if (a == "--metrics") {
      f->metrics = true;
    } else if (a == "--slots" || a == "--no-slots") {
      f->slots_endpoint = a == "--slots";
    } else if (a == "--api-key") {
      if (!text(&f->api_key)) return Fail("--api-key: expected a key");
    } else if (a == "-m" || a == "--model") {
      if (!text(&f->model)) return Fail(a + ": expected a path");
    } else if (a == "--host") {
      if (!text(&ignored)) return Fail("--host: expected a value");
      if (ignored != "127.0.0.1" && ignored != "localhost") return Fail("--host: the fake serves 127.0.0.1 only");
    } else if (a == "-t" || a == "--threads") {
      if (!value(&n)) return Fail(a + ": expected a number");
    } else if (a == "--chat-template") {
      if (!text(&ignored)) return Fail("--chat-template: expected a name");
    } else if (a == "--no-webui") {
    } else if (a == "--n-ctx-train") {
      if (!value(&f->n_ctx_train) || f->n_ctx_train < 1) return Fail("--n-ctx-train: expected a positive number");
    } else if (a == "--load-ms") {
      if (!value(&f->load_ms) || f->load_ms < 0) return Fail("--load-ms: expected a number >= 0");
    } else if (a == "--fail-load-above") {
      if (!value(&f->fail_above) || f->fail_above < 0) return Fail("--fail-load-above: expected a number >= 0");
    } else if (a == "--crash-on-chat-above") {
      if (!value(&f->crash_above) || f->crash_above < 0) return Fail("--crash-on-chat-above: expected a number >= 0");
    } else if (a == "--ms-per-token") {
      char* end = nullptr;
      if (i + 1 >= argc) return Fail("--ms-per-token: expected a number >= 0");
      f->ms_per_token = std::strtod(argv[++i], &end);
      if (*end != '\0' || f->ms_per_token < 0) return Fail("--ms-per-token: expected a number >= 0");
    } else if (a == "--never-stop") {
      f->never_stop = true;
    } else if (a == "--ignore-sigterm") {
      f->ignore_sigterm = true;
    } else {
      return Fail("invalid argument: " + a);
    }
  }
  return 0;
}

long long Pad256(long long n) { return (n + 255) / 256 * 256; }

// --crash-on-chat-above: dies as a crashing llama-server does in the prefill
// (SIGBUS from a model file cut short under its mmap), without a core file.
[[noreturn]] void CrashMidRequest() {
  std::fprintf(stderr, "slot launch_slot_: id  0 | task 0 | processing task\n");
  std::fprintf(stderr, "ggml_backend_cpu: bus error reading tensor data (fake crash)\n");
  std::fflush(stderr);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGBUS, SIG_DFL);
  sigset_t bus;
  sigemptyset(&bus);
  sigaddset(&bus, SIGBUS);
  pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
  raise(SIGBUS);
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  bool help = false;
  if (int rc = ParseFlags(argc, argv, &f, &help)) return rc;
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
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
  if (f.ignore_sigterm) signal(SIGTERM, SIG_IGN);
  else sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  // llama-server's sizing (server.cpp, llama-context.cpp, server-context.cpp).
  if (f.slots < 0) {
    f.slots = 4;
    if (f.kv_unified < 0) f.kv_unified = 1;
  }
  const bool kvu = f.kv_unified == 1;
  long long n_ctx = Pad256(f.ctx == 0 ? f.n_ctx_train : f.ctx);
  long long n_ctx_seq = n_ctx;
  if (!kvu) {
    n_ctx_seq = Pad256(n_ctx / f.slots);
    if (n_ctx != n_ctx_seq * f.slots) {
      n_ctx = n_ctx_seq * f.slots;
      std::fprintf(stderr, "llama_context: n_ctx is not divisible by n_seq_max - rounding down to %lld\n", n_ctx);
    }
  }
  if (n_ctx_seq > f.n_ctx_train)
    std::fprintf(stderr, "llama_context: n_ctx_seq (%lld) > n_ctx_train (%lld) -- possible training context overflow\n",
                 n_ctx_seq, f.n_ctx_train);
  long long n_ctx_slot = n_ctx_seq;
  if (n_ctx_slot > f.n_ctx_train) {
    std::fprintf(stderr,
                 "srv    load_model: the slot context (%lld) exceeds the training context of the model (%lld) - "
                 "capping\n",
                 n_ctx_slot, f.n_ctx_train);
    n_ctx_slot = f.n_ctx_train;
  }

  const long long ctx_given = f.ctx == 0 ? n_ctx : f.ctx;
  const bool fail = f.fail_above >= 0 && ctx_given > f.fail_above;
  evalrun::testing::FakeServerOptions o;
  o.port = static_cast<int>(f.port);
  o.slots = static_cast<int>(f.slots);
  o.n_ctx = static_cast<int>(n_ctx_slot);
  o.kv_unified = kvu;
  o.kv_size = static_cast<int>(n_ctx);
  o.n_ctx_train = static_cast<int>(f.n_ctx_train);
  o.alias = f.alias;
  o.metrics = f.metrics;
  o.slots_endpoint = f.slots_endpoint;
  o.api_key = f.api_key;
  o.model_path = f.model;
  o.ms_per_token = f.ms_per_token;
  // Loading: every endpoint answers 503 until main has said the model is
  // loaded, as llama-server (a load that fails never does).
  o.load_ms = 1 << 30;
  evalrun::testing::FakeServer server(o);
  const bool never_stop = f.never_stop;
  const bool crash = f.crash_above >= 0 && ctx_given > f.crash_above;
  server.SetResponder([never_stop, crash](const nlohmann::json& r) {
    if (crash) CrashMidRequest();
    return EchoNeedle(r, never_stop);
  });

  std::fprintf(stderr, "main: build = 10470 (34af94c) [evalrun-fake-server]\n");
  std::fprintf(stderr, "main: n_ctx = %lld, n_parallel = %lld, n_ctx_slot = %lld\n", n_ctx, f.slots, n_ctx_slot);
  if (!server.Start()) {
    std::fprintf(stderr, "main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: %lld\n", f.port);
    return 1;
  }
  std::fprintf(stderr, "main: HTTP server is listening, hostname: 127.0.0.1, port: %lld\n", f.port);
  std::fprintf(stderr, "main: loading model\n");

  auto wait_signal = [&](long long ms) {  // true when a signal came within ms (-1: forever)
    int sig = 0;
    if (ms < 0) return sigwait(&set, &sig) == 0;
    struct timespec ts = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    return sigtimedwait(&set, nullptr, &ts) > 0;
  };

  if (fail) {
    if (wait_signal(f.load_ms)) {
      server.Stop();
      return 0;
    }
    const long long bytes = ctx_given * 131072LL;
    std::fprintf(stderr,
                 "ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc failed: "
                 "out of memory\n"
                 "alloc_tensor_range: failed to allocate CUDA0 buffer of size %lld\n"
                 "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n"
                 "common_init_from_params: failed to create context with model '%s'\n"
                 "srv    load_model: failed to load model, '%s'\n"
                 "main: exiting due to model loading error\n",
                 bytes / 1048576.0, bytes, f.model.c_str(), f.model.c_str());
    server.Stop();
    return 1;
  }

  if (f.load_ms > 0 && wait_signal(f.load_ms)) {
    std::fprintf(stderr, "srv    operator(): operator(): cleaning up before exit...\n");
    server.Stop();
    return 0;
  }
  std::fprintf(stderr, "srv    load_model: initializing, n_slots = %lld, n_ctx_slot = %lld, kv_unified = '%s'\n",
               f.slots, n_ctx_slot, kvu ? "true" : "false");
  std::fprintf(stderr, "main: model loaded\n");
  std::fprintf(stderr, "main: server is listening on http://127.0.0.1:%lld - starting the main loop\n", f.port);
  o.load_ms = 0;  // ready from now on (after the lines above)
  server.SetOptions(o);
  wait_signal(-1);
  std::fprintf(stderr, "srv    operator(): operator(): cleaning up before exit...\n");
  server.Stop();
  return 0;
}
