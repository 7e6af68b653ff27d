// The code sandbox: model-written code (a code benchmark's answers) runs only
// here. One interpreter (Debian's /usr/bin/python3 by default) runs one
// program with one stdin; the result is the process runner's
// (evals/proc/process_runner.h): exit status or signal, timed out, CPU time
// limit, output capped, wall and CPU seconds, stdout and stderr.
//
// Levels (sandbox_level.h), strongest first; MakeSandbox probes them once,
// from the cap (SandboxOptions::max_level) down, by running `print(1)`
// through each, keeps the first that works, and says why each stronger one
// did not (SandboxProbe); level() names it, for results.json and run.json.
// Every level shows the program the same files (box_root.h): the
// interpreter's, read-only, and a private folder to write, nothing else of
// the host's; every level installs the same seccomp filter
// (seccomp_filter.h: no sockets, ptrace, signals to other processes,
// setsid, namespaces, mounts, CLONE_PARENT; System V IPC too where the run
// has no IPC namespace of its own):
//   "namespaces"  bubblewrap (SandboxOptions::bwrap) with its own user,
//                 network, mount, PID, IPC, UTS and cgroup namespaces
//                 (--unshare-all --disable-userns) over the minimal root;
//                 private /tmp (the working directory, holding the program
//                 as /tmp/main.py), /dev, /dev/shm and /proc, a new session,
//                 an empty environment but PATH, HOME=/tmp, LANG, the
//                 filter through --seccomp, and --die-with-parent;
//   "unshare"     the same made by evalrun itself (unshare_child.h) where
//                 bwrap is missing or fails but user namespaces are
//                 allowed: user, network, mount, PID, IPC and UTS
//                 namespaces, the minimal root by pivot_root, every mount
//                 read-only, a private tmpfs at /tmp (the working
//                 directory), its own /proc; the program is /dev/fd/3;
//   "seccomp"     no namespaces: Landlock (landlock_rules.h: read the
//                 interpreter's files, write the private folder, no /proc,
//                 no signal or TCP outside), the filter, a private folder
//                 made for the run under /tmp (its working directory, HOME
//                 and TMPDIR, holding the program as main.py). Needs
//                 Landlock: without it the level is not taken, and the
//                 probe says why;
//   "rlimits"     the same as far as the machine has Landlock and the
//                 filter, and the limits: it promises no isolation. Taken
//                 only with unsafe_exec (`--unsafe-exec`).
// The first three are taken without asking. When none of them works and
// unsafe_exec is not set, MakeSandbox refuses (Unavailable, naming each
// level and why it failed).
//
// Nothing of a run outlives it (run_box.h): each run has a control group
// where evalrun can make one (box_cgroup.h: memory on the whole run, memory
// files and children included, processes, one processor's CPU time), which
// the run's first process joins before it starts the program; at its end
// every process of the group is killed, as root every process of its uid
// too (a daemon that left the session and the group), evalrun reaps the
// orphans (as root it is a child subreaper), removes the uid's System V
// objects, the private folder and the group. Where no control group holds
// the CPU share, runs are made one at a time, so that one answer's
// processes never slow a neighbour into a time limit.
//
// Limits (SandboxLimits), on every process of the sandbox: CPU time
// (RLIMIT_CPU), address space (RLIMIT_AS: an 8 GB allocation fails with
// MemoryError), processes (RLIMIT_NPROC), open files, file size, output
// size (stdout beyond output_bytes: the run is killed, output_capped);
// wall time for the whole run; the whole run's memory (the control group).
// As root, each run's code runs as a uid of its own (sandbox_uids.h: leased
// per run, never shared with a run beside it, in this or another evalrun
// process): the kernel exempts uid 0 from RLIMIT_NPROC, bwrap then runs
// unprivileged and makes a user namespace (which needs unprivileged user
// namespaces: /proc/sys/user/max_user_namespaces > 0), RLIMIT_NPROC binds
// that run alone, and another run's processes cannot be signalled, traced
// or read. Not root, the code runs as evalrun's user, `processes` is added
// to the tasks that user had at the probe, and the levels without a user
// namespace (seccomp, rlimits) run one at a time. Every run is fresh: one
// process tree, one program, gone at its end.
//
// Found when this was written (Debian 12, kernel 6.18 with Landlock ABI 7,
// cgroup v1 with a v2 mount, evalrun as root in a container, bubblewrap
// 0.8.0): every level can be made; bwrap as root would make every
// namespace without a user namespace, with the code as uid 0, so it runs
// as the leased uid. Docker's default seccomp profile refuses unshare and
// clone with namespace flags to a process without CAP_SYS_ADMIN, so a CI
// container like that gets "seccomp" (a filter inside Docker's is allowed).
//
// Errors (Status) are the sandbox failing to start, never a verdict on the
// code: the interpreter missing, bwrap's setup failing (it did not report a
// sandboxed child on --json-status-fd), the namespaces or the filter not
// made (the child hook's errno), pipes, fork. What the code
// does (exit 1, a traceback, a signal, a timeout) is a result.
//
// Usage (as a code grader does):
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
#include <utility>
#include <vector>

#include "evals/base/status.h"
#include "evals/proc/piped_process.h"
#include "evals/proc/process_runner.h"
#include "evals/sandbox/sandbox_level.h"

namespace evalrun {

struct SandboxLimits {
  double wall_s = 10;                     // the whole run
  double cpu_s = 10;                      // each process (whole seconds, rounded up)
  uint64_t memory_bytes = 2ull << 30;     // address space of each process
  uint64_t total_memory_bytes = 0;        // the whole run (every process, memory files, shared
                                          // memory) where a control group holds it; 0: memory_bytes
  int processes = 64;                     // processes and threads of the sandbox uid
  int open_files = 64;
  uint64_t file_bytes = 16ull << 20;      // one file's size; also the /tmp tmpfs's size
  size_t output_bytes = 1 << 20;          // stdout; more kills the run
  size_t error_bytes = 64 << 10;          // stderr kept (the excess is dropped)
};

struct SandboxOptions {
  std::string interpreter = "/usr/bin/python3";
  std::vector<std::string> interpreter_args;  // before the program's path, e.g. {"-I"}
  std::string bwrap = "/usr/bin/bwrap";        // "": do not try bubblewrap
  SandboxLevel max_level = SandboxLevel::kNamespaces;  // the strongest level tried (tests cap it)
  bool unsafe_exec = false;                    // allow the "rlimits" level
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
  // Starts `program` in a fresh sandbox of its own for a conversation
  // (evals/proc/piped_process.h): its stdin and stdout are the caller's
  // pipes, its stderr kept up to limits.error_bytes; the CPU limit is at
  // least wall_s, and the caller holds the wall time. *hold must be kept
  // until the process is finished (the uid it runs as).
  virtual Status Start(const std::string& program, double wall_s, std::unique_ptr<PipedProcess>* process,
                       std::shared_ptr<void>* hold) = 0;
  // "namespaces", "unshare", "seccomp" or "rlimits".
  virtual std::string level() const = 0;
};

// What the probe found: each level from the strongest, "ok" for the one
// taken, else why it was not ("above the cap (seccomp)", "not tried: needs
// unsafe_exec", or what failed).
struct SandboxProbe {
  std::vector<std::pair<SandboxLevel, std::string>> levels;
  // What the level taken holds on this machine: "a uid of its own per run;
  // seccomp filter; Landlock ABI 7; cgroup v1 memory,pids,cpu; v2 kill".
  std::string containment;
  // One line per level: "namespaces: no bwrap given\nunshare: ok\n", then
  // "holds: " and the containment.
  std::string Notes() const;
};

// Probes the levels (once) and makes the sandbox. `runner` is not owned and
// must outlive it. *probe (may be null) says what each level did. Errors:
//   NotFound     the interpreter cannot be run;
//   Unavailable  no level isolates and unsafe_exec is not set (the message
//                names each level and why), or with unsafe_exec even the
//                rlimits level could not run print(1).
Status MakeSandbox(const SandboxOptions& options, ProcessRunner* runner, std::unique_ptr<CodeSandbox>* sandbox,
                   SandboxProbe* probe = nullptr);

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
