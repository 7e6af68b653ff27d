// The sandbox's "unshare" level (sandbox_level.h): namespaces made by
// evalrun itself, for a machine without bubblewrap (or where it fails) that
// allows unprivileged user namespaces. A ProcessSpec::child_hook
// (evals/proc/process_runner.h) that runs in the started child after its
// rlimits and uid change, before exec:
//   1. unshare(user, mount, network, PID, IPC, UTS); the uid and gid map
//      the child's own ids to themselves (so the code is not root inside);
//   2. every mount made private, then read-only, recursively
//      (mount_setattr, Linux 5.12); a tmpfs of `tmpfs_bytes` at /tmp;
//   3. fork: the new child is the PID namespace's first process. It gets
//      SIGKILL when its parent dies, mounts a /proc of its namespace, goes
//      to /tmp and returns from the hook to exec the program;
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
// mount_setattr on kernels before 5.12.
//
// Thread-safety: MakeUnsharePlan runs before fork; the hook is
// async-signal-safe and reads only its plan.
#ifndef EVALRUN_EVALS_SANDBOX_UNSHARE_CHILD_H_
#define EVALRUN_EVALS_SANDBOX_UNSHARE_CHILD_H_

#include <cstdint>

namespace evalrun {

// What the hook writes, formatted before fork.
struct UnsharePlan {
  char uid_map[48] = {0};   // "65534 65534 1"
  char gid_map[48] = {0};
  char tmpfs_options[64] = {0};  // "size=268435456,mode=1777"
};

// `uid`, `gid`: the ids the child has when the hook runs (after the
// runner's uid change).
UnsharePlan MakeUnsharePlan(int uid, int gid, uint64_t tmpfs_bytes);

// A ChildHook; `plan` is an UnsharePlan*.
int UnshareNamespaces(const void* plan);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_UNSHARE_CHILD_H_
