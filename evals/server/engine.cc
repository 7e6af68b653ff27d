#include "evals/server/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "evals/base/clock.h"

extern char** environ;

namespace evalrun {
namespace {

// close_range(2)'s flag (Linux 5.11); older kernels fail the call and the
// loop over the descriptors does the same.
constexpr unsigned kCloseRangeCloexec = 1U << 2;

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

// True while any process of the group exists (zombies included).
bool GroupAlive(pid_t pgid) { return kill(-pgid, 0) == 0 || errno == EPERM; }

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
  const char* env = std::getenv("PATH");
  std::string dirs = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) {
      *path = candidate;
      return Status::Ok();
    }
    start = end + 1;
  }
  return Status::NotFound("server.command[0]: " + name + " not found on PATH (" + dirs + ")");
}

std::string DescribeWait(int wstatus) {
  if (WIFEXITED(wstatus)) return "exit status " + std::to_string(WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "wait status " + std::to_string(wstatus);
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
  if (!opts_.transports) {
    const std::string origin = opts_.origin, token = opts_.bearer_token;
    opts_.transports = [origin, token] { return MakeHttpTransport(origin, token); };
  }
}

ManagedEngine::~ManagedEngine() { (void)Stop(); }

Status ManagedEngine::Start(int64_t context, int slots, CancelToken* cancel) {
  if (pid_ > 0) return Status::Internal("engine: Start() while pid " + std::to_string(pid_) + " runs");
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
  int log_fd = open(opts_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IoError(opts_.log_path + ": cannot open for appending: " + strerror(errno));
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int err_pipe[2];
  if (null_fd < 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return Status::IoError(std::string("engine: /dev/null or pipe: ") + strerror(e));
  }
  const std::string header = LogLine(opts_.clock, "starting engine (context " + std::to_string(context) +
                                     ", slots " + std::to_string(slots) + "): " + Quoted(argv));
  (void)!write(log_fd, header.data(), header.size());

  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls (the parent has other threads).
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t parent = getpid();
  struct rlimit nofile;
  const int max_fd = getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                         ? static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1 << 20))
                         : 65536;

  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(log_fd);
    close(null_fd);
    close(err_pipe[0]);
    close(err_pipe[1]);
    return Status::Unavailable(std::string("engine: fork: ") + strerror(e));
  }
  if (pid == 0) {
    setsid();  // its own session and process group: Stop() signals the group
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    // evalrun blocks SIGINT/SIGTERM in its threads (cli.cc's watcher); the
    // mask and ignored dispositions survive exec, so reset them.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2})
      sigaction(sig, &dfl, nullptr);
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    // None of evalrun's other descriptors (sockets, pipes of other
    // children) reach the engine: all above 2 close on exec (the error
    // pipe included, which is how the parent learns the exec worked).
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) != 0)
#endif
      for (int fd = 3; fd < max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    execve(exe.c_str(), cargv.data(), environ);
    int e = errno;
    (void)!write(err_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(err_pipe[1]);
  close(log_fd);
  close(null_fd);
  pid_ = pid;
  reaped_ = false;
  exit_how_.clear();
  RegisterGroup(pid);
  // The pipe closes on a successful exec (setsid has run by then) or
  // carries the exec error.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(err_pipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    std::string how;
    Reap(true, &how);
    (void)Stop();
    return Status::NotFound("engine: cannot execute " + exe + ": " + strerror(exec_errno));
  }

  Status st = WaitReady(cancel);
  if (!st.ok()) {
    Status stop = Stop();
    if (!stop.ok()) return Status::Internal(st.message() + "; and stopping it: " + stop.message());
    return st;
  }
  AppendToLog(opts_.log_path, LogLine(opts_.clock, "engine pid " + std::to_string(pid_) + " ready at " + opts_.origin));
  return Status::Ok();
}

bool ManagedEngine::Reap(bool block, std::string* how) {
  if (pid_ <= 0) return false;
  if (reaped_) {
    *how = exit_how_;
    return true;
  }
  int wstatus = 0;
  pid_t w;
  do {
    w = waitpid(pid_, &wstatus, block ? 0 : WNOHANG);
  } while (w < 0 && errno == EINTR);
  if (w == pid_) {
    reaped_ = true;
    exit_how_ = DescribeWait(wstatus);
  } else if (w < 0 && errno == ECHILD) {
    reaped_ = true;  // reaped elsewhere (SIGCHLD ignored): the status is lost
    exit_how_ = "exited (status unknown)";
  }
  if (reaped_) *how = exit_how_;
  return reaped_;
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
  if (pid_ <= 0) return Status::Ok();
  const pid_t pgid = pid_;
  std::string how;
  Reap(false, &how);
  bool gone = reaped_ && !GroupAlive(pgid);
  std::string way = "exited on its own";
  if (!gone) {
    way = "SIGTERM";
    if (kill(-pgid, SIGTERM) != 0 && !reaped_) kill(pgid, SIGTERM);
    const Stopwatch waited(opts_.clock);
    const double grace = std::max(0.0, opts_.stop_grace_s);
    while (!gone) {
      Reap(false, &how);
      gone = reaped_ && !GroupAlive(pgid);
      if (gone || waited.Seconds() >= grace) break;
      opts_.clock->SleepFor(0.02, nullptr);
    }
  }
  if (!gone) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", opts_.stop_grace_s);
    way = std::string("SIGKILL after ") + secs + " s (server.stop_grace_s)";
    if (kill(-pgid, SIGKILL) != 0 && !reaped_) kill(pgid, SIGKILL);
    const Stopwatch waited(opts_.clock);
    while (!gone && waited.Seconds() < 10) {
      Reap(false, &how);
      gone = reaped_ && !GroupAlive(pgid);
      if (!gone) opts_.clock->SleepFor(0.02, nullptr);
    }
  }
  AppendToLog(opts_.log_path, LogLine(opts_.clock, "engine pid " + std::to_string(pgid) + " stopped (" + way + "; " +
                                      (how.empty() ? std::string("not reaped") : how) + ")"));
  const bool leader_reaped = reaped_;
  UnregisterGroup(pgid);
  pid_ = -1;
  reaped_ = false;
  if (!gone) {
    // Processes stuck in the kernel (uninterruptible sleep in a driver),
    // or zombies nobody reaps. Nothing more can be done from here.
    return Status::Internal("engine process group " + std::to_string(pgid) +
                            " still has processes 10 s after SIGKILL (" +
                            (leader_reaped ? "leader reaped" : "leader not reaped") + ")");
  }
  return Status::Ok();
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
