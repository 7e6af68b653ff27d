// The code sandbox's seccomp filter (sandbox_level.h), the same at every
// level: a raw BPF program installed in the child just before exec (a
// ProcessSpec::child_hook, evals/proc/process_runner.h, at the "seccomp",
// "rlimits" and "unshare" levels; bubblewrap's --seccomp at "namespaces"),
// with no_new_privs set first so that an unprivileged process may install
// it. It holds for the program and every process it starts, and cannot be
// removed.
//
// What it refuses (the call fails with EPERM; the program sees an OSError):
//   * socket(): no network of any family (socketpair() stays: it reaches
//     nothing outside);
//   * setsid(), setpgid(): every descendant stays in the process group the
//     runner kills at the end;
//   * ptrace, process_vm_readv/writev, kcmp, pidfd_open/send_signal/getfd:
//     no reading or steering of other processes of the same uid;
//   * kill() of anything but its own process group (pid 0), tkill,
//     rt_sigqueueinfo and rt_tgsigqueueinfo: no signal to another process
//     (a neighbour answer, evalrun); tgkill, which raise() and
//     pthread_kill() use, stays (Landlock's signal scope, landlock_rules.h,
//     holds it to the sandbox where the kernel has it);
//   * unshare, setns, clone with a namespace flag, mount and the new mount
//     API, pivot_root, chroot: no namespaces or mounts;
//   * clone with CLONE_PARENT: a child made so would be its grandparent's
//     (evalrun's) child, outside the run's tree, a zombie evalrun never reaps;
//   * with kRefuseSysvIpc (levels without an IPC namespace): System V shared
//     memory, semaphores and message queues, which outlive every process;
//   * io_uring (its operations bypass the filter), bpf, perf_event_open,
//     userfaultfd, keyctl/add_key/request_key, kernel modules, kexec,
//     reboot, swapon/swapoff, acct.
// clone3 fails with ENOSYS (its flags cannot be inspected), so the C library
// falls back to clone. A call made through another ABI (x32, i386 on
// x86-64) kills the process.
//
// Errors: the hook returns an errno value (the runner then fails the start
// as Unavailable, naming "seccomp filter"): EINVAL where the kernel has no
// seccomp filters, ENOSYS on an architecture the filter is not written for
// (x86-64 and aarch64 are).
//
// Thread-safety: the filter is built once (thread-safe static) before any
// fork; the hook is async-signal-safe.
#ifndef EVALRUN_EVALS_SANDBOX_SECCOMP_FILTER_H_
#define EVALRUN_EVALS_SANDBOX_SECCOMP_FILTER_H_

#include <string>

namespace evalrun {

// kAllowSysvIpc where the run has an IPC namespace of its own (whose
// objects end with it), kRefuseSysvIpc where it shares the host's.
enum class SysvIpc { kAllowSysvIpc, kRefuseSysvIpc };

// The filter, built (once) now, for a hook's argument: pass it as
// ProcessSpec::child_hook_arg with InstallSeccompFilter as the hook. Null
// on an architecture the filter is not written for.
const void* SeccompFilterProgram(SysvIpc ipc = SysvIpc::kRefuseSysvIpc);

// The same program as bytes (struct sock_filter, in order), as bubblewrap's
// --seccomp reads it from a descriptor. Empty where there is no filter.
std::string SeccompFilterBytes(SysvIpc ipc);

// A ChildHook: sets no_new_privs and installs `program` (SeccompFilterProgram()).
int InstallSeccompFilter(const void* program);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_SECCOMP_FILTER_H_
