// The sandbox's "seccomp" level (sandbox_level.h): a raw BPF seccomp filter
// installed in the child just before exec (a ProcessSpec::child_hook,
// evals/proc/process_runner.h), with no_new_privs set first so that an
// unprivileged process may install it. It holds for the program and every
// process it starts, and cannot be removed.
//
// What it refuses (the call fails with EPERM; the program sees an OSError):
//   * socket(): no network of any family (socketpair() stays: it reaches
//     nothing outside);
//   * setsid(), setpgid(): every descendant stays in the process group the
//     runner kills at the end;
//   * ptrace, process_vm_readv/writev, kcmp, pidfd_open/send_signal/getfd:
//     no reading or steering of other processes of the same uid;
//   * kill() of anything but its own process group (pid 0), and tkill: no
//     signal to another process (a neighbour answer, evalrun); tgkill, which
//     raise() and pthread_kill() use, stays;
//   * unshare, setns, clone with a namespace flag, mount and the new mount
//     API, pivot_root, chroot: no namespaces or mounts;
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

namespace evalrun {

// The filter, built (once) now, for a hook's argument: pass it as
// ProcessSpec::child_hook_arg with InstallSeccompFilter as the hook. Null
// on an architecture the filter is not written for.
const void* SeccompFilterProgram();

// A ChildHook: sets no_new_privs and installs `program` (SeccompFilterProgram()).
int InstallSeccompFilter(const void* program);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_SECCOMP_FILTER_H_
