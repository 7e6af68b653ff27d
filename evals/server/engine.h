// The inference engine behind server.base_url: either one evalrun starts and
// stops itself (ManagedEngine, when the card has server.command) or one that
// somebody else runs (ExternalEngine: the server at base_url, used as is).
//
// A managed engine is one child process started from an argv template. The
// template's elements may contain three placeholders, replaced wherever
// they appear (also inside an element, "--port={port}"):
//   {port}     the port of server.base_url (80 / 443 when the URL has none):
//              the engine must listen where the card says evalrun talks;
//   {context}  the total context in tokens (llama-server -c);
//   {slots}    the number of slots (llama-server -np).
// Nothing else is replaced (a JSON argument keeps its braces); there is no
// {model}: write the model path into the template. No shell is involved:
// argv[0] is looked up on PATH, the elements are passed as they are.
//
// The child is started by the process runner (evals/proc/process_runner.h,
// ManagedEngineOptions::runner): in its own session and process group
// (setsid), with stdin from /dev/null, no other descriptor of evalrun's, the
// signal mask and actions reset, and stdout + stderr appended to the log file (the runner
// uses <run>/server.log); evalrun writes a "=== evalrun: ..." line there
// before each start and after each stop. Start() waits for GET /health: 200
// (or 404, a server without /health) is ready, 503 is loading, a refused
// connection is "not listening yet"; the wait is bounded by
// server.ready_timeout_s. The child exiting during the wait is a load
// failure whose message carries the last lines of the log.
//
// Stop() sends SIGTERM to the whole process group, waits up to
// server.stop_grace_s for the group to be gone, then sends SIGKILL to the
// group. The destructor calls Stop(), so an error return or an exception
// unwinding the runner leaves no engine behind; so does Ctrl-C, which
// cancels the run and unwinds. What cannot be cleaned up from inside:
// evalrun itself being killed with SIGKILL (or calling _exit). Mitigations:
//   * the child asks the kernel for SIGTERM when its parent dies
//     (prctl(PR_SET_PDEATHSIG)). Linux sends it when the *thread* that
//     forked exits, so call Start() from a thread that outlives the engine
//     (the runner's main thread); it reaches the direct child only (a
//     wrapper script's children are not covered);
//   * TerminateManagedEngines() sends a signal to every running managed
//     engine's group without locks or allocation, for a path that is about
//     to _exit (the second Ctrl-C).
//
// Thread-safety: an Engine is used by one thread at a time (the runner's);
// TerminateManagedEngines() may be called from any thread.
#ifndef EVALRUN_EVALS_SERVER_ENGINE_H_
#define EVALRUN_EVALS_SERVER_ENGINE_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/base/clock.h"
#include "evals/server/server_config.h"
#include "evals/server/http.h"
#include "evals/base/status.h"
#include "evals/proc/process_runner.h"

namespace evalrun {

class Engine {
 public:
  virtual ~Engine() = default;

  // Starts the engine with a total context of `context` tokens and `slots`
  // slots and returns once it answers GET /health with 200. Failures:
  //   InvalidInput  the template or the arguments are unusable;
  //   NotFound      argv[0] is not an executable file (or not on PATH);
  //   Unavailable   something already answers at origin() before the start,
  //                 or the engine exited while loading (message: exit status
  //                 and the last lines of the log);
  //   Timeout       not ready within ready_timeout_s (it is stopped);
  //   Cancelled     `cancel` fired during the wait (it is stopped);
  //   Internal      Start() while already running.
  // After a failure nothing is left running.
  virtual Status Start(int64_t context, int slots, CancelToken* cancel) = 0;

  // Stops what Start() started; Ok when nothing runs. An Internal error when
  // the group could not be made to go away (its pid is named).
  virtual Status Stop() = 0;

  // True when evalrun starts and stops the engine itself.
  virtual bool managed() const = 0;
  // scheme://host:port where the engine answers.
  virtual std::string origin() const = 0;
  // The child's pid (also its process group id) while running; -1 otherwise.
  virtual pid_t pid() const = 0;
  // The log file ("" for an external engine).
  virtual std::string log_path() const = 0;
};

// The server at base_url, used as is: Start() and Stop() do nothing and
// return Ok (readiness is the runner's WaitUntilReady).
class ExternalEngine : public Engine {
 public:
  explicit ExternalEngine(std::string origin) : origin_(std::move(origin)) {}
  Status Start(int64_t, int, CancelToken*) override { return Status::Ok(); }
  Status Stop() override { return Status::Ok(); }
  bool managed() const override { return false; }
  std::string origin() const override { return origin_; }
  pid_t pid() const override { return -1; }
  std::string log_path() const override { return ""; }

 private:
  std::string origin_;
};

struct ManagedEngineOptions {
  std::vector<std::string> command;  // the argv template (server.command)
  std::string origin;                // scheme://host[:port] (ServerConfig::Origin())
  std::string log_path;              // appended to; created when missing
  double ready_timeout_s = 600;      // server.ready_timeout_s
  double stop_grace_s = 10;          // server.stop_grace_s
  std::string bearer_token;          // sent to /health (may be empty)
  // Transports to `origin` for the health checks; empty: MakeHttpTransport.
  TransportFactory transports;
  // The waits (health polling, ready_timeout_s, stop_grace_s, the 10 s after
  // SIGKILL) and the times in server.log's lines are on this clock (not
  // owned). A fake one makes the deadlines pass at once; the engine still
  // waits for a real process, so tests give its sleeps a real moment too
  // (FakeClock's sleep hook).
  Clock* clock = RealClock::Default();
  // Starts the child (not owned); null: RealProcessRunner::Default().
  ProcessRunner* runner = nullptr;
};

class ManagedEngine : public Engine {
 public:
  explicit ManagedEngine(ManagedEngineOptions opts);
  ~ManagedEngine() override;  // Stop()
  ManagedEngine(const ManagedEngine&) = delete;
  ManagedEngine& operator=(const ManagedEngine&) = delete;

  Status Start(int64_t context, int slots, CancelToken* cancel) override;
  Status Stop() override;
  bool managed() const override { return true; }
  std::string origin() const override { return opts_.origin; }
  pid_t pid() const override { return child_ ? child_->pid() : -1; }
  std::string log_path() const override { return opts_.log_path; }

  // The argv Start() ran last (placeholders replaced); empty before.
  const std::vector<std::string>& last_argv() const { return last_argv_; }

 private:
  // Writes the log's header line and starts the child.
  Status Launch(const std::string& exe, std::vector<std::string> argv, int64_t context, int slots);
  Status WaitReady(CancelToken* cancel);
  // Reaps the child when it has exited; true then, with *how filled in.
  bool Reap(bool block, std::string* how);
  // Signals the group, then waits up to wait_s for it to be gone (reaped
  // leader, no member left); true when it is.
  bool SignalAndWait(int sig, double wait_s, std::string* how);

  ManagedEngineOptions opts_;
  std::unique_ptr<ProcessHandle> child_;  // while running
  std::vector<std::string> last_argv_;
};

// Replaces {port}, {context} and {slots} in every element. InvalidInput when
// the template is empty or its first element is empty.
Status ExpandCommand(const std::vector<std::string>& templ, int port, int64_t context, int slots,
                     std::vector<std::string>* argv);

// The port of an origin "scheme://host[:port]"; 80 / 443 by scheme when it
// has none. InvalidInput for anything else.
Status OriginPort(const std::string& origin, int* port);

// The last `max_lines` lines of a file (at most the last 64 KiB are read);
// "" when it cannot be read.
std::string TailOfFile(const std::string& path, int max_lines);

// ManagedEngine when server.command is set, else ExternalEngine at
// server.Origin(). `log_path` is the managed engine's log (<run>/server.log);
// `clock` is the managed engine's (ManagedEngineOptions::clock).
std::unique_ptr<Engine> MakeEngine(const ServerConfig& server, const std::string& log_path,
                                   const std::string& bearer_token, Clock* clock = RealClock::Default());

// Sends `sig` to the process group of every managed engine running now.
// Async-signal-safe (no locks, no allocation); for a path about to _exit.
void TerminateManagedEngines(int sig);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_ENGINE_H_
