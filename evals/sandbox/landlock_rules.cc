#include "evals/sandbox/landlock_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace evalrun {
namespace {

// The rights of each ABI (the kernel's Documentation/userspace-api/landlock.rst);
// the constants past the headers of Debian 12 are written out here.
constexpr uint64_t kFsExecute = 1ULL << 0, kFsWriteFile = 1ULL << 1, kFsReadFile = 1ULL << 2,
                   kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;  // execute .. make_sym
constexpr uint64_t kFsRefer = 1ULL << 13, kFsTruncate = 1ULL << 14, kFsIoctlDev = 1ULL << 15;
constexpr uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0, kScopeSignal = 1ULL << 1;

// struct landlock_ruleset_attr as of ABI 6; the size given tells the kernel
// which fields it may read.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};

uint64_t HandledFs(int abi) {
  uint64_t fs = kFsAbi1;
  if (abi >= 2) fs |= kFsRefer;
  if (abi >= 3) fs |= kFsTruncate;
  if (abi >= 5) fs |= kFsIoctlDev;
  return fs;
}

// The rights a rule on a file (not a folder) may carry.
uint64_t FileRights(uint64_t rights) {
  return rights & (kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev);
}

Status AddPathRule(int ruleset, const std::string& path, uint64_t rights) {
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();  // nothing there to allow
    return Status::IoError("landlock: " + path + ": " + strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights = FileRights(rights);
  landlock_path_beneath_attr rule;
  memset(&rule, 0, sizeof rule);
  rule.allowed_access = rights;
  rule.parent_fd = fd;
  long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  int err = errno;
  close(fd);
  if (rc != 0) return Status::IoError("landlock: rule for " + path + ": " + strerror(err));
  return Status::Ok();
}

}  // namespace

int LandlockAbi() {
  static const int abi = [] {
    long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v > 0 ? static_cast<int>(v) : 0;
  }();
  return abi;
}

Status MakeLandlockRuleset(const std::vector<RootEntry>& root, const std::string& private_dir, int* ruleset_fd) {
  *ruleset_fd = -1;
  const int abi = LandlockAbi();
  if (abi == 0) return Status::Unavailable("landlock: not in this kernel (or not enabled among its security modules)");
  RulesetAttr attr;
  attr.handled_access_fs = HandledFs(abi);
  size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof attr;
  }
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (fd < 0) return Status::Unavailable(std::string("landlock: create_ruleset: ") + strerror(errno));
  const uint64_t read_exec = kFsExecute | kFsReadFile | kFsReadDir;
  Status st;
  for (const RootEntry& e : root)
    if (st.ok() && e.kind != RootEntry::kSymlink) st = AddPathRule(fd, e.path, read_exec);
  for (const std::string& dev : BoxDevices())
    if (st.ok()) st = AddPathRule(fd, dev, kFsReadFile | kFsWriteFile);
  if (st.ok()) st = AddPathRule(fd, private_dir, attr.handled_access_fs);
  if (!st.ok()) {
    close(fd);
    return st;
  }
  *ruleset_fd = fd;
  return Status::Ok();
}

int RestrictWithLandlock(const LandlockHookPlan& plan) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (syscall(SYS_landlock_restrict_self, plan.ruleset_fd, 0) != 0) return errno;
  close(plan.ruleset_fd);
  return 0;
}

}  // namespace evalrun
