#include "evals/benchmarks/fit/fit_engine_end.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <cerrno>

namespace evalrun {
namespace {

// One look; "" while the process runs.
std::string LookOnce(pid_t pid) {
  siginfo_t info{};
  int rc;
  do {
    rc = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    // Not our child to wait for (reaped already): gone when no signal reaches it.
    return kill(pid, 0) != 0 && errno == ESRCH ? "exited (status unknown)" : "";
  }
  if (info.si_pid == 0) return "";  // still running
  if (info.si_code == CLD_EXITED) return "exit status " + std::to_string(info.si_status);
  const int sig = info.si_status;
  const char* name = sigabbrev_np(sig);
  return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
}

}  // namespace

std::string EngineEnd(const Engine& engine, double wait_s, Clock* clock) {
  if (!engine.managed() || engine.pid() <= 0) return "";
  const Stopwatch waited(clock);
  for (;;) {
    std::string how = LookOnce(engine.pid());
    if (!how.empty() || waited.Seconds() >= wait_s) return how;
    clock->SleepFor(0.02, nullptr);
  }
}

}  // namespace evalrun
