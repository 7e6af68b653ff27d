#include "evals/sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "evals/sandbox/box_cleanup.h"
#include "evals/sandbox/box_root.h"
#include "evals/sandbox/landlock_rules.h"
#include "evals/sandbox/run_box.h"
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
    ProcStatus s;
    if (ReadProcStatus(e->d_name, &s) && s.uid == static_cast<long>(uid)) count += s.threads > 0 ? s.threads : 1;
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

// The hooks of the levels without a mount namespace, in this order:
// Landlock (landlock_rules.h), then the seccomp filter.
struct BoxHookPlan {
  LandlockHookPlan landlock;     // ruleset_fd -1: none
  const void* seccomp = nullptr;  // null: none
};

int BoxHook(const void* arg) {
  const BoxHookPlan& p = *static_cast<const BoxHookPlan*>(arg);
  if (p.landlock.ruleset_fd >= 0)
    if (int err = RestrictWithLandlock(p.landlock)) return err;
  return p.seccomp ? InstallSeccompFilter(p.seccomp) : 0;
}

// What a level holds beyond its namespaces, decided once for the sandbox.
struct LevelSetup {
  bool landlock = false;          // Landlock rules on the file system
  const void* seccomp = nullptr;  // the filter installed by a hook
  std::string seccomp_bytes;      // the filter handed to bubblewrap
};

LevelSetup SetupFor(SandboxLevel level) {
  LevelSetup s;
  const bool own_ipc = level == SandboxLevel::kNamespaces || level == SandboxLevel::kUnshare;
  const SysvIpc ipc = own_ipc ? SysvIpc::kAllowSysvIpc : SysvIpc::kRefuseSysvIpc;
  if (level == SandboxLevel::kNamespaces)
    s.seccomp_bytes = SeccompFilterBytes(ipc);
  else
    s.seccomp = SeccompFilterProgram(ipc);
  s.landlock = !own_ipc && LandlockAbi() > 0;
  return s;
}

// What one run needs while it starts and lives: its box (who it runs as,
// its folder and control group; held until it is reaped), the program's
// memory file or path, bubblewrap's status pipe and filter, the Landlock
// ruleset, the hooks' plans.
struct Launch {
  std::shared_ptr<RunBox> box;
  int program_fd = -1;
  int status_pipe[2] = {-1, -1};
  int seccomp_fd = -1;
  int ruleset_fd = -1;
  std::string program_path;
  UnsharePlan plan;
  BoxHookPlan hooks;
  ProcessSpec spec;
  ~Launch() {
    for (int fd : {program_fd, status_pipe[0], status_pipe[1], seccomp_fd, ruleset_fd})
      if (fd >= 0) close(fd);
  }
};

Status WriteProgramFile(const std::string& path, const std::string& program) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << program;
  out.close();
  if (!out || chmod(path.c_str(), 0644) != 0)
    return Status::IoError("sandbox: " + path + ": cannot write the program: " + strerror(errno));
  return Status::Ok();
}

class RealSandbox : public CodeSandbox {
 public:
  RealSandbox(const SandboxOptions& options, ProcessRunner* runner, SandboxLevel level, int tasks)
      : options_(options), runner_(runner), level_(level), extra_processes_(tasks + ExtraProcesses(level)),
        root_(InterpreterRoot(options.interpreter)), setup_(SetupFor(level)) {}

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
    *hold = l.box;
    return Status::Ok();
  }

  // What this level holds on this machine (SandboxProbe::containment).
  std::string Containment() const {
    std::string c = geteuid() == 0 ? "a uid of its own per run" : "evalrun's uid";
    if (!setup_.seccomp_bytes.empty() || setup_.seccomp) c += "; seccomp filter";
    if (setup_.landlock) c += "; Landlock ABI " + std::to_string(LandlockAbi());
    std::unique_ptr<BoxCgroup> cg;
    Status st = BoxCgroup::Make("evalrun-probe-" + std::to_string(getpid()), BoxCgroupLimits(), &cg);
    const std::string why = st.message().substr(0, st.message().find("; "));
    c += st.ok() ? "; cgroup " + cg->Describe() : "; no cgroup (" + why + ")";
    return c;
  }

 private:
  bool HostFolder() const { return level_ == SandboxLevel::kSeccomp || level_ == SandboxLevel::kRlimits; }

  Status OpenBox(Launch* l) const {
    RunBoxOptions o;
    o.private_dir = HostFolder();
    o.shares_uid_without_userns = HostFolder();
    const SandboxLimits& lim = options_.limits;
    o.cgroup.memory_bytes = lim.total_memory_bytes > 0 ? lim.total_memory_bytes : lim.memory_bytes;
    o.cgroup.processes = options_.limits.processes + extra_processes_;
    std::unique_ptr<RunBox> box;
    EVALRUN_RETURN_IF_ERROR(RunBox::Open(o, &box));
    l->box = std::move(box);
    return Status::Ok();
  }

  // The program and the descriptors the level hands the child (as 3, 4, ...).
  Status PrepareFiles(const std::string& program, bool status, Launch* l) const {
    if (HostFolder()) {
      l->program_path = l->box->private_dir() + "/main.py";
      EVALRUN_RETURN_IF_ERROR(WriteProgramFile(l->program_path, program));
      if (setup_.landlock) {
        EVALRUN_RETURN_IF_ERROR(MakeLandlockRuleset(root_, l->box->private_dir(), &l->ruleset_fd));
        l->spec.pass_fds.push_back(l->ruleset_fd);
        l->hooks.landlock.ruleset_fd = 3;
      }
      l->hooks.seccomp = setup_.seccomp;
      return Status::Ok();
    }
    l->program_fd = MemoryFile("evalrun-sandbox-program", program);
    if (l->program_fd < 0) return Status::IoError(std::string("sandbox: memfd_create: ") + strerror(errno));
    l->program_path = level_ == SandboxLevel::kNamespaces ? kProgramInBox : "/dev/fd/3";
    l->spec.pass_fds.push_back(l->program_fd);
    if (level_ != SandboxLevel::kNamespaces) return Status::Ok();
    if (status && pipe2(l->status_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      return Status::IoError(std::string("sandbox: pipe: ") + strerror(errno));
    if (l->status_pipe[1] >= 0) l->spec.pass_fds.push_back(l->status_pipe[1]);
    l->seccomp_fd = MemoryFile("evalrun-sandbox-seccomp", setup_.seccomp_bytes);
    if (l->seccomp_fd < 0) return Status::IoError(std::string("sandbox: memfd_create: ") + strerror(errno));
    l->spec.pass_fds.push_back(l->seccomp_fd);
    return Status::Ok();
  }

  Status Prepare(const std::string& program, double wall_s, bool status, Launch* l) const {
    EVALRUN_RETURN_IF_ERROR(OpenBox(l));
    EVALRUN_RETURN_IF_ERROR(PrepareFiles(program, status, l));
    l->plan = MakeUnsharePlan(l->box->uid(), l->box->gid(), options_.limits.file_bytes, root_,
                              SeccompFilterProgram(SysvIpc::kAllowSysvIpc));
    SetSpec(l);
    if (wall_s > 0) {
      l->spec.limits.wall_s = wall_s;
      l->spec.limits.cpu_s = std::max(l->spec.limits.cpu_s, wall_s);
    }
    return Status::Ok();
  }

  void SetLimits(ProcessSpec* spec) const {
    const SandboxLimits& lim = options_.limits;
    spec->stdout_cap = lim.output_bytes;
    spec->stderr_cap = lim.error_bytes;
    spec->kill_on_output_cap = true;
    spec->limits.wall_s = lim.wall_s;
    spec->limits.cpu_s = lim.cpu_s;
    spec->limits.address_space_bytes = lim.memory_bytes;
    spec->limits.processes = lim.processes + extra_processes_;
    spec->limits.open_files = lim.open_files;
    spec->limits.file_bytes = lim.file_bytes;
  }

  void SetSpec(Launch* l) const {
    ProcessSpec& spec = l->spec;
    const bool bwrap = level_ == SandboxLevel::kNamespaces;
    spec.argv = bwrap ? BwrapArgv(l) : std::vector<std::string>{options_.interpreter};
    spec.argv.insert(spec.argv.end(), options_.interpreter_args.begin(), options_.interpreter_args.end());
    spec.argv.push_back(l->program_path);
    SetLimits(&spec);
    const std::string home = HostFolder() ? l->box->private_dir() : "/tmp";
    spec.env = bwrap ? std::vector<std::string>{kPath}
                     : std::vector<std::string>{kPath, "HOME=" + home, "TMPDIR=" + home, "LANG=C.UTF-8"};
    // The "unshare" level goes to its own /tmp once it is mounted.
    spec.cwd = HostFolder() ? l->box->private_dir() : "";
    // bwrap has --die-with-parent; the others die with evalrun by this
    // (the grading thread waits for the run, so it outlives the child).
    if (!bwrap) spec.parent_death_signal = SIGKILL;
    if (level_ == SandboxLevel::kUnshare) {
      spec.child_hook = UnshareNamespaces;
      spec.child_hook_arg = &l->plan;
      spec.hook_name = "unshare namespaces";
    } else if (HostFolder()) {
      spec.child_hook = BoxHook;
      spec.child_hook_arg = &l->hooks;
      spec.hook_name = "Landlock and seccomp filter";
    }
    if (l->box->cgroup()) {
      spec.pre_user_hook = JoinBoxCgroup;
      spec.pre_user_hook_arg = &l->box->cgroup()->join();
      spec.pre_user_hook_name = "join control group";
    }
    if (geteuid() == 0) {
      spec.run_as_uid = l->box->uid();
      spec.run_as_gid = l->box->gid();
    }
  }

  // The minimal root (box_root.h), private /tmp, /dev, /dev/shm and /proc,
  // the seccomp filter from the last descriptor passed.
  std::vector<std::string> BwrapArgv(const Launch* l) const {
    std::vector<std::string> argv = {options_.bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
                                     "--die-with-parent", "--new-session"};
    const std::vector<std::string> binds = BwrapRootArgs(root_);
    argv.insert(argv.end(), binds.begin(), binds.end());
    argv.insert(argv.end(), {"--size", std::to_string(options_.limits.file_bytes)});
    for (const char* arg : {"--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs",
                            "/dev/shm", "--file", "3", kProgramInBox})
      argv.push_back(arg);
    if (l->status_pipe[1] >= 0) argv.insert(argv.end(), {"--json-status-fd", "4"});
    argv.insert(argv.end(), {"--seccomp", std::to_string(2 + l->spec.pass_fds.size())});
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
  std::vector<RootEntry> root_;
  LevelSetup setup_;
};

// Why `level` cannot keep its promise on this machine, "" when it can.
std::string LevelMissing(const SandboxOptions& options, SandboxLevel level) {
  if (level == SandboxLevel::kNamespaces && options.bwrap.empty()) return "no bwrap given";
  if (level != SandboxLevel::kRlimits && SeccompFilterProgram() == nullptr)
    return "no seccomp filter for this architecture";
  if (level == SandboxLevel::kSeccomp && LandlockAbi() == 0)
    return "no Landlock in this kernel (or not among its security modules): the file system could not be "
           "held to the interpreter's files";
  return "";
}

// Runs print(1) at `level`: "" when it works, else why not.
std::string TryLevel(const SandboxOptions& options, ProcessRunner* runner, SandboxLevel level, int tasks) {
  const std::string missing = LevelMissing(options, level);
  if (!missing.empty()) return missing;
  RealSandbox box(options, runner, level, tasks);
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
  if (!containment.empty()) notes += "holds: " + containment + "\n";
  return notes;
}

Status MakeSandbox(const SandboxOptions& options, ProcessRunner* runner, std::unique_ptr<CodeSandbox>* sandbox,
                   SandboxProbe* probe) {
  std::string exe;
  EVALRUN_RETURN_IF_ERROR(FindProgram(options.interpreter, &exe).Prefixed("sandbox interpreter"));
  if (access(exe.c_str(), X_OK) != 0)
    return Status::NotFound("sandbox interpreter: " + exe + ": cannot run it: " + strerror(errno));
  const int tasks = geteuid() == 0 ? 0 : CountTasksOfUid(getuid());
  // As root, orphans of a run (a daemon whose parent ended) become
  // evalrun's children rather than the machine's init's, so that the end of
  // the run reaps them (run_box.h) instead of leaving zombies behind.
  if (geteuid() == 0) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
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
        auto box = std::make_unique<RealSandbox>(options, runner, level, tasks);
        found.containment = box->Containment();
        *sandbox = std::move(box);
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
  // -I: nothing of evalrun's working directory, the user's site folder or
  // PYTHON* variables is imported (a file an answer left there would run).
  spec.argv = {exe, "-I", "-c", "import platform; print(platform.python_version())"};
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
