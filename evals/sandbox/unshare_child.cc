#include "evals/sandbox/unshare_child.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace evalrun {
namespace {

constexpr int kNamespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;

// Writes `text` to `path`: 0 or an errno value. Async-signal-safe.
int WriteText(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const size_t n = strlen(text);
  ssize_t put = write(fd, text, n);
  int err = put == static_cast<ssize_t>(n) ? 0 : (put < 0 ? errno : EIO);
  close(fd);
  return err;
}

// Every mount of this (new) mount namespace private and read-only, then a
// tmpfs at /tmp.
int MountReadOnlyWithTmpfs(const UnsharePlan& p) {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
#ifdef SYS_mount_setattr
  struct mount_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_RDONLY;
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof attr) != 0) return errno;
#else
  return ENOSYS;
#endif
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, p.tmpfs_options) != 0) return errno;
  return 0;
}

// The process the runner started, once the namespace's first process runs:
// it waits for it and ends as it did.
[[noreturn]] void WaitAndMirror(pid_t child) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 0U, ~0U, 0U) != 0)
#endif
    for (int fd = 0; fd < 1024; ++fd) close(fd);
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) _exit(127);
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

}  // namespace

UnsharePlan MakeUnsharePlan(int uid, int gid, uint64_t tmpfs_bytes) {
  UnsharePlan p;
  snprintf(p.uid_map, sizeof p.uid_map, "%d %d 1\n", uid, uid);
  snprintf(p.gid_map, sizeof p.gid_map, "%d %d 1\n", gid, gid);
  snprintf(p.tmpfs_options, sizeof p.tmpfs_options, "size=%llu,mode=1777",
           static_cast<unsigned long long>(tmpfs_bytes));
  return p;
}

int UnshareNamespaces(const void* arg) {
  const UnsharePlan& p = *static_cast<const UnsharePlan*>(arg);
  // After a uid change the process is not dumpable, and its /proc/self
  // files (uid_map) are root's.
  if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return errno;
  if (unshare(kNamespaces) != 0) return errno;
  int err = WriteText("/proc/self/setgroups", "deny");
  if (err == 0) err = WriteText("/proc/self/uid_map", p.uid_map);
  if (err == 0) err = WriteText("/proc/self/gid_map", p.gid_map);
  if (err == 0) err = MountReadOnlyWithTmpfs(p);
  if (err != 0) return err;
  pid_t child = fork();
  if (child < 0) return errno;
  if (child > 0) WaitAndMirror(child);
  // The PID namespace's first process.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return errno;
  if (chdir("/tmp") != 0) return errno;
  return 0;
}

}  // namespace evalrun
