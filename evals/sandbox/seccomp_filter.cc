#include "evals/sandbox/seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <vector>

namespace evalrun {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
constexpr bool kKnownArch = true;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
constexpr bool kKnownArch = true;
#else
constexpr unsigned kArch = 0;
constexpr bool kKnownArch = false;
#endif

// The x32 ABI's calls on x86-64 carry this bit.
constexpr unsigned kX32Bit = 0x40000000;

constexpr unsigned kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                     CLONE_NEWNET | CLONE_NEWCGROUP;

// Refused with EPERM (seccomp_filter.h says why each).
const std::vector<long>& RefusedCalls() {
  static const std::vector<long> calls = {
    SYS_socket, SYS_setsid, SYS_setpgid, SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_tkill,
    SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo, SYS_kcmp,
#ifdef SYS_pidfd_open
    SYS_pidfd_open, SYS_pidfd_send_signal, SYS_pidfd_getfd,
#endif
    SYS_unshare, SYS_setns, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot,
    SYS_bpf, SYS_perf_event_open, SYS_userfaultfd, SYS_keyctl, SYS_add_key, SYS_request_key,
    SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_reboot,
    SYS_swapon, SYS_swapoff, SYS_acct,
#ifdef SYS_kexec_file_load
    SYS_kexec_file_load,
#endif
#ifdef SYS_io_uring_setup
    SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
#endif
#ifdef SYS_open_tree
    SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick,
#endif
#ifdef SYS_mount_setattr
    SYS_mount_setattr,
#endif
  };
  return calls;
}

// System V IPC: refused where the run shares the host's IPC namespace.
const std::vector<long>& SysvIpcCalls() {
  static const std::vector<long> calls = {SYS_shmget, SYS_shmat,  SYS_shmctl, SYS_shmdt,  SYS_semget,
                                          SYS_semop,  SYS_semctl, SYS_msgget, SYS_msgsnd, SYS_msgrcv,
                                          SYS_msgctl,
#ifdef SYS_semtimedop
                                          SYS_semtimedop,
#endif
  };
  return calls;
}

sock_filter Stmt(unsigned short code, unsigned k) { return BPF_STMT(code, k); }
sock_filter Jump(unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
  return BPF_JUMP(code, k, jt, jf);
}

void RefuseEach(const std::vector<long>& calls, std::vector<sock_filter>* f) {
  for (long nr : calls) {
    f->push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 1));
    f->push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)));
  }
}

std::vector<sock_filter> BuildFilter(SysvIpc ipc) {
  std::vector<sock_filter> f;
  f.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  f.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  f.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  f.push_back(Jump(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  // kill(pid, sig) only to its own process group (pid 0): never another
  // process's (a neighbour's, evalrun's). tgkill (raise, pthread_kill) stays.
  f.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_kill, 0, 4));
  f.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
  f.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)));
  RefuseEach(RefusedCalls(), &f);
  if (ipc == SysvIpc::kRefuseSysvIpc) RefuseEach(SysvIpcCalls(), &f);
#ifdef SYS_clone3
  f.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
#endif
  // clone with a namespace flag or CLONE_PARENT in its first argument's low
  // word (little endian).
  f.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3));
  f.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
  f.push_back(Jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags | CLONE_PARENT, 0, 1));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)));
  f.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return f;
}

}  // namespace

const void* SeccompFilterProgram(SysvIpc ipc) {
  if (!kKnownArch) return nullptr;
  static const std::vector<sock_filter> allow = BuildFilter(SysvIpc::kAllowSysvIpc);
  static const std::vector<sock_filter> refuse = BuildFilter(SysvIpc::kRefuseSysvIpc);
  static const sock_fprog allow_program = {static_cast<unsigned short>(allow.size()),
                                           const_cast<sock_filter*>(allow.data())};
  static const sock_fprog refuse_program = {static_cast<unsigned short>(refuse.size()),
                                            const_cast<sock_filter*>(refuse.data())};
  return ipc == SysvIpc::kAllowSysvIpc ? &allow_program : &refuse_program;
}

std::string SeccompFilterBytes(SysvIpc ipc) {
  const auto* program = static_cast<const sock_fprog*>(SeccompFilterProgram(ipc));
  if (program == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(program->filter), program->len * sizeof(sock_filter));
}

int InstallSeccompFilter(const void* program) {
  if (program == nullptr) return ENOSYS;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, program) != 0) return errno;
  return 0;
}

}  // namespace evalrun
