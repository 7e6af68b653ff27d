#include "evals/sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "evals/sandbox/sandbox_uids.h"
#include "evals/sandbox/seccomp_filter.h"
#include "evals/sandbox/unshare_child.h"

namespace evalrun {
namespace {

constexpr const char* kPath = "PATH=/usr/local/bin:/usr/bin:/bin";
constexpr const char* kProgramInBox = "/tmp/main.py";
// Processes of the sandbox uid besides the program's: bwrap and the PID
// namespace's first process; the "unshare" level's waiting parent.
int ExtraProcesses(SandboxLevel level) {
  return level == SandboxLevel::kNamespaces ? 2 : level == SandboxLevel::kUnshare ? 1 : 0;
}

// Tasks (processes and threads) whose real uid is `uid`, now.
int CountTasksOfUid(uid_t uid) {
  int count = 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + e->d_name + "/status");
    std::string line;
    uid_t real = static_cast<uid_t>(-1);
    int threads = 0;
    while (std::getline(status, line)) {
      if (line.rfind("Uid:", 0) == 0) real = static_cast<uid_t>(std::strtoul(line.c_str() + 4, nullptr, 10));
      if (line.rfind("Threads:", 0) == 0) threads = std::atoi(line.c_str() + 8);
    }
    if (real == uid) count += threads > 0 ? threads : 1;
  }
  closedir(proc);
  return count;
}

// An anonymous file holding `text`, at offset 0; -1 with errno on failure.
int MemoryFile(const char* name, const std::string& text) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < text.size()) {
    ssize_t put = write(fd, text.data() + off, text.size() - off);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    off += static_cast<size_t>(put);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

// Everything readable from a descriptor whose writers are gone (or until it
// would block).
std::string Drain(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return out;
    out.append(buf, static_cast<size_t>(got));
  }
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) : line;
}

// What one run needs while it starts and lives: who it runs as (held
// until it is reaped), the program's memory file, bwrap's status pipe.
struct Launch {
  std::shared_ptr<void> hold;
  int uid = -1, gid = -1;
  int program_fd = -1;
  int status_pipe[2] = {-1, -1};
  UnsharePlan plan;
  ProcessSpec spec;
  ~Launch() {
    for (int fd : {program_fd, status_pipe[0], status_pipe[1]})
      if (fd >= 0) close(fd);
  }
};

class RealSandbox : public CodeSandbox {
 public:
  RealSandbox(const SandboxOptions& options, ProcessRunner* runner, SandboxLevel level, int tasks,
              std::vector<std::string> root_binds)
      : options_(options), runner_(runner), level_(level), extra_processes_(tasks + ExtraProcesses(level)),
        root_binds_(std::move(root_binds)) {}

  std::string level() const override { return SandboxLevelName(level_); }

  Status Run(const std::string& program, const std::string& stdin_text, SandboxResult* result,
             double wall_s = 0) override {
    *result = SandboxResult();
    result->level = level();
    Launch l;
    EVALRUN_RETURN_IF_ERROR(Prepare(program, wall_s, /*status=*/true, &l));
    l.spec.stdin_text = stdin_text;
    Status st = runner_->Run(l.spec, &result->process);
    close(l.status_pipe[1]);
    l.status_pipe[1] = -1;
    std::string status_text = l.status_pipe[0] >= 0 ? Drain(l.status_pipe[0]) : "";
    if (!st.ok()) return st.Prefixed("sandbox (" + level() + ")");
    // bwrap reports the sandboxed child's pid once the sandbox is made; its
    // absence is a failure to start, not the code's doing.
    if (level_ == SandboxLevel::kNamespaces && status_text.find("\"child-pid\"") == std::string::npos &&
        !result->process.timed_out)
      return Status::Unavailable("sandbox did not start: " + options_.bwrap + " " +
                                 result->process.exit.Describe() + ": " + FirstLine(result->process.stderr_text));
    return Status::Ok();
  }

  Status Start(const std::string& program, double wall_s, std::unique_ptr<PipedProcess>* process,
               std::shared_ptr<void>* hold) override {
    Launch l;
    EVALRUN_RETURN_IF_ERROR(Prepare(program, wall_s, /*status=*/false, &l));
    l.spec.stdin_text = "";
    l.spec.stderr_to = OutputTo::kCapture;
    EVALRUN_RETURN_IF_ERROR(StartConversation(runner_, l.spec, options_.limits.error_bytes, process)
                                .Prefixed("sandbox (" + level() + ")"));
    *hold = l.hold;
    return Status::Ok();
  }

 private:
  // Who the run is: a uid of its own as root; else evalrun's, one run at a
  // time where no user namespace separates them (sandbox_uids.h).
  Status Lease(Launch* l) const {
    if (geteuid() == 0) {
      std::unique_ptr<SandboxUidLease> lease;
      EVALRUN_RETURN_IF_ERROR(LeaseSandboxUid(&lease));
      l->uid = l->gid = lease->uid();
      l->hold = std::shared_ptr<SandboxUidLease>(std::move(lease));
      return Status::Ok();
    }
    l->uid = static_cast<int>(getuid());
    l->gid = static_cast<int>(getgid());
    if (level_ == SandboxLevel::kSeccomp || level_ == SandboxLevel::kRlimits) l->hold = SerialSandboxTurn();
    return Status::Ok();
  }

  Status Prepare(const std::string& program, double wall_s, bool status, Launch* l) const {
    EVALRUN_RETURN_IF_ERROR(Lease(l));
    const bool bwrap = level_ == SandboxLevel::kNamespaces;
    l->program_fd = MemoryFile("evalrun-sandbox-program", program);
    if (l->program_fd < 0) return Status::IoError(std::string("sandbox: memfd_create: ") + strerror(errno));
    if (bwrap && status && pipe2(l->status_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      return Status::IoError(std::string("sandbox: pipe: ") + strerror(errno));
    l->plan = MakeUnsharePlan(l->uid, l->gid, options_.limits.file_bytes);
    l->spec = Spec(l->status_pipe[1] >= 0, l);
    if (wall_s > 0) {
      l->spec.limits.wall_s = wall_s;
      l->spec.limits.cpu_s = std::max(l->spec.limits.cpu_s, wall_s);
    }
    l->spec.pass_fds = {l->program_fd};
    if (l->status_pipe[1] >= 0) l->spec.pass_fds.push_back(l->status_pipe[1]);
    return Status::Ok();
  }

  ProcessSpec Spec(bool status, Launch* l) const {
    const SandboxLimits& lim = options_.limits;
    const bool bwrap = level_ == SandboxLevel::kNamespaces;
    ProcessSpec spec;
    spec.argv = bwrap ? BwrapArgv(status) : std::vector<std::string>{options_.interpreter};
    spec.argv.insert(spec.argv.end(), options_.interpreter_args.begin(), options_.interpreter_args.end());
    spec.argv.push_back(bwrap ? kProgramInBox : "/dev/fd/3");
    spec.stdout_cap = lim.output_bytes;
    spec.stderr_cap = lim.error_bytes;
    spec.kill_on_output_cap = true;
    spec.limits.wall_s = lim.wall_s;
    spec.limits.cpu_s = lim.cpu_s;
    spec.limits.address_space_bytes = lim.memory_bytes;
    spec.limits.processes = lim.processes + extra_processes_;
    spec.limits.open_files = lim.open_files;
    spec.limits.file_bytes = lim.file_bytes;
    spec.env = bwrap ? std::vector<std::string>{kPath}
                     : std::vector<std::string>{kPath, "HOME=/tmp", "LANG=C.UTF-8"};
    // The "unshare" level goes to its own /tmp once it is mounted.
    spec.cwd = bwrap || level_ == SandboxLevel::kUnshare ? "" : "/tmp";
    // bwrap has --die-with-parent; the others die with evalrun by this
    // (the grading thread waits for the run, so it outlives the child).
    if (!bwrap) spec.parent_death_signal = SIGKILL;
    if (level_ == SandboxLevel::kUnshare) {
      spec.child_hook = UnshareNamespaces;
      spec.child_hook_arg = &l->plan;
      spec.hook_name = "unshare namespaces";
    } else if (level_ == SandboxLevel::kSeccomp) {
      spec.child_hook = InstallSeccompFilter;
      spec.child_hook_arg = SeccompFilterProgram();
      spec.hook_name = "seccomp filter";
    }
    if (geteuid() == 0) {
      spec.run_as_uid = l->uid;
      spec.run_as_gid = l->gid;
    }
    return spec;
  }

  // A minimal root: the interpreter's own folders read-only and nothing
  // else of the host's (no /home, /root, /run, /var, /etc but the loader's
  // cache, no project or job folder); private /tmp, /dev, /dev/shm, /proc.
  std::vector<std::string> BwrapArgv(bool status) const {
    std::vector<std::string> argv = {options_.bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
                                     "--die-with-parent", "--new-session"};
    argv.insert(argv.end(), root_binds_.begin(), root_binds_.end());
    argv.insert(argv.end(), {"--size", std::to_string(options_.limits.file_bytes)});
    for (const char* arg : {"--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs",
                            "/dev/shm", "--file", "3", kProgramInBox})
      argv.push_back(arg);
    if (status) argv.insert(argv.end(), {"--json-status-fd", "4"});
    for (const char* arg : {"--chdir", "/tmp", "--clearenv", "--setenv", "PATH", kPath + 5, "--setenv", "HOME", "/tmp",
                            "--setenv", "LANG", "C.UTF-8", "--"})
      argv.push_back(arg);
    argv.push_back(options_.interpreter);
    return argv;
  }

  SandboxOptions options_;
  ProcessRunner* runner_;
  SandboxLevel level_;
  int extra_processes_;
  std::vector<std::string> root_binds_;
};

// bwrap's arguments for the minimal root: /usr and the top-level links or
// folders of a merged /usr, the loader's cache and the time zone, and the
// interpreter's own prefix when it lives outside /usr.
std::vector<std::string> RootBinds(const std::string& interpreter) {
  std::vector<std::string> binds = {"--ro-bind", "/usr", "/usr"};
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    struct stat st;
    if (lstat(top, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlink(top, target, sizeof target - 1);
      if (n > 0) binds.insert(binds.end(), {"--symlink", std::string(target, static_cast<size_t>(n)), top});
    } else if (S_ISDIR(st.st_mode)) {
      binds.insert(binds.end(), {"--ro-bind", top, top});
    }
  }
  binds.insert(binds.end(), {"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try",
                             "/etc/localtime", "/etc/localtime"});
  char real[4096];
  if (realpath(interpreter.c_str(), real) && std::string(real).rfind("/usr/", 0) != 0) {
    std::string prefix = real;
    for (int up = 0; up < 2 && prefix.rfind('/') > 0; ++up) prefix.erase(prefix.rfind('/'));
    binds.insert(binds.end(), {"--ro-bind", prefix, prefix});
  }
  return binds;
}

// Runs print(1) at `level`: "" when it works, else why not.
std::string TryLevel(const SandboxOptions& options, ProcessRunner* runner, SandboxLevel level, int tasks) {
  if (level == SandboxLevel::kNamespaces && options.bwrap.empty()) return "no bwrap given";
  if (level == SandboxLevel::kSeccomp && SeccompFilterProgram() == nullptr)
    return "no seccomp filter for this architecture";
  RealSandbox box(options, runner, level, tasks, RootBinds(options.interpreter));
  SandboxResult r;
  Status st = box.Run("print(1)\n", "", &r);
  if (!st.ok()) return st.message();
  if (!r.process.ok() || r.process.stdout_text != "1\n")
    return "print(1) gave " + r.process.Describe(options.limits.wall_s) + ": " +
           FirstLine(r.process.stderr_text + r.process.stdout_text);
  return "";
}

}  // namespace

std::string SandboxProbe::Notes() const {
  std::string notes;
  for (const auto& [level, outcome] : levels) notes += std::string(SandboxLevelName(level)) + ": " + outcome + "\n";
  return notes;
}

Status MakeSandbox(const SandboxOptions& options, ProcessRunner* runner, std::unique_ptr<CodeSandbox>* sandbox,
                   SandboxProbe* probe) {
  std::string exe;
  EVALRUN_RETURN_IF_ERROR(FindProgram(options.interpreter, &exe).Prefixed("sandbox interpreter"));
  if (access(exe.c_str(), X_OK) != 0)
    return Status::NotFound("sandbox interpreter: " + exe + ": cannot run it: " + strerror(errno));
  const int tasks = geteuid() == 0 ? 0 : CountTasksOfUid(getuid());
  SandboxProbe found;
  bool taken = false;
  for (SandboxLevel level : AllSandboxLevels()) {
    std::string outcome;
    if (taken) break;
    if (!SandboxLevelAtLeast(options.max_level, level)) {
      outcome = std::string("above the cap (") + SandboxLevelName(options.max_level) + ")";
    } else if (!SandboxLevelIsolates(level) && !options.unsafe_exec) {
      outcome = "not tried: no isolation, needs unsafe_exec";
    } else {
      outcome = TryLevel(options, runner, level, tasks);
      taken = outcome.empty();
      if (taken) {
        outcome = "ok";
        *sandbox = std::make_unique<RealSandbox>(options, runner, level, tasks, RootBinds(options.interpreter));
      }
    }
    found.levels.emplace_back(level, outcome);
  }
  if (probe) *probe = found;
  if (taken) return Status::Ok();
  std::string why;
  for (const auto& [level, outcome] : found.levels)
    why += std::string(why.empty() ? "" : "; ") + SandboxLevelName(level) + ": " + outcome;
  if (options.unsafe_exec) return Status::Unavailable("sandbox: even the rlimits level does not run (" + why + ")");
  return Status::Unavailable("sandbox: no isolating level works on this machine (" + why +
                             "); refusing to run model-written code without isolation unless unsafe_exec is set");
}

Status DescribeInterpreter(const std::string& interpreter, ProcessRunner* runner, InterpreterInfo* info) {
  *info = InterpreterInfo();
  std::string exe;
  EVALRUN_RETURN_IF_ERROR(FindProgram(interpreter, &exe));
  ProcessSpec spec;
  spec.argv = {exe, "-c", "import platform; print(platform.python_version())"};
  spec.limits.wall_s = 30;
  ProcessResult r;
  EVALRUN_RETURN_IF_ERROR(runner->Run(spec, &r));
  std::string version = FirstLine(r.stdout_text);
  if (!r.ok() || version.empty())
    return Status::Unavailable(exe + ": cannot tell its version: " + r.Describe(30) + ": " +
                               FirstLine(r.stderr_text));
  info->path = exe;
  info->version = version;
  return Status::Ok();
}

}  // namespace evalrun
