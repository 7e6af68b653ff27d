// The fork + exec under RealProcessRunner (process_runner.h): everything the
// child needs (argv, environment, descriptors, limits) is made before fork;
// after it the child runs only async-signal-safe calls, in this order: a
// session or group of its own, default signals and an empty mask,
// stdin/stdout/stderr (and pass_fds as 3, 4, ...), every other descriptor
// closed, the pre-user hook, the rlimits, the uid/gid, the parent-death signal (after
// the uid change, which clears it), the working directory, the hook,
// execve. A failing step reaches the parent through a close-on-exec pipe
// (step and errno), and SpawnChild reaps the child and returns the error.
//
// Thread-safety: SpawnChild may be called from several threads at once.
#ifndef EVALRUN_EVALS_PROC_SPAWN_CHILD_H_
#define EVALRUN_EVALS_PROC_SPAWN_CHILD_H_

#include <sys/types.h>

#include "evals/base/status.h"
#include "evals/proc/process_runner.h"

namespace evalrun {

// The parent's ends of a started child; -1 where the spec asked for no pipe.
// Every descriptor is close-on-exec; the owner closes them.
struct SpawnedChild {
  pid_t pid = -1;
  int stdin_fd = -1;   // write end, non-blocking
  int stdout_fd = -1;  // read end
  int stderr_fd = -1;  // read end
};

Status SpawnChild(const ProcessSpec& spec, SpawnedChild* child);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PROC_SPAWN_CHILD_H_
