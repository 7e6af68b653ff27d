// Who a sandboxed run is, so that one answer cannot reach another: as root,
// each run gets a uid (and gid) of its own, unused by anyone else on the
// machine while it runs, from kFirstSandboxUid on; the lease is an exclusive
// flock on a file named for the uid in a root-only folder
// (/tmp/.evalrun-sandbox-uids), so separate evalrun processes (a test suite
// under `ctest -j4`, two runs on one machine) never share one. A per-uid
// process limit (RLIMIT_NPROC) then binds each run alone: one answer's fork
// bomb cannot starve its neighbours, and a neighbour of another uid cannot
// be signalled, traced or read. Not root, evalrun cannot change uids:
// SerialSandboxTurn then lets one run at a time hold the turn (the levels
// without a user namespace take it).
//
// Errors: Unavailable when the lock folder is unsafe (not a root-owned
// 0700 folder) or every uid of the range is leased. Thread-safety: both may
// be called from several threads at once.
#ifndef EVALRUN_EVALS_SANDBOX_SANDBOX_UIDS_H_
#define EVALRUN_EVALS_SANDBOX_SANDBOX_UIDS_H_

#include <memory>

#include "evals/base/status.h"

namespace evalrun {

inline constexpr int kFirstSandboxUid = 1900000000;
inline constexpr int kSandboxUids = 4096;

// Held while the run lasts; releasing it frees the uid.
class SandboxUidLease {
 public:
  SandboxUidLease(int uid, int fd) : uid_(uid), fd_(fd) {}
  ~SandboxUidLease();
  SandboxUidLease(const SandboxUidLease&) = delete;
  SandboxUidLease& operator=(const SandboxUidLease&) = delete;
  int uid() const { return uid_; }

 private:
  int uid_, fd_;
};

Status LeaseSandboxUid(std::unique_ptr<SandboxUidLease>* out);

// The process-wide turn of runs that share evalrun's uid (held while it lives).
std::shared_ptr<void> SerialSandboxTurn();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_SANDBOX_UIDS_H_
