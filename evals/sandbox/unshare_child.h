// The sandbox's "unshare" level (sandbox_level.h): namespaces made by
// evalrun itself, for a machine without bubblewrap (or where it fails) that
// allows unprivileged user namespaces. A ProcessSpec::child_hook
// (evals/proc/process_runner.h) that runs in the started child after its
// rlimits and uid change, before exec:
//   1. unshare(user, mount, network, PID, IPC, UTS); the uid and gid map
//      the child's own ids to themselves (so the code is not root inside);
//   2. the minimal root (box_root.h), the same as the "namespaces" level's:
//      a tmpfs holding bind mounts of the interpreter's files, the
//      merged-usr links, the devices (box_root.h BoxDevices) and /dev/fd;
//   3. fork: the new child is the PID namespace's first process. It gets
//      SIGKILL when its parent dies, mounts a /proc of its namespace in the
//      new root, pivot_root()s into it (the host's root detached), makes
//      every mount read-only (mount_setattr, Linux 5.12), mounts a private
//      tmpfs of `tmpfs_bytes` at /tmp and a small one at /dev/shm, goes to
//      /tmp, installs the seccomp filter (seccomp_filter.h, System V IPC
//      allowed: the run has its own IPC namespace) and returns from the hook
//      to exec the program;
//   4. the parent (the process the runner started, still outside the PID
//      namespace) closes every descriptor, waits for that child and ends
//      the same way it did (its exit status, or its signal raised again).
// The network namespace has only a loopback that is down: connect() fails.
// When the namespace's first process ends, the kernel kills every process
// in it, setsid or not; the runner's SIGKILL to the process group reaches
// the waiting parent and the first process too. The runner's CPU time is
// the waiting parent's, which includes the child it reaped.
//
// Errors: the hook returns the errno value of the step that failed (the
// runner fails the start as Unavailable naming "unshare namespaces"): EPERM
// or EINVAL where user namespaces are not allowed, ENOSYS for
// mount_setattr on kernels before 5.12, ENAMETOOLONG for a root entry whose
// path does not fit the plan.
//
// Thread-safety: MakeUnsharePlan runs before fork; the hook is
// async-signal-safe and reads only its plan.
#ifndef EVALRUN_EVALS_SANDBOX_UNSHARE_CHILD_H_
#define EVALRUN_EVALS_SANDBOX_UNSHARE_CHILD_H_

#include <cstdint>
#include <vector>

#include "evals/sandbox/box_root.h"

namespace evalrun {

// One step of the minimal root, formatted before fork.
struct UnshareRootStep {
  RootEntry::Kind kind = RootEntry::kDir;  // kFile also for a device
  char path[256] = {0};
  char target[256] = {0};  // kSymlink
};

// What the hook writes, formatted before fork.
struct UnsharePlan {
  char uid_map[48] = {0};   // "65534 65534 1"
  char gid_map[48] = {0};
  char tmpfs_options[64] = {0};  // "size=268435456,mode=1777"
  static constexpr int kMaxSteps = 32;
  UnshareRootStep steps[kMaxSteps];
  int step_count = 0;
  bool too_long = false;             // an entry did not fit: the hook fails
  const void* seccomp = nullptr;     // the filter (SeccompFilterProgram), null: none
};

// `uid`, `gid`: the ids the child has when the hook runs (after the
// runner's uid change); `root`: the minimal root's entries.
UnsharePlan MakeUnsharePlan(int uid, int gid, uint64_t tmpfs_bytes, const std::vector<RootEntry>& root,
                            const void* seccomp);

// A ChildHook; `plan` is an UnsharePlan*.
int UnshareNamespaces(const void* plan);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_UNSHARE_CHILD_H_
