// Running other programs: the one process runner that every program evalrun
// starts goes through (nvidia-smi, the managed engine, sandboxed code).
// After ninja's subprocess.h, behind a small interface (ninja's
// CommandRunner): code that runs programs takes a ProcessRunner*, tests of
// the runner itself use RealProcessRunner with /bin/sh programs.
//
// What a started process gets (ProcessSpec):
//   * argv, no shell: argv[0] is looked up on PATH when it has no '/';
//   * stdin: the given text through a pipe, or /dev/null;
//   * stdout and stderr: captured (each up to its cap; the excess is read
//     and discarded, and the result says "truncated"), discarded, or
//     appended to a file (both streams to the same file);
//   * its own process group (a new session by default): at the end of Run,
//     and on a timeout, SIGKILL goes to the whole group (-pgid), so a
//     grandchild that stayed in the group goes too. A grandchild that made
//     a session of its own (setsid) has left the group: the runner does not
//     chase it (the sandbox's PID namespace does);
//   * no descriptor of evalrun's beyond 0, 1, 2 (and `pass_fds`, as 3, 4, ...);
//     signal mask empty, every signal's action the default;
//   * rlimits (ProcessLimits): CPU time, address space, processes, open
//     files, file size; core dumps always off;
//   * optionally another uid/gid (root only), a parent-death signal, a
//     working directory, an environment, a hook that runs in the child
//     before its limits and uid change (e.g. joining a control group), and
//     one that runs just before exec (e.g. a seccomp filter).
//
// Two modes: Run() runs to completion and returns a ProcessResult (exit
// status or signal, timed_out, wall and CPU seconds, the outputs); Start()
// returns a ProcessHandle for a long-lived process (the engine) that the
// caller signals, polls and reaps; its outputs must go to a file or nowhere.
//
// Errors (Status): the program is not found or cannot be executed
// (NotFound: "<argv0>: cannot run it: <reason>[ (looked on PATH)]"); the
// spec is unusable (InvalidInput); pipes, files, fork or the child's setup
// failed (IoError / Unavailable, naming the step). What the program does
// once started (exit codes, signals, timeouts) is a result, not an error.
//
// Thread-safety: RealProcessRunner is stateless; Run() and Start() may be
// called from several threads at once (children are made with fork; the
// child runs only async-signal-safe code before exec). A ProcessHandle is
// used by one thread at a time.
#ifndef EVALRUN_EVALS_PROC_PROCESS_RUNNER_H_
#define EVALRUN_EVALS_PROC_PROCESS_RUNNER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

// 0 everywhere means "no limit" (the inherited one).
struct ProcessLimits {
  double wall_s = 0;                 // Run(): SIGKILL to the group after this; 0: none
  double cpu_s = 0;                  // RLIMIT_CPU of each process, rounded up to whole
                                     // seconds: SIGXCPU there, SIGKILL a second later
  uint64_t address_space_bytes = 0;  // RLIMIT_AS
  int processes = 0;                 // RLIMIT_NPROC: counts every process of the real uid,
                                     // and the kernel exempts uid 0 (run_as_uid helps)
  int open_files = 0;                // RLIMIT_NOFILE
  uint64_t file_bytes = 0;           // RLIMIT_FSIZE (SIGXFSZ beyond)
};

enum class OutputTo { kCapture, kDiscard, kAppendToFile };

// Runs in the child after fork: child_hook after the rlimits and the uid
// change, just before exec; pre_user_hook before the rlimits and the uid
// change (still with evalrun's privileges). Must be async-signal-safe.
// Returns 0, or an errno value: the start then fails (Unavailable) naming
// `hook_name` or `pre_user_hook_name`.
using ChildHook = int (*)(const void* arg);

struct ProcessSpec {
  std::vector<std::string> argv;
  std::string program;  // the file to execute; "": argv[0] (looked up on PATH)
  std::optional<std::string> stdin_text;  // nullopt: /dev/null
  OutputTo stdout_to = OutputTo::kCapture;
  OutputTo stderr_to = OutputTo::kCapture;
  std::string output_path;  // for kAppendToFile (created 0644 when missing)
  size_t stdout_cap = 1 << 20;
  size_t stderr_cap = 64 << 10;
  bool kill_on_output_cap = false;  // Run(): SIGKILL the group once stdout passes its cap
  ProcessLimits limits;
  bool new_session = true;     // setsid(); false: setpgid(0, 0) (a group, same session)
  int parent_death_signal = 0;  // PR_SET_PDEATHSIG (sent when the starting *thread* exits)
  int run_as_uid = -1;          // with run_as_gid: setgroups({}), setresgid, setresuid
  int run_as_gid = -1;
  std::string cwd;                               // "": the caller's
  std::optional<std::vector<std::string>> env;   // nullopt: the caller's environment
  std::vector<int> pass_fds;    // the caller's descriptors the child gets as 3, 4, ... (at most 4)
  ChildHook child_hook = nullptr;
  const void* child_hook_arg = nullptr;
  const char* hook_name = "child hook";
  ChildHook pre_user_hook = nullptr;
  const void* pre_user_hook_arg = nullptr;
  const char* pre_user_hook_name = "pre-user hook";
};

// How a process ended.
struct ProcessExit {
  bool exited = false;  // exit() / return from main
  int exit_code = -1;   // when exited
  int signal = 0;       // the signal that killed it, else 0
  bool known = true;    // false: reaped by someone else (status lost)
  // "exit status 1", "killed by signal 9 (SIGKILL)", "exited (status unknown)".
  std::string Describe() const;
};

struct ProcessResult {
  ProcessExit exit;
  bool timed_out = false;      // killed at limits.wall_s
  bool output_capped = false;  // killed because stdout passed its cap (kill_on_output_cap)
  bool cpu_limited = false;    // killed for its CPU time (SIGXCPU, or SIGKILL at the hard limit)
  double wall_s = 0;           // from the start to the reap
  double cpu_s = 0;            // user + system of the process and the children it reaped
  std::string stdout_text, stderr_text;
  bool stdout_truncated = false, stderr_truncated = false;

  bool ok() const { return exit.exited && exit.exit_code == 0 && !timed_out; }
  // exit.Describe(), or "timed out after 2 s (killed)", "output over its cap
  // (killed)", "CPU time limit (killed by signal 24 (SIGXCPU))".
  std::string Describe(double wall_limit_s) const;
};

// A started process (Start()): the leader's pid is also its process group
// id. The destructor sends SIGKILL to the group and reaps the leader if that
// has not been done (waiting at most about a second for it).
class ProcessHandle {
 public:
  explicit ProcessHandle(pid_t pid) : pid_(pid) {}
  ~ProcessHandle();
  ProcessHandle(const ProcessHandle&) = delete;
  ProcessHandle& operator=(const ProcessHandle&) = delete;

  pid_t pid() const { return pid_; }
  // Reaps the leader when it has exited: true then, with *exit filled in
  // (every later call too). block: waits for it.
  bool Reap(bool block, ProcessExit* exit);
  bool reaped() const { return reaped_; }
  // True while any process of the group exists (zombies included).
  bool GroupAlive() const;
  // kill(-pgid, sig); the leader alone when the group cannot be signalled
  // and the leader is not reaped yet. False when neither could be.
  bool SignalGroup(int sig);

 private:
  pid_t pid_;
  bool reaped_ = false;
  ProcessExit exit_;
};

// The caller's ends of a started child's pipes (StartPiped): write to its
// stdin (non-blocking), read its stdout and stderr; -1 where there is none.
// Close-on-exec; the caller owns and closes them.
struct ProcessPipes {
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;

  // Starts the program, feeds stdin, captures the outputs, enforces the
  // limits, kills the group at the end and reaps the leader. Ok with
  // *result filled in whenever the program started (whatever it then did).
  virtual Status Run(const ProcessSpec& spec, ProcessResult* result) = 0;

  // Starts the program and returns at once (after the exec succeeded).
  // stdin must be nullopt and neither output kCapture (InvalidInput);
  // limits.wall_s is not enforced (the caller holds the handle).
  virtual Status Start(const ProcessSpec& spec, std::unique_ptr<ProcessHandle>* handle) = 0;

  // Starts the program for a conversation (evals/proc/piped_process.h):
  // its stdin and stdout are pipes whose other ends go to *pipes; stderr a
  // pipe too when stderr_to is kCapture. spec.stdin_text must be set (its
  // text is not written: the caller writes) and stdout_to kCapture, else
  // InvalidInput; limits.wall_s is not enforced (the caller holds the handle).
  virtual Status StartPiped(const ProcessSpec& spec, std::unique_ptr<ProcessHandle>* handle,
                            ProcessPipes* pipes) = 0;
};

class RealProcessRunner : public ProcessRunner {
 public:
  Status Run(const ProcessSpec& spec, ProcessResult* result) override;
  Status Start(const ProcessSpec& spec, std::unique_ptr<ProcessHandle>* handle) override;
  Status StartPiped(const ProcessSpec& spec, std::unique_ptr<ProcessHandle>* handle, ProcessPipes* pipes) override;

  // A process-wide instance (never destroyed).
  static RealProcessRunner* Default();
};

// The file `name` names: as given when it has a '/', else the first
// executable regular file of that name on PATH. NotFound as above.
Status FindProgram(const std::string& name, std::string* path);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PROC_PROCESS_RUNNER_H_
