// A conversation with a started program (ProcessRunner::StartPiped): lines
// written to its stdin, lines read from its stdout, each wait bounded; its
// stderr kept up to a cap meanwhile (the rest read and dropped, so it never
// blocks on a full pipe). Finish() ends it: its stdin closed, a grace for it
// to exit by itself, then SIGKILL to its process group, and the reap.
//
// Errors: Send and ReadLine report what happened as values (the program
// ended, the wait ran out, the line was too long); nothing here is an error
// of the caller's run. Thread-safety: one thread at a time.
#ifndef EVALRUN_EVALS_PROC_PIPED_PROCESS_H_
#define EVALRUN_EVALS_PROC_PIPED_PROCESS_H_

#include <memory>
#include <string>

#include "evals/proc/process_runner.h"

namespace evalrun {

class PipedProcess {
 public:
  enum class Read { kLine, kEnd, kTimeout, kTooLong };

  PipedProcess(std::unique_ptr<ProcessHandle> handle, ProcessPipes pipes, size_t stderr_cap);
  ~PipedProcess();
  PipedProcess(const PipedProcess&) = delete;
  PipedProcess& operator=(const PipedProcess&) = delete;

  // Writes all of `text` within timeout_s; false when the program stopped
  // reading (its stdin closed, it ended) or the time ran out.
  bool Send(const std::string& text, double timeout_s);
  // The next line of its stdout, without "\n", within timeout_s. kEnd: its
  // stdout closed first (what came after the last "\n" is dropped);
  // kTooLong: more than max_bytes without a "\n".
  Read ReadLine(double timeout_s, size_t max_bytes, std::string* line);
  // Whether a complete or partial line is waiting now (nothing is consumed).
  bool HasPendingOutput();
  // Closes its stdin, waits up to grace_s for it to exit, kills its group,
  // reaps it. Idempotent.
  ProcessExit Finish(double grace_s = 0.5);
  const std::string& stderr_text() const { return stderr_; }
  pid_t pid() const { return handle_->pid(); }

 private:
  // Waits up to timeout_s for `events` on fd (output to read, or room on
  // stdin), draining stderr meanwhile. True when fd is ready.
  bool Wait(int fd, short events, double timeout_s);
  void DrainStderr();

  std::unique_ptr<ProcessHandle> handle_;
  ProcessPipes pipes_;
  size_t stderr_cap_;
  std::string stderr_;
  std::string buffered_;
  bool finished_ = false;
  ProcessExit exit_;
};

// StartPiped + a PipedProcess.
Status StartConversation(ProcessRunner* runner, const ProcessSpec& spec, size_t stderr_cap,
                         std::unique_ptr<PipedProcess>* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PROC_PIPED_PROCESS_H_
