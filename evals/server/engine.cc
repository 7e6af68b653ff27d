#include "evals/server/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "evals/base/clock.h"

namespace evalrun {
namespace {

// The process groups of the managed engines running now, for
// TerminateManagedEngines (lock-free: it may run on a path about to _exit).
constexpr int kMaxEngines = 32;
std::atomic<pid_t> g_engine_groups[kMaxEngines];

void RegisterGroup(pid_t pgid) {
  for (auto& slot : g_engine_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return;
  }
}

void UnregisterGroup(pid_t pgid) {
  for (auto& slot : g_engine_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

std::string Quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`{}*?;&|<>()") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

void AppendToLog(const std::string& path, const std::string& line) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

std::string LogLine(Clock* clock, const std::string& what) {
  return "=== evalrun " + clock->UtcIso8601() + ": " + what + "\n";
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// argv[0] as execve needs it: as given when it has a '/', else the first
// executable on PATH (looked up here: execvp is not async-signal-safe).
Status ResolveExecutable(const std::string& name, std::string* path) {
  if (name.find('/') != std::string::npos) {
    if (!IsExecutableFile(name))
      return Status::NotFound("server.command[0]: " + name + " is not an executable file");
    *path = name;
    return Status::Ok();
  }
  // The process runner's PATH look-up (evals/proc/process_runner.h).
  if (!FindProgram(name, path).ok()) {
    const char* env = std::getenv("PATH");
    return Status::NotFound("server.command[0]: " + name + " not found on PATH (" +
                            (env && *env ? env : "/usr/local/bin:/usr/bin:/bin") + ")");
  }
  return Status::Ok();
}

}  // namespace

Status OriginPort(const std::string& origin, int* port) {
  auto scheme_end = origin.find("://");
  if (scheme_end == std::string::npos)
    return Status::InvalidInput("origin " + origin + ": expected scheme://host[:port]");
  const std::string scheme = origin.substr(0, scheme_end);
  std::string host_port = origin.substr(scheme_end + 3);
  if (host_port.find('/') != std::string::npos) host_port = host_port.substr(0, host_port.find('/'));
  auto colon = host_port.rfind(':');
  auto bracket = host_port.rfind(']');  // [::1]:8080
  if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket)) {
    if (scheme == "http") *port = 80;
    else if (scheme == "https") *port = 443;
    else return Status::InvalidInput("origin " + origin + ": unknown scheme and no port");
    return Status::Ok();
  }
  const std::string digits = host_port.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Status::InvalidInput("origin " + origin + ": the port is not a number");
  int p = std::stoi(digits);
  if (p < 1 || p > 65535) return Status::InvalidInput("origin " + origin + ": port out of range");
  *port = p;
  return Status::Ok();
}

Status ExpandCommand(const std::vector<std::string>& templ, int port, int64_t context, int slots,
                     std::vector<std::string>* argv) {
  if (templ.empty() || templ[0].empty())
    return Status::InvalidInput("server.command: expected a non-empty argv list, e.g. "
                                "[\"llama-server\", \"-m\", \"model.gguf\", \"--port\", \"{port}\", "
                                "\"-c\", \"{context}\", \"-np\", \"{slots}\"]");
  const std::pair<std::string, std::string> subs[] = {
      {"{port}", std::to_string(port)},
      {"{context}", std::to_string(context)},
      {"{slots}", std::to_string(slots)},
  };
  argv->clear();
  for (const auto& t : templ) {
    std::string out;
    size_t i = 0;
    while (i < t.size()) {
      bool replaced = false;
      if (t[i] == '{') {
        for (const auto& [key, value] : subs) {
          if (t.compare(i, key.size(), key) == 0) {
            out += value;
            i += key.size();
            replaced = true;
            break;
          }
        }
      }
      if (!replaced) out += t[i++];
    }
    argv->push_back(std::move(out));
  }
  return Status::Ok();
}

std::string TailOfFile(const std::string& path, int max_lines) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return "";
  }
  const off_t kMax = 64 * 1024;
  off_t from = st.st_size > kMax ? st.st_size - kMax : 0;
  std::string buf(static_cast<size_t>(st.st_size - from), '\0');
  ssize_t got = pread(fd, buf.data(), buf.size(), from);
  close(fd);
  if (got <= 0) return "";
  buf.resize(static_cast<size_t>(got));
  while (!buf.empty() && (buf.back() == '\n' || buf.back() == '\r')) buf.pop_back();
  // Walk back over max_lines line breaks; what follows the last one passed
  // is the tail.
  size_t begin = buf.size();
  int lines = 0;
  while (begin > 0 && lines < max_lines) {
    size_t nl = buf.rfind('\n', begin - 1);
    ++lines;
    if (nl == std::string::npos) {
      begin = 0;
      break;
    }
    begin = nl;
    if (lines < max_lines) continue;
    ++begin;  // skip the break itself
    break;
  }
  return buf.substr(begin == buf.size() ? 0 : begin);
}

ManagedEngine::ManagedEngine(ManagedEngineOptions opts) : opts_(std::move(opts)) {
  if (!opts_.clock) opts_.clock = RealClock::Default();
  if (!opts_.runner) opts_.runner = RealProcessRunner::Default();
  if (!opts_.transports) {
    const std::string origin = opts_.origin, token = opts_.bearer_token;
    opts_.transports = [origin, token] { return MakeHttpTransport(origin, token); };
  }
}

ManagedEngine::~ManagedEngine() { (void)Stop(); }

Status ManagedEngine::Start(int64_t context, int slots, CancelToken* cancel) {
  if (child_) return Status::Internal("engine: Start() while pid " + std::to_string(pid()) + " runs");
  if (context <= 0 || slots <= 0)
    return Status::InvalidInput("engine: context and slots must be positive (context " +
                                std::to_string(context) + ", slots " + std::to_string(slots) + ")");
  int port = 0;
  EVALRUN_RETURN_IF_ERROR(OriginPort(opts_.origin, &port));
  std::vector<std::string> argv;
  EVALRUN_RETURN_IF_ERROR(ExpandCommand(opts_.command, port, context, slots, &argv));
  std::string exe;
  EVALRUN_RETURN_IF_ERROR(ResolveExecutable(argv[0], &exe));
  last_argv_ = argv;

  // Something answering already would pass the health check for our engine.
  {
    auto t = opts_.transports();
    HttpResponse r = t->Get("/health", 2);
    if (r.transport_ok())
      return Status::Unavailable(
          "engine: something already answers at " + opts_.origin + " (GET /health: HTTP " +
          std::to_string(r.status) + ") before evalrun started the engine; stop it, or give "
          "server.base_url a free port (server.command is started on it)");
  }
  if (opts_.log_path.empty()) return Status::InvalidInput("engine: no log file given");
  EVALRUN_RETURN_IF_ERROR(Launch(exe, argv, context, slots));

  Status st = WaitReady(cancel);
  if (!st.ok()) {
    Status stop = Stop();
    if (!stop.ok()) return Status::Internal(st.message() + "; and stopping it: " + stop.message());
    return st;
  }
  AppendToLog(opts_.log_path, LogLine(opts_.clock, "engine pid " + std::to_string(pid()) + " ready at " + opts_.origin));
  return Status::Ok();
}

Status ManagedEngine::Launch(const std::string& exe, std::vector<std::string> argv, int64_t context, int slots) {
  const std::string header = LogLine(opts_.clock, "starting engine (context " + std::to_string(context) +
                                     ", slots " + std::to_string(slots) + "): " + Quoted(argv));
  AppendToLog(opts_.log_path, header);
  ProcessSpec spec;
  spec.program = exe;  // argv[0] stays as the card wrote it
  spec.argv = std::move(argv);
  spec.stdout_to = OutputTo::kAppendToFile;  // stdin from /dev/null
  spec.stderr_to = OutputTo::kAppendToFile;
  spec.output_path = opts_.log_path;
  spec.new_session = true;  // its own session and process group: Stop() signals the group
  spec.parent_death_signal = SIGTERM;
  Status st = opts_.runner->Start(spec, &child_);
  if (!st.ok()) return st.Prefixed("engine");  // NotFound: "engine: <exe>: cannot run it: ..."
  RegisterGroup(child_->pid());
  return Status::Ok();
}

bool ManagedEngine::Reap(bool block, std::string* how) {
  if (!child_) return false;
  ProcessExit exit;
  if (!child_->Reap(block, &exit)) return false;
  *how = exit.Describe();
  return true;
}

Status ManagedEngine::WaitReady(CancelToken* cancel) {
  auto t = opts_.transports();
  const Stopwatch waited(opts_.clock);
  double interval = 0.05;
  std::string last = "no answer yet";
  for (;;) {
    std::string how;
    if (Reap(false, &how)) {
      std::string tail = TailOfFile(opts_.log_path, 12);
      return Status::Unavailable("engine exited while loading (" + how + ", after " +
                                 std::to_string(static_cast<int>(waited.Seconds())) + " s); last lines of " +
                                 opts_.log_path + ":\n" + tail);
    }
    HttpResponse r = t->Get("/health", 5);
    if (r.transport_ok()) {
      if (r.status == 200 || r.status == 404) return Status::Ok();
      if (r.status == 401 || r.status == 403)
        return Status::Unavailable(opts_.origin + "/health: HTTP " + std::to_string(r.status) +
                                   " (check server.api_key_env)");
      last = "HTTP " + std::to_string(r.status);
    } else {
      last = r.error;
    }
    if (waited.Seconds() > opts_.ready_timeout_s) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", opts_.ready_timeout_s);
      return Status::Timeout("engine at " + opts_.origin + " not ready after " + secs +
                             " s (server.ready_timeout_s); last: " + last + "; log: " + opts_.log_path);
    }
    if (!opts_.clock->SleepFor(interval, cancel))
      return Status::Cancelled("interrupted while the engine was loading");
    interval = std::min(0.5, interval * 1.5);
  }
}

Status ManagedEngine::Stop() {
  if (!child_) return Status::Ok();
  const pid_t pgid = child_->pid();
  std::string how;
  Reap(false, &how);
  bool gone = child_->reaped() && !child_->GroupAlive();
  std::string way = "exited on its own";
  if (!gone) {
    way = "SIGTERM";
    gone = SignalAndWait(SIGTERM, std::max(0.0, opts_.stop_grace_s), &how);
  }
  if (!gone) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opts_.stop_grace_s);
    way = std::string("SIGKILL after ") + secs + " s (server.stop_grace_s)";
    gone = SignalAndWait(SIGKILL, 10, &how);
  }
  AppendToLog(opts_.log_path, LogLine(opts_.clock, "engine pid " + std::to_string(pgid) + " stopped (" + way + "; " +
                                      (how.empty() ? std::string("not reaped") : how) + ")"));
  const bool leader_reaped = child_->reaped();
  UnregisterGroup(pgid);
  child_.reset();
  if (!gone) {
    // Processes stuck in the kernel (uninterruptible sleep in a driver),
    // or zombies nobody reaps. Nothing more can be done from here.
    return Status::Internal("engine process group " + std::to_string(pgid) +
                            " still has processes 10 s after SIGKILL (" +
                            (leader_reaped ? "leader reaped" : "leader not reaped") + ")");
  }
  return Status::Ok();
}

bool ManagedEngine::SignalAndWait(int sig, double wait_s, std::string* how) {
  child_->SignalGroup(sig);
  const Stopwatch waited(opts_.clock);
  for (;;) {
    Reap(false, how);
    if (child_->reaped() && !child_->GroupAlive()) return true;
    if (waited.Seconds() >= wait_s) return false;
    opts_.clock->SleepFor(0.02, nullptr);
  }
}

std::unique_ptr<Engine> MakeEngine(const ServerConfig& server, const std::string& log_path,
                                   const std::string& bearer_token, Clock* clock) {
  if (server.command.empty()) return std::make_unique<ExternalEngine>(server.Origin());
  ManagedEngineOptions o;
  o.command = server.command;
  o.origin = server.Origin();
  o.log_path = log_path;
  o.ready_timeout_s = server.ready_timeout_s;
  o.stop_grace_s = server.stop_grace_s;
  o.bearer_token = bearer_token;
  o.clock = clock;
  return std::make_unique<ManagedEngine>(std::move(o));
}

void TerminateManagedEngines(int sig) {
  for (auto& slot : g_engine_groups) {
    pid_t pgid = slot.load();
    if (pgid > 0) kill(-pgid, sig);
  }
}

}  // namespace evalrun
