#include "evals/sandbox/unshare_child.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "evals/sandbox/seccomp_filter.h"

namespace evalrun {
namespace {

constexpr int kNamespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
// Where the new root is built, in the new mount namespace only.
constexpr const char* kStage = "/tmp";

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

// kStage + path into buf (512 bytes).
void Staged(const char* path, char* buf) {
  size_t a = strlen(kStage), b = strlen(path);
  memcpy(buf, kStage, a);
  memcpy(buf + a, path, b + 1);
}

// mkdir -p of every folder above `path` (and `path` itself when `self`).
int MakeDirs(const char* path, bool self) {
  char buf[512];
  size_t n = strlen(path);
  if (n >= sizeof buf) return ENAMETOOLONG;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    if (buf[i] == '\0' && !self) break;
    char c = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return errno;
    buf[i] = c;
  }
  return 0;
}

// One entry of the minimal root under kStage.
int PlaceStep(const UnshareRootStep& s) {
  char dst[512];
  Staged(s.path, dst);
  if (s.kind == RootEntry::kSymlink) {
    if (int err = MakeDirs(dst, false)) return err;
    return symlink(s.target, dst) == 0 ? 0 : errno;
  }
  if (int err = MakeDirs(dst, s.kind == RootEntry::kDir)) return err;
  if (s.kind == RootEntry::kFile) {
    int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    close(fd);
  }
  return mount(s.path, dst, nullptr, MS_BIND | MS_REC, nullptr) == 0 ? 0 : errno;
}

// The new root's tmpfs, its entries, the folders the first process mounts on.
int BuildRoot(const UnsharePlan& p) {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  if (mount("tmpfs", kStage, "tmpfs", MS_NOSUID | MS_NODEV, "size=1048576,mode=0755") != 0) return errno;
  for (int i = 0; i < p.step_count; ++i)
    if (int err = PlaceStep(p.steps[i])) return err;
  for (const char* dir : {"/tmp/tmp", "/tmp/proc", "/tmp/dev/shm"})
    if (int err = MakeDirs(dir, true)) return err;
  const char* links[][2] = {{"/proc/self/fd", "/tmp/dev/fd"},
                            {"/proc/self/fd/0", "/tmp/dev/stdin"},
                            {"/proc/self/fd/1", "/tmp/dev/stdout"},
                            {"/proc/self/fd/2", "/tmp/dev/stderr"}};
  for (const auto& l : links)
    if (symlink(l[0], l[1]) != 0) return errno;
  return 0;
}

// In the PID namespace's first process: its /proc, into the new root, all
// read-only but a private /tmp and /dev/shm.
int EnterRoot(const UnsharePlan& p) {
  if (mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return errno;
  if (chdir(kStage) != 0) return errno;
  if (syscall(SYS_pivot_root, ".", ".") != 0) return errno;
  if (umount2(".", MNT_DETACH) != 0) return errno;
  if (chdir("/") != 0) return errno;
#ifdef SYS_mount_setattr
  struct mount_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_RDONLY;
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof attr) != 0) return errno;
#else
  return ENOSYS;
#endif
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, p.tmpfs_options) != 0) return errno;
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=1048576,mode=1777") != 0) return errno;
  return chdir("/tmp") == 0 ? 0 : errno;
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

bool Fits(const std::string& text, size_t size) { return text.size() < size; }

}  // namespace

UnsharePlan MakeUnsharePlan(int uid, int gid, uint64_t tmpfs_bytes, const std::vector<RootEntry>& root,
                            const void* seccomp) {
  UnsharePlan p;
  snprintf(p.uid_map, sizeof p.uid_map, "%d %d 1\n", uid, uid);
  snprintf(p.gid_map, sizeof p.gid_map, "%d %d 1\n", gid, gid);
  snprintf(p.tmpfs_options, sizeof p.tmpfs_options, "size=%llu,mode=1777",
           static_cast<unsigned long long>(tmpfs_bytes));
  std::vector<RootEntry> entries = root;
  for (const std::string& dev : BoxDevices()) entries.push_back({RootEntry::kFile, dev, ""});
  for (const RootEntry& e : entries) {
    if (p.step_count == UnsharePlan::kMaxSteps || !Fits(e.path, 256) || !Fits(e.target, 256)) {
      p.too_long = true;
      break;
    }
    UnshareRootStep& s = p.steps[p.step_count++];
    s.kind = e.kind;
    memcpy(s.path, e.path.c_str(), e.path.size() + 1);
    memcpy(s.target, e.target.c_str(), e.target.size() + 1);
  }
  p.seccomp = seccomp;
  return p;
}

int UnshareNamespaces(const void* arg) {
  const UnsharePlan& p = *static_cast<const UnsharePlan*>(arg);
  if (p.too_long) return ENAMETOOLONG;
  // After a uid change the process is not dumpable, and its /proc/self
  // files (uid_map) are root's.
  if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return errno;
  if (unshare(kNamespaces) != 0) return errno;
  int err = WriteText("/proc/self/setgroups", "deny");
  if (err == 0) err = WriteText("/proc/self/uid_map", p.uid_map);
  if (err == 0) err = WriteText("/proc/self/gid_map", p.gid_map);
  if (err == 0) err = BuildRoot(p);
  if (err != 0) return err;
  pid_t child = fork();
  if (child < 0) return errno;
  if (child > 0) WaitAndMirror(child);
  // The PID namespace's first process.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (int e = EnterRoot(p)) return e;
  return p.seccomp ? InstallSeccompFilter(p.seccomp) : 0;
}

}  // namespace evalrun
