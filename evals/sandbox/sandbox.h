// The code sandbox: model-written code (LiveCodeBench's answers) runs only
// here. One interpreter (Debian's /usr/bin/python3 by default) runs one
// program with one stdin; the result is the process runner's
// (evals/proc/process_runner.h): exit status or signal, timed out, CPU time
// limit, output capped, wall and CPU seconds, stdout and stderr.
//
// Levels, strongest first; MakeSandbox probes once which one works (it runs
// `print(1)` through it) and keeps it; level() names it, for results.json:
//   "namespaces"  bubblewrap (SandboxOptions::bwrap) with its own user,
//                 network, mount, PID, IPC, UTS and cgroup namespaces
//                 (--unshare-all --disable-userns), a read-only view of
//                 the system (--ro-bind / /), a private writable tmpfs at
//                 /tmp (the working directory, holding the program as
//                 /tmp/main.py), new /proc and /dev, a new session, an
//                 empty environment but PATH, HOME=/tmp, LANG, and
//                 --die-with-parent. No network: only a loopback that is
//                 down. When the PID namespace's first process ends, the
//                 kernel kills every process in it: nothing outlives a run,
//                 setsid or not.
//   "rlimits"     no isolation: the interpreter under the limits below, in
//                 its own process group, with the program as /dev/fd/3 and
//                 /tmp as working directory. Network and the file system
//                 are the sandbox uid's; a setsid grandchild escapes the
//                 kill at the end. Used only with `unsafe_exec`.
// Where bwrap is missing or cannot make namespaces (many CI containers
// forbid user namespaces), MakeSandbox refuses (Unavailable, with what
// bwrap said) unless unsafe_exec is set. (Neither a built-in unshare/clone
// nor a seccomp filter level is implemented; the probe names the level
// that was taken.)
//
// Limits (SandboxLimits), on every process of the sandbox: CPU time
// (RLIMIT_CPU), address space (RLIMIT_AS: an 8 GB allocation fails with
// MemoryError), processes (RLIMIT_NPROC), open files, file size, output
// size (stdout beyond output_bytes: the run is killed, output_capped);
// wall time for the whole run. Found as root (here and in CI), the kernel
// exempts uid 0 from RLIMIT_NPROC, so the code runs as SandboxOptions::uid
// (65534, nobody, by default): bwrap then runs unprivileged and makes a
// user namespace (which needs unprivileged user namespaces:
// /proc/sys/user/max_user_namespaces > 0). RLIMIT_NPROC counts every
// process of that uid on the machine: concurrent sandboxes share
// `processes` unless each gets its own uid. Not root, the code runs as
// evalrun's user and `processes` is added to the tasks that user had at the
// probe.
//
// Found when this was written (Debian 12, kernel 6.18, evalrun as root in a
// container, bubblewrap 0.8.0): bwrap as root makes every namespace without
// a user namespace, but then the code is uid 0 and RLIMIT_NPROC does not
// bind it (a fork bomb would run to the wall limit); as uid 65534 bwrap
// makes a user namespace (max_user_namespaces 96362) and the fork bomb stops
// at `processes`. Docker's default seccomp profile refuses unshare and
// clone with namespace flags to a process without CAP_SYS_ADMIN, so a CI
// container like that gets the refusal (or "rlimits" with unsafe_exec).
//
// Errors (Status) are the sandbox failing to start, never a verdict on the
// code: the interpreter or bwrap missing, bwrap's setup failing (it did not
// report a sandboxed child on --json-status-fd), pipes, fork. What the code
// does (exit 1, a traceback, a signal, a timeout) is a result.
//
// Usage (the LiveCodeBench grader):
//   SandboxOptions o;                        // python3, 10 s wall, 2 GiB, ...
//   o.limits.wall_s = 6;
//   std::unique_ptr<CodeSandbox> box;
//   Status st = MakeSandbox(o, RealProcessRunner::Default(), &box);
//   if (!st.ok()) return st;                 // no sandbox: a run error
//   SandboxResult r;
//   EVALRUN_RETURN_IF_ERROR(box->Run(program, stdin_text, &r));
//   if (r.process.timed_out) ...             // time limit
//   else if (!r.process.ok()) ...            // runtime error: r.process.stderr_text
//   else compare r.process.stdout_text;      // box->level() goes to results.json
//
// Thread-safety: a CodeSandbox is immutable after MakeSandbox; Run() may be
// called from several threads at once.
#ifndef EVALRUN_EVALS_SANDBOX_SANDBOX_H_
#define EVALRUN_EVALS_SANDBOX_SANDBOX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "evals/base/status.h"
#include "evals/proc/process_runner.h"

namespace evalrun {

struct SandboxLimits {
  double wall_s = 10;                     // the whole run
  double cpu_s = 10;                      // each process (whole seconds, rounded up)
  uint64_t memory_bytes = 2ull << 30;     // address space of each process
  int processes = 64;                     // processes and threads of the sandbox uid
  int open_files = 64;
  uint64_t file_bytes = 16ull << 20;      // one file's size; also the /tmp tmpfs's size
  size_t output_bytes = 1 << 20;          // stdout; more kills the run
  size_t error_bytes = 64 << 10;          // stderr kept (the excess is dropped)
};

struct SandboxOptions {
  std::string interpreter = "/usr/bin/python3";
  std::vector<std::string> interpreter_args;  // before the program's path, e.g. {"-I"}
  std::string bwrap = "/usr/bin/bwrap";        // "": do not try namespaces
  bool unsafe_exec = false;                    // allow the "rlimits" level
  int uid = 65534;                             // the code's uid and gid when evalrun is root
  int gid = 65534;
  SandboxLimits limits;
};

struct SandboxResult {
  ProcessResult process;
  std::string level;  // the sandbox's level()
};

class CodeSandbox {
 public:
  virtual ~CodeSandbox() = default;
  // Runs `program` with `stdin_text`. Ok whenever the code ran; *result
  // says how it ended. wall_s > 0: this run's wall limit instead of
  // limits.wall_s, and its CPU limit at least as long (a grader that runs
  // many tests in one process needs the limit of all of them).
  virtual Status Run(const std::string& program, const std::string& stdin_text, SandboxResult* result,
                     double wall_s = 0) = 0;
  // "namespaces" or "rlimits".
  virtual std::string level() const = 0;
};

// Probes the levels (once) and makes the sandbox. `runner` is not owned and
// must outlive it. *probe_notes (may be null) gets one line per level
// tried: "namespaces: ok" or "namespaces: <why not>". Errors:
//   NotFound     the interpreter cannot be run;
//   Unavailable  no level isolates and unsafe_exec is not set (the notes
//                say why), or even the rlimits level could not run print(1).
Status MakeSandbox(const SandboxOptions& options, ProcessRunner* runner, std::unique_ptr<CodeSandbox>* sandbox,
                   std::string* probe_notes = nullptr);

// The interpreter as run.json records it: the path as given (looked up on
// PATH when it has no '/') and its version ("3.11.2", from
// platform.python_version()). NotFound / Unavailable when it cannot say.
struct InterpreterInfo {
  std::string path;
  std::string version;
};
Status DescribeInterpreter(const std::string& interpreter, ProcessRunner* runner, InterpreterInfo* info);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_SANDBOX_H_
