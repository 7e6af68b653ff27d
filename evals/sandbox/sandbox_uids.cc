#include "evals/sandbox/sandbox_uids.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

namespace evalrun {
namespace {

constexpr const char* kLockDir = "/tmp/.evalrun-sandbox-uids";

Status SafeLockDir() {
  if (mkdir(kLockDir, 0700) != 0 && errno != EEXIST)
    return Status::Unavailable(std::string("sandbox uids: ") + kLockDir + ": " + strerror(errno));
  struct stat st;
  if (lstat(kLockDir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0077) != 0)
    return Status::Unavailable(std::string("sandbox uids: ") + kLockDir +
                               " is not a folder of root's that only root can use; remove it");
  return Status::Ok();
}

}  // namespace

SandboxUidLease::~SandboxUidLease() {
  if (fd_ >= 0) close(fd_);  // the flock goes with it
}

Status LeaseSandboxUid(std::unique_ptr<SandboxUidLease>* out) {
  static std::atomic<unsigned> next{static_cast<unsigned>(getpid()) * 97u};
  EVALRUN_RETURN_IF_ERROR(SafeLockDir());
  for (int tries = 0; tries < kSandboxUids; ++tries) {
    const int uid = kFirstSandboxUid + static_cast<int>(next++ % kSandboxUids);
    const std::string path = std::string(kLockDir) + "/" + std::to_string(uid);
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      *out = std::make_unique<SandboxUidLease>(uid, fd);
      return Status::Ok();
    }
    close(fd);
  }
  return Status::Unavailable("sandbox uids: every one of " + std::to_string(kSandboxUids) + " uids is in use");
}

std::shared_ptr<void> SerialSandboxTurn() {
  static std::mutex turn;
  return std::make_shared<std::unique_lock<std::mutex>>(turn);
}

}  // namespace evalrun
