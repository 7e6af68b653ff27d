#include "evals/proc/process_runner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "evals/proc/sigpipe_block.h"
#include "evals/proc/spawn_child.h"

namespace evalrun {
namespace {

// After the group is killed, how long the outputs are still read: only a
// process that left the group (setsid) can hold the pipes open that long.
constexpr double kDrainAfterKillS = 0.25;
// Without a pidfd, how often the leader's exit is looked for.
constexpr int kPollSliceMs = 10;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

ProcessExit FromWaitStatus(int wstatus) {
  ProcessExit e;
  if (WIFEXITED(wstatus)) {
    e.exited = true;
    e.exit_code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    e.signal = WTERMSIG(wstatus);
  }
  return e;
}

struct Stream {
  int fd = -1;
  std::string* sink = nullptr;
  size_t cap = 0;
  bool* truncated = nullptr;
};

// Run()'s loop: feeds stdin, reads both outputs, watches the deadline and
// the leader, kills the group, reaps.
class RunLoop {
 public:
  RunLoop(const ProcessSpec& spec, const SpawnedChild& child, double start, ProcessResult* result)
      : spec_(spec), pid_(child.pid), in_fd_(child.stdin_fd), start_(start), result_(result) {
    streams_[0] = {child.stdout_fd, &result->stdout_text, spec.stdout_cap, &result->stdout_truncated};
    streams_[1] = {child.stderr_fd, &result->stderr_text, spec.stderr_cap, &result->stderr_truncated};
    deadline_ = spec.limits.wall_s > 0 ? start + spec.limits.wall_s : std::numeric_limits<double>::infinity();
#ifdef SYS_pidfd_open
    // (glibc 2.36's <sys/pidfd.h> lacks extern "C": the system call itself.)
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
#endif
    if (in_fd_ >= 0 && spec.stdin_text->empty()) CloseFd(&in_fd_);
  }
  ~RunLoop() {
    for (int* fd : {&in_fd_, &streams_[0].fd, &streams_[1].fd, &pidfd_}) CloseFd(fd);
  }

  void Run() {
    for (;;) {
      if (!leader_exited_ && LeaderExited()) {
        leader_exited_ = true;
        KillGroup();  // the end: nothing of the group outlives its leader
      }
      const bool outputs_open = streams_[0].fd >= 0 || streams_[1].fd >= 0;
      if (leader_exited_ && !outputs_open) break;
      const double now = Now();
      if (!killed_ && now >= deadline_) {
        result_->timed_out = true;
        KillGroup();
      }
      if (killed_ && now >= drain_until_) break;
      PollOnce(now);
    }
    Reap();
  }

 private:
  static void CloseFd(int* fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }

  bool LeaderExited() {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
  }

  void KillGroup() {
    if (!killed_) drain_until_ = Now() + kDrainAfterKillS;
    killed_ = true;
    if (kill(-pid_, SIGKILL) != 0) kill(pid_, SIGKILL);
    CloseFd(&in_fd_);
  }

  int TimeoutMs(double now) const {
    double until = killed_ ? drain_until_ : deadline_;
    double left_ms = std::max(0.0, (until - now) * 1000) + 1;
    if (pidfd_ < 0 || leader_exited_) left_ms = std::min<double>(left_ms, kPollSliceMs);
    return static_cast<int>(std::min(left_ms, 1e9));
  }

  void PollOnce(double now) {
    struct pollfd fds[4];
    int n = 0;
    if (in_fd_ >= 0) fds[n++] = {in_fd_, POLLOUT, 0};
    for (auto& s : streams_)
      if (s.fd >= 0) fds[n++] = {s.fd, POLLIN, 0};
    if (pidfd_ >= 0 && !leader_exited_) fds[n++] = {pidfd_, POLLIN, 0};
    if (poll(fds, static_cast<nfds_t>(n), TimeoutMs(now)) <= 0) return;
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_fd_) WriteStdin();
      for (auto& s : streams_)
        if (fds[i].fd == s.fd) ReadInto(&s);
    }
  }

  void WriteStdin() {
    const std::string& text = *spec_.stdin_text;
    ssize_t put = write(in_fd_, text.data() + in_off_, std::min<size_t>(text.size() - in_off_, 1 << 16));
    if (put < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (put <= 0) return CloseFd(&in_fd_);  // EPIPE: the child stopped reading
    in_off_ += static_cast<size_t>(put);
    if (in_off_ >= text.size()) CloseFd(&in_fd_);
  }

  void ReadInto(Stream* s) {
    char buf[1 << 16];
    ssize_t got = read(s->fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) return CloseFd(&s->fd);
    size_t room = s->cap - std::min(s->cap, s->sink->size());
    s->sink->append(buf, std::min(room, static_cast<size_t>(got)));
    if (static_cast<size_t>(got) > room) {
      *s->truncated = true;
      if (spec_.kill_on_output_cap && s == &streams_[0] && !killed_) {
        result_->output_capped = true;
        KillGroup();
      }
    }
  }

  void Reap() {
    int wstatus = 0;
    struct rusage usage;
    std::memset(&usage, 0, sizeof usage);
    pid_t w;
    do {
      w = wait4(pid_, &wstatus, 0, &usage);
    } while (w < 0 && errno == EINTR);
    if (w == pid_) {
      result_->exit = FromWaitStatus(wstatus);
    } else {
      result_->exit.known = false;  // reaped elsewhere (SIGCHLD ignored)
    }
    kill(-pid_, SIGKILL);  // what the leader left behind in its group
    result_->wall_s = Now() - start_;
    result_->cpu_s = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
                     (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    const int sig = result_->exit.signal;
    const double cpu_limit = std::ceil(spec_.limits.cpu_s);
    result_->cpu_limited = spec_.limits.cpu_s > 0 &&
                           (sig == SIGXCPU || (sig == SIGKILL && !result_->timed_out && !result_->output_capped &&
                                               result_->cpu_s >= cpu_limit - 0.05));
  }

  const ProcessSpec& spec_;
  const pid_t pid_;
  int in_fd_;
  size_t in_off_ = 0;
  Stream streams_[2];
  int pidfd_ = -1;
  double start_, deadline_, drain_until_ = 0;
  bool leader_exited_ = false, killed_ = false;
  ProcessResult* result_;
};

}  // namespace

std::string ProcessExit::Describe() const {
  if (!known) return "exited (status unknown)";
  if (exited) return "exit status " + std::to_string(exit_code);
  const char* name = sigabbrev_np(signal);
  return "killed by signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
}

std::string ProcessResult::Describe(double wall_limit_s) const {
  if (timed_out) return "timed out after " + Seconds(wall_limit_s) + " s (killed)";
  if (output_capped) return "output over its cap (killed)";
  if (cpu_limited) return "CPU time limit (" + exit.Describe() + ")";
  return exit.Describe();
}

ProcessHandle::~ProcessHandle() {
  if (pid_ <= 0) return;
  if (!reaped_) {
    SignalGroup(SIGKILL);
    ProcessExit e;
    for (int i = 0; i < 100 && !Reap(false, &e); ++i) {
      struct timespec pause = {0, 10 * 1000 * 1000};
      nanosleep(&pause, nullptr);
    }
  } else if (GroupAlive()) {
    kill(-pid_, SIGKILL);
  }
}

bool ProcessHandle::Reap(bool block, ProcessExit* exit) {
  if (!reaped_) {
    int wstatus = 0;
    pid_t w;
    do {
      w = waitpid(pid_, &wstatus, block ? 0 : WNOHANG);
    } while (w < 0 && errno == EINTR);
    if (w == pid_) {
      reaped_ = true;
      exit_ = FromWaitStatus(wstatus);
    } else if (w < 0 && errno == ECHILD) {
      reaped_ = true;  // reaped elsewhere (SIGCHLD ignored): the status is lost
      exit_.known = false;
    }
  }
  if (reaped_) *exit = exit_;
  return reaped_;
}

bool ProcessHandle::GroupAlive() const { return kill(-pid_, 0) == 0 || errno == EPERM; }

bool ProcessHandle::SignalGroup(int sig) {
  if (kill(-pid_, sig) == 0) return true;
  return !reaped_ && kill(pid_, sig) == 0;
}

Status RealProcessRunner::Run(const ProcessSpec& spec, ProcessResult* result) {
  *result = ProcessResult();
  const double start = Now();
  SpawnedChild child;
  EVALRUN_RETURN_IF_ERROR(SpawnChild(spec, &child));
  ScopedSigpipeBlock no_sigpipe;
  RunLoop loop(spec, child, start, result);
  loop.Run();
  return Status::Ok();
}

Status RealProcessRunner::Start(const ProcessSpec& spec, std::unique_ptr<ProcessHandle>* handle) {
  if (spec.stdin_text || spec.stdout_to == OutputTo::kCapture || spec.stderr_to == OutputTo::kCapture)
    return Status::InvalidInput("process: Start() takes no stdin text and captures no output (use a file)");
  SpawnedChild child;
  EVALRUN_RETURN_IF_ERROR(SpawnChild(spec, &child));
  *handle = std::make_unique<ProcessHandle>(child.pid);
  return Status::Ok();
}

Status RealProcessRunner::StartPiped(const ProcessSpec& spec, std::unique_ptr<ProcessHandle>* handle,
                                     ProcessPipes* pipes) {
  if (!spec.stdin_text || spec.stdout_to != OutputTo::kCapture)
    return Status::InvalidInput("process: StartPiped() needs stdin and stdout as pipes");
  SpawnedChild child;
  EVALRUN_RETURN_IF_ERROR(SpawnChild(spec, &child));
  *handle = std::make_unique<ProcessHandle>(child.pid);
  *pipes = {child.stdin_fd, child.stdout_fd, child.stderr_fd};
  return Status::Ok();
}

RealProcessRunner* RealProcessRunner::Default() {
  static RealProcessRunner* runner = new RealProcessRunner();
  return runner;
}

}  // namespace evalrun
