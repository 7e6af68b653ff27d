#include "evals/sandbox/run_box.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "evals/sandbox/box_cleanup.h"

namespace evalrun {

Status RunBox::Open(const RunBoxOptions& options, std::unique_ptr<RunBox>* out) {
  std::unique_ptr<RunBox> box(new RunBox());
  EVALRUN_RETURN_IF_ERROR(box->Lease(options));
  Status cg = BoxCgroup::Make("evalrun-box-" + std::to_string(box->uid_) + "-" + std::to_string(getpid()),
                              options.cgroup, &box->cgroup_);
  if (!cg.ok()) box->cgroup_note_ = cg.message();
  // No CPU share held by a group: one run at a time.
  if (!box->turn_ && (!box->cgroup_ || !box->cgroup_->limits_cpu())) box->turn_ = SerialSandboxTurn();
  if (options.private_dir) EVALRUN_RETURN_IF_ERROR(box->MakePrivateDir());
  *out = std::move(box);
  return Status::Ok();
}

Status RunBox::Lease(const RunBoxOptions& options) {
  if (geteuid() == 0) {
    EVALRUN_RETURN_IF_ERROR(LeaseSandboxUid(&lease_));
    uid_ = gid_ = lease_->uid();
    return Status::Ok();
  }
  uid_ = static_cast<int>(getuid());
  gid_ = static_cast<int>(getgid());
  if (options.shares_uid_without_userns) turn_ = SerialSandboxTurn();
  return Status::Ok();
}

Status RunBox::MakePrivateDir() {
  char dir[] = "/tmp/evalrun-box-XXXXXX";
  if (!mkdtemp(dir)) return Status::IoError(std::string("sandbox: private folder in /tmp: ") + strerror(errno));
  private_dir_ = dir;
  if (geteuid() == 0 && chown(dir, static_cast<uid_t>(uid_), static_cast<gid_t>(gid_)) != 0)
    return Status::IoError("sandbox: " + private_dir_ + ": chown: " + strerror(errno));
  return Status::Ok();
}

RunBox::~RunBox() {
  if (cgroup_) cgroup_->KillAll();
  if (lease_) {  // a uid of the run's own (root only)
    // A kill that ended every process has reaped them; one that could not
    // still leaves no zombie of the uid behind.
    if (!KillProcessesOfUid(uid_)) ReapZombieChildrenOfUid(uid_);
    RemoveSysvIpcOfUid(uid_);
  }
  cgroup_.reset();
  if (!private_dir_.empty()) RemoveTree(private_dir_);
}

}  // namespace evalrun
