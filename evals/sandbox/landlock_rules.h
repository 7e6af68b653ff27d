// Landlock (the kernel's unprivileged access control, Linux 5.13+) for the
// code sandbox's levels without a mount namespace ("seccomp", "rlimits";
// sandbox_level.h): the program and every process it starts may
//   * read and execute beneath the interpreter's files (box_root.h) and
//     read and write the devices (BoxDevices);
//   * read, write, make and remove anything beneath its private folder;
//   * nothing else of the file system: no host file outside those (data,
//     job, card, /var/tmp, any home), no /proc (other processes' command
//     lines), no /tmp or /dev/shm of the host's;
//   * no TCP bind or connect (ABI 4+), no signal and no abstract UNIX socket
//     outside the sandbox (ABI 6+), no ptrace of a process outside it (any
//     ABI).
// The ruleset is made before fork (MakeLandlockRuleset) and handed to the
// child as a descriptor; RestrictWithLandlock, in the child just before
// exec, sets no_new_privs and enforces it, then closes the descriptor.
//
// Errors: LandlockAbi() is 0 where the kernel has no Landlock (or it is not
// among the enabled security modules); MakeLandlockRuleset returns
// Unavailable then, and IoError naming the path a rule could not be made
// for. Thread-safety: LandlockAbi is cached (thread-safe static);
// MakeLandlockRuleset may be called from several threads; the hook is
// async-signal-safe.
#ifndef EVALRUN_EVALS_SANDBOX_LANDLOCK_RULES_H_
#define EVALRUN_EVALS_SANDBOX_LANDLOCK_RULES_H_

#include <string>
#include <vector>

#include "evals/base/status.h"
#include "evals/sandbox/box_root.h"

namespace evalrun {

// The kernel's Landlock ABI version, 0 when there is none.
int LandlockAbi();

// A ruleset descriptor (close-on-exec; the caller owns it) allowing what
// the header says for `root` and `private_dir`.
Status MakeLandlockRuleset(const std::vector<RootEntry>& root, const std::string& private_dir, int* ruleset_fd);

// A ChildHook argument: the ruleset's descriptor number in the child.
struct LandlockHookPlan {
  int ruleset_fd = -1;
};

// Sets no_new_privs, enforces plan's ruleset, closes its descriptor: 0 or
// an errno value.
int RestrictWithLandlock(const LandlockHookPlan& plan);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_LANDLOCK_RULES_H_
