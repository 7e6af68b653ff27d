// What one sandboxed run holds while it lives, and its end (sandbox.h):
//   * who it runs as: as root, a uid of its own (sandbox_uids.h); else
//     evalrun's, one run at a time where nothing else separates runs;
//   * a private folder, the only place it may write at the levels without
//     a mount namespace ("seccomp", "rlimits"): made 0700 for that uid
//     under /tmp, its working directory, HOME and TMPDIR;
//   * a control group (box_cgroup.h) with the run's memory, process and CPU
//     limits, where evalrun can make one.
// Where no control group holds the run's CPU share, runs take one turn at
// a time (SerialSandboxTurn): one answer's processes then never slow a
// neighbour's into a time limit.
// The destructor ends the run: every process of the control group and, as
// root, of the uid; evalrun's zombie children of that uid reaped; as root,
// the uid's System V objects removed; the private folder removed; then the
// uid is free for another run.
//
// Errors: Open returns the uid lease's errors (Unavailable) and IoError when
// the private folder cannot be made. A control group that cannot be made is
// not an error: cgroup() is null and cgroup_note() says why.
// Thread-safety: Open may be called from several threads; a RunBox belongs
// to one run.
#ifndef EVALRUN_EVALS_SANDBOX_RUN_BOX_H_
#define EVALRUN_EVALS_SANDBOX_RUN_BOX_H_

#include <memory>
#include <string>

#include "evals/base/status.h"
#include "evals/sandbox/box_cgroup.h"
#include "evals/sandbox/sandbox_uids.h"

namespace evalrun {

struct RunBoxOptions {
  bool private_dir = false;  // make a private folder on the host
  bool shares_uid_without_userns = false;  // not root: runs of evalrun's uid with no user namespace
  BoxCgroupLimits cgroup;
};

class RunBox {
 public:
  static Status Open(const RunBoxOptions& options, std::unique_ptr<RunBox>* out);
  ~RunBox();
  RunBox(const RunBox&) = delete;
  RunBox& operator=(const RunBox&) = delete;

  int uid() const { return uid_; }
  int gid() const { return gid_; }
  const std::string& private_dir() const { return private_dir_; }  // "" without
  const BoxCgroup* cgroup() const { return cgroup_.get(); }
  const std::string& cgroup_note() const { return cgroup_note_; }

 private:
  RunBox() = default;
  Status Lease(const RunBoxOptions& options);
  Status MakePrivateDir();

  int uid_ = -1, gid_ = -1;
  std::unique_ptr<SandboxUidLease> lease_;
  std::shared_ptr<void> turn_;
  std::string private_dir_;
  std::unique_ptr<BoxCgroup> cgroup_;
  std::string cgroup_note_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_RUN_BOX_H_
