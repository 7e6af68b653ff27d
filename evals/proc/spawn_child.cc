#include "evals/proc/spawn_child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace evalrun {
namespace {

// close_range(2)'s flag (Linux 5.11); on older kernels the loop does it.
constexpr unsigned kCloseRangeCloexec = 1U << 2;
// The child's descriptors are moved at or above this before fork, so that
// dup2 onto 0..3 never meets one of them.
constexpr int kHighFd = 10;

constexpr int kMaxPass = 4;

enum Step : int { kStepSession = 1, kStepStdio, kStepLimits, kStepUser, kStepCwd, kStepHook, kStepExec, kStepPreUserHook };

const char* StepName(int step) {
  switch (step) {
    case kStepSession: return "setsid/setpgid";
    case kStepStdio: return "dup2";
    case kStepLimits: return "setrlimit";
    case kStepUser: return "setresuid/setresgid";
    case kStepCwd: return "chdir";
    case kStepExec: return "execve";
    default: return "child setup";
  }
}

struct Failure {
  int step = 0;
  int err = 0;
};

struct Limit {
  int resource;
  rlimit value;
};

// What the child needs, made before fork.
struct ChildPlan {
  std::string exe;
  std::vector<std::string> env_storage;
  std::vector<char*> argv, envp;
  int in_fd = -1, out_fd = -1, err_fd = -1, report_fd = -1;
  int pass[kMaxPass] = {-1, -1, -1, -1};
  int pass_count = 0;
  Limit limits[6];
  int limit_count = 0;
  int max_fd = 65536;
  pid_t parent = 0;
  const ProcessSpec* spec = nullptr;
};

// Both ends of the parent's and the child's descriptors, closed on exit
// unless released.
struct Fds {
  int parent[3] = {-1, -1, -1};  // stdin write, stdout read, stderr read
  int child[3] = {-1, -1, -1};
  int file = -1, null_fd = -1, report[2] = {-1, -1}, pass[kMaxPass] = {-1, -1, -1, -1};
  ~Fds() {
    for (int fd : {parent[0], parent[1], parent[2], child[0], child[1], child[2], file, null_fd, report[0],
                   report[1], pass[0], pass[1], pass[2], pass[3]})
      if (fd >= 0) close(fd);
  }
};

Status Errno(const std::string& what) { return Status::IoError(what + ": " + strerror(errno)); }

// Moves *fd to a close-on-exec descriptor >= kHighFd.
Status MoveHigh(int* fd) {
  if (*fd < 0) return Status::Ok();
  int high = fcntl(*fd, F_DUPFD_CLOEXEC, kHighFd);
  if (high < 0) return Errno("fcntl(F_DUPFD_CLOEXEC)");
  close(*fd);
  *fd = high;
  return Status::Ok();
}

Status OpenPipe(int* parent_end, int* child_end, bool child_reads) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return Errno("pipe");
  *parent_end = child_reads ? p[1] : p[0];
  *child_end = child_reads ? p[0] : p[1];
  if (child_reads) fcntl(*parent_end, F_SETFL, O_NONBLOCK);
  return MoveHigh(child_end);
}

Status OpenOutput(const ProcessSpec& spec, OutputTo to, Fds* fds, int* parent_end, int* child_end) {
  if (to == OutputTo::kCapture) return OpenPipe(parent_end, child_end, false);
  if (to == OutputTo::kDiscard) {
    *child_end = fcntl(fds->null_fd, F_DUPFD_CLOEXEC, kHighFd);
    return *child_end < 0 ? Errno("fcntl(/dev/null)") : Status::Ok();
  }
  if (fds->file < 0) {
    if (spec.output_path.empty()) return Status::InvalidInput("process: output to a file, but no output_path");
    fds->file = open(spec.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fds->file < 0) return Errno(spec.output_path + ": cannot open for appending");
  }
  *child_end = fcntl(fds->file, F_DUPFD_CLOEXEC, kHighFd);
  return *child_end < 0 ? Errno("fcntl(" + spec.output_path + ")") : Status::Ok();
}

Status OpenDescriptors(const ProcessSpec& spec, Fds* fds) {
  fds->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fds->null_fd < 0) return Errno("/dev/null");
  if (spec.stdin_text) {
    EVALRUN_RETURN_IF_ERROR(OpenPipe(&fds->parent[0], &fds->child[0], true));
  } else {
    fds->child[0] = fcntl(fds->null_fd, F_DUPFD_CLOEXEC, kHighFd);
    if (fds->child[0] < 0) return Errno("fcntl(/dev/null)");
  }
  EVALRUN_RETURN_IF_ERROR(OpenOutput(spec, spec.stdout_to, fds, &fds->parent[1], &fds->child[1]));
  EVALRUN_RETURN_IF_ERROR(OpenOutput(spec, spec.stderr_to, fds, &fds->parent[2], &fds->child[2]));
  if (spec.pass_fds.size() > static_cast<size_t>(kMaxPass))
    return Status::InvalidInput("process: at most " + std::to_string(kMaxPass) + " pass_fds");
  for (size_t i = 0; i < spec.pass_fds.size(); ++i) {
    fds->pass[i] = fcntl(spec.pass_fds[i], F_DUPFD_CLOEXEC, kHighFd);
    if (fds->pass[i] < 0) return Errno("fcntl(pass_fds)");
  }
  if (pipe2(fds->report, O_CLOEXEC) != 0) return Errno("pipe");
  return MoveHigh(&fds->report[1]);
}

void AddLimit(ChildPlan* plan, int resource, rlim_t value) {
  plan->limits[plan->limit_count++] = Limit{resource, rlimit{value, value}};
}

void PlanLimits(const ProcessLimits& l, ChildPlan* plan) {
  AddLimit(plan, RLIMIT_CORE, 0);
  if (l.cpu_s > 0) {
    rlim_t soft = static_cast<rlim_t>(std::ceil(l.cpu_s));
    plan->limits[plan->limit_count++] = Limit{RLIMIT_CPU, rlimit{soft, soft + 1}};
  }
  if (l.address_space_bytes > 0) AddLimit(plan, RLIMIT_AS, l.address_space_bytes);
  if (l.processes > 0) AddLimit(plan, RLIMIT_NPROC, static_cast<rlim_t>(l.processes));
  if (l.open_files > 0) AddLimit(plan, RLIMIT_NOFILE, static_cast<rlim_t>(l.open_files));
  if (l.file_bytes > 0) AddLimit(plan, RLIMIT_FSIZE, l.file_bytes);
}

void PlanArgs(const ProcessSpec& spec, ChildPlan* plan) {
  for (const auto& a : spec.argv) plan->argv.push_back(const_cast<char*>(a.c_str()));
  plan->argv.push_back(nullptr);
  if (spec.env) {
    plan->env_storage = *spec.env;
    for (auto& e : plan->env_storage) plan->envp.push_back(e.data());
    plan->envp.push_back(nullptr);
  }
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
    plan->max_fd = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, 1 << 20));
  plan->parent = getpid();
}

[[noreturn]] void Fail(const ChildPlan& p, int step) {
  Failure f{step, errno};
  (void)!write(p.report_fd, &f, sizeof f);
  _exit(127);
}

// Closes every descriptor from `first` on except `keep` (async-signal-safe).
void CloseAllBut(int first, int keep, int max_fd) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(keep - 1), 0U) == 0 &&
      syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U) == 0)
    return;
#endif
  for (int fd = first; fd < max_fd; ++fd)
    if (fd != keep) close(fd);
}

// The child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void ChildMain(const ChildPlan& p) {
  const ProcessSpec& spec = *p.spec;
  if ((spec.new_session ? setsid() : setpgid(0, 0)) < 0) Fail(p, kStepSession);
  // evalrun blocks SIGINT/SIGTERM in its threads (cli.cc's watcher); the
  // mask and ignored dispositions survive exec, so reset them.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  if (dup2(p.in_fd, 0) < 0 || dup2(p.out_fd, 1) < 0 || dup2(p.err_fd, 2) < 0) Fail(p, kStepStdio);
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) != 0)
#endif
    for (int fd = 3; fd < p.max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  for (int i = 0; i < p.pass_count; ++i)
    if (dup2(p.pass[i], 3 + i) < 0) Fail(p, kStepStdio);
  // Every other descriptor closed now, not only at exec: a hook that opens
  // files (the sandbox's namespaces) must find numbers under the new
  // RLIMIT_NOFILE free, however many evalrun had open. The report pipe stays.
  CloseAllBut(3 + p.pass_count, p.report_fd, p.max_fd);
  if (spec.pre_user_hook) {
    int err = spec.pre_user_hook(spec.pre_user_hook_arg);
    if (err != 0) {
      errno = err;
      Fail(p, kStepPreUserHook);
    }
  }
  for (int i = 0; i < p.limit_count; ++i)
    if (setrlimit(p.limits[i].resource, &p.limits[i].value) != 0) Fail(p, kStepLimits);
  if (spec.run_as_gid >= 0 || spec.run_as_uid >= 0) {
    // Raw system calls: glibc's wrappers would signal the parent's other
    // threads (gone in the child) to change their ids too.
    if (syscall(SYS_setgroups, 0, nullptr) != 0) Fail(p, kStepUser);
    if (spec.run_as_gid >= 0 && syscall(SYS_setresgid, spec.run_as_gid, spec.run_as_gid, spec.run_as_gid) != 0)
      Fail(p, kStepUser);
    if (spec.run_as_uid >= 0 && syscall(SYS_setresuid, spec.run_as_uid, spec.run_as_uid, spec.run_as_uid) != 0)
      Fail(p, kStepUser);
  }
  // After the uid change: the kernel clears the parent-death signal when
  // the effective uid changes.
  if (spec.parent_death_signal != 0) {
    prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
    if (getppid() != p.parent) _exit(127);  // the parent died before prctl
  }
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) Fail(p, kStepCwd);
  if (spec.child_hook) {
    int err = spec.child_hook(spec.child_hook_arg);
    if (err != 0) {
      errno = err;
      Fail(p, kStepHook);
    }
  }
  execve(p.exe.c_str(), p.argv.data(), spec.env ? p.envp.data() : environ);
  Fail(p, kStepExec);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Reads the child's report: Ok once the exec closed the pipe.
Status AwaitExec(const ProcessSpec& spec, const ChildPlan& plan, int report_fd, pid_t pid) {
  Failure f;
  ssize_t n;
  do {
    n = read(report_fd, &f, sizeof f);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof f)) return Status::Ok();
  int wstatus;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  const std::string& prog = spec.program.empty() ? spec.argv[0] : spec.program;
  if (f.step == kStepExec && (f.err == ENOENT || f.err == EACCES || f.err == ENOTDIR || f.err == ENOEXEC))
    return Status::NotFound(prog + ": cannot run it: " + strerror(f.err));
  if (f.step == kStepHook)
    return Status::Unavailable(prog + ": cannot start it: " + spec.hook_name + ": " + strerror(f.err));
  if (f.step == kStepPreUserHook)
    return Status::Unavailable(prog + ": cannot start it: " + spec.pre_user_hook_name + ": " + strerror(f.err));
  return Status::Unavailable(prog + ": cannot start it: " + StepName(f.step) + ": " + strerror(f.err));
}

}  // namespace

Status SpawnChild(const ProcessSpec& spec, SpawnedChild* child) {
  *child = SpawnedChild();
  if (spec.argv.empty() || spec.argv[0].empty()) return Status::InvalidInput("process: empty argv");
  ChildPlan plan;
  plan.spec = &spec;
  EVALRUN_RETURN_IF_ERROR(FindProgram(spec.program.empty() ? spec.argv[0] : spec.program, &plan.exe));
  Fds fds;
  EVALRUN_RETURN_IF_ERROR(OpenDescriptors(spec, &fds).Prefixed(spec.argv[0]));
  PlanArgs(spec, &plan);
  PlanLimits(spec.limits, &plan);
  plan.in_fd = fds.child[0];
  plan.out_fd = fds.child[1];
  plan.err_fd = fds.child[2];
  plan.pass_count = static_cast<int>(spec.pass_fds.size());
  for (int i = 0; i < plan.pass_count; ++i) plan.pass[i] = fds.pass[i];
  plan.report_fd = fds.report[1];

  pid_t pid = fork();
  if (pid < 0) return Errno(spec.argv[0] + ": fork");
  if (pid == 0) ChildMain(plan);
  for (int* fd : {&fds.child[0], &fds.child[1], &fds.child[2], &fds.report[1], &fds.file, &fds.pass[0], &fds.pass[1],
                  &fds.pass[2], &fds.pass[3]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  EVALRUN_RETURN_IF_ERROR(AwaitExec(spec, plan, fds.report[0], pid));
  child->pid = pid;
  child->stdin_fd = fds.parent[0];
  child->stdout_fd = fds.parent[1];
  child->stderr_fd = fds.parent[2];
  fds.parent[0] = fds.parent[1] = fds.parent[2] = -1;  // handed to the caller
  return Status::Ok();
}

Status FindProgram(const std::string& name, std::string* path) {
  if (name.find('/') != std::string::npos) {
    *path = name;  // execve says what is wrong with it
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
  return Status::NotFound(name + ": cannot run it: No such file or directory (looked on PATH)");
}

}  // namespace evalrun
