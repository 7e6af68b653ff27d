#include "evals/sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

namespace evalrun {
namespace {

constexpr const char* kPath = "PATH=/usr/local/bin:/usr/bin:/bin";
constexpr const char* kProgramInBox = "/tmp/main.py";
// bwrap's own processes under the sandbox uid: itself and the PID
// namespace's first process.
constexpr int kBwrapProcesses = 2;

enum class Level { kNamespaces, kRlimits };

const char* LevelName(Level level) { return level == Level::kNamespaces ? "namespaces" : "rlimits"; }

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

class RealSandbox : public CodeSandbox {
 public:
  RealSandbox(const SandboxOptions& options, ProcessRunner* runner, Level level, int extra_processes)
      : options_(options), runner_(runner), level_(level), extra_processes_(extra_processes) {}

  std::string level() const override { return LevelName(level_); }

  Status Run(const std::string& program, const std::string& stdin_text, SandboxResult* result,
             double wall_s = 0) override {
    *result = SandboxResult();
    result->level = level();
    int program_fd = MemoryFile("evalrun-sandbox-program", program);
    if (program_fd < 0) return Status::IoError(std::string("sandbox: memfd_create: ") + strerror(errno));
    int status_pipe[2] = {-1, -1};
    if (level_ == Level::kNamespaces && pipe2(status_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
      close(program_fd);
      return Status::IoError(std::string("sandbox: pipe: ") + strerror(errno));
    }
    ProcessSpec spec = Spec(stdin_text);
    if (wall_s > 0) {
      spec.limits.wall_s = wall_s;
      spec.limits.cpu_s = std::max(spec.limits.cpu_s, wall_s);
    }
    spec.pass_fds = {program_fd};
    if (status_pipe[1] >= 0) spec.pass_fds.push_back(status_pipe[1]);
    Status st = runner_->Run(spec, &result->process);
    close(program_fd);
    if (status_pipe[1] >= 0) close(status_pipe[1]);
    std::string status_text = status_pipe[0] >= 0 ? Drain(status_pipe[0]) : "";
    if (status_pipe[0] >= 0) close(status_pipe[0]);
    if (!st.ok()) return st.Prefixed("sandbox (" + level() + ")");
    // bwrap reports the sandboxed child's pid once the sandbox is made; its
    // absence is a failure to start, not the code's doing.
    if (level_ == Level::kNamespaces && status_text.find("\"child-pid\"") == std::string::npos &&
        !result->process.timed_out)
      return Status::Unavailable("sandbox did not start: " + options_.bwrap + " " +
                                 result->process.exit.Describe() + ": " + FirstLine(result->process.stderr_text));
    return Status::Ok();
  }

 private:
  ProcessSpec Spec(const std::string& stdin_text) const {
    const SandboxLimits& l = options_.limits;
    ProcessSpec spec;
    spec.argv = level_ == Level::kNamespaces ? BwrapArgv() : std::vector<std::string>{options_.interpreter};
    spec.argv.insert(spec.argv.end(), options_.interpreter_args.begin(), options_.interpreter_args.end());
    spec.argv.push_back(level_ == Level::kNamespaces ? kProgramInBox : "/dev/fd/3");
    spec.stdin_text = stdin_text;
    spec.stdout_cap = l.output_bytes;
    spec.stderr_cap = l.error_bytes;
    spec.kill_on_output_cap = true;
    spec.limits.wall_s = l.wall_s;
    spec.limits.cpu_s = l.cpu_s;
    spec.limits.address_space_bytes = l.memory_bytes;
    spec.limits.processes = l.processes + extra_processes_;
    spec.limits.open_files = l.open_files;
    spec.limits.file_bytes = l.file_bytes;
    spec.env = level_ == Level::kNamespaces
                   ? std::vector<std::string>{kPath}
                   : std::vector<std::string>{kPath, "HOME=/tmp", "LANG=C.UTF-8"};
    spec.cwd = level_ == Level::kNamespaces ? "" : "/tmp";
    if (geteuid() == 0) {
      spec.run_as_uid = options_.uid;
      spec.run_as_gid = options_.gid;
    }
    return spec;
  }

  std::vector<std::string> BwrapArgv() const {
    return {options_.bwrap,
            "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/",
            "--size", std::to_string(options_.limits.file_bytes), "--tmpfs", "/tmp",
            "--proc", "/proc", "--dev", "/dev",
            "--file", "3", kProgramInBox,
            "--json-status-fd", "4",
            "--chdir", "/tmp",
            "--clearenv", "--setenv", "PATH", kPath + 5, "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
            "--", options_.interpreter};
  }

  SandboxOptions options_;
  ProcessRunner* runner_;
  Level level_;
  int extra_processes_;
};

// Runs print(1) at `level`: "" when it works, else why not.
std::string TryLevel(const SandboxOptions& options, ProcessRunner* runner, Level level, int extra) {
  RealSandbox box(options, runner, level, extra);
  SandboxResult r;
  Status st = box.Run("print(1)\n", "", &r);
  if (!st.ok()) return st.message();
  if (!r.process.ok() || r.process.stdout_text != "1\n")
    return "print(1) gave " + r.process.Describe(options.limits.wall_s) + ": " +
           FirstLine(r.process.stderr_text + r.process.stdout_text);
  return "";
}

}  // namespace

Status MakeSandbox(const SandboxOptions& options, ProcessRunner* runner, std::unique_ptr<CodeSandbox>* sandbox,
                   std::string* probe_notes) {
  std::string exe, notes;
  EVALRUN_RETURN_IF_ERROR(FindProgram(options.interpreter, &exe).Prefixed("sandbox interpreter"));
  if (access(exe.c_str(), X_OK) != 0)
    return Status::NotFound("sandbox interpreter: " + exe + ": cannot run it: " + strerror(errno));
  const int tasks = geteuid() == 0 ? 0 : CountTasksOfUid(getuid());
  std::string why = "no bwrap given";
  if (!options.bwrap.empty()) {
    why = TryLevel(options, runner, Level::kNamespaces, tasks + kBwrapProcesses);
    if (why.empty()) {
      if (probe_notes) *probe_notes = "namespaces: ok\n";
      *sandbox = std::make_unique<RealSandbox>(options, runner, Level::kNamespaces, tasks + kBwrapProcesses);
      return Status::Ok();
    }
  }
  notes = "namespaces: " + why + "\n";
  if (!options.unsafe_exec) {
    if (probe_notes) *probe_notes = notes;
    return Status::Unavailable("sandbox: no isolation available (namespaces: " + why +
                               "); refusing to run model-written code without it unless unsafe_exec is set");
  }
  std::string rl = TryLevel(options, runner, Level::kRlimits, tasks);
  notes += "rlimits: " + (rl.empty() ? std::string("ok") : rl) + "\n";
  if (probe_notes) *probe_notes = notes;
  if (!rl.empty()) return Status::Unavailable("sandbox: even the rlimits level does not run: " + rl);
  *sandbox = std::make_unique<RealSandbox>(options, runner, Level::kRlimits, tasks);
  return Status::Ok();
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
