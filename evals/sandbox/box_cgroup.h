// A control group per sandboxed run (evals/sandbox/sandbox.h), made where
// evalrun may make one (as root, or where the hierarchy is delegated to its
// user), under the group evalrun itself is in:
//   * cgroup v1 (memory, pids, cpu controllers, each where mounted):
//     memory.limit_in_bytes (and memsw: no swap beyond it) on the whole run
//     (every process, memory files and shared memory included), pids.max,
//     and a CPU quota (cpu.cfs_quota_us) of `cpus` processors;
//   * cgroup v2 (the unified mount): the same limits (memory.max,
//     memory.swap.max 0, pids.max, cpu.max) where those controllers are
//     enabled for evalrun's children, and in any case cgroup.kill, which
//     ends every process of the group at once.
// The run's first process joins before it gives up root (JoinBoxCgroup, a
// pre-user hook): everything it starts stays in the group, a setsid or
// double-forked daemon included, and is ended by KillAll. The destructor
// ends them all, waits (bounded) for the groups to empty and removes them.
//
// What a made group holds is in Describe(): "v1 memory,pids,cpu; v2 kill".
//
// Errors: Make returns Unavailable when no hierarchy lets evalrun make a
// group (not root, no delegation, no cgroup file system), naming why.
// Thread-safety: Make may be called from several threads; one BoxCgroup is
// used by one thread; JoinBoxCgroup is async-signal-safe.
#ifndef EVALRUN_EVALS_SANDBOX_BOX_CGROUP_H_
#define EVALRUN_EVALS_SANDBOX_BOX_CGROUP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

struct BoxCgroupLimits {
  uint64_t memory_bytes = 2ull << 30;
  int processes = 64;
  double cpus = 1;  // processors' worth of CPU time per period
};

// The groups' cgroup.procs paths, for the child to write "0" into.
struct BoxCgroupJoin {
  static constexpr int kMax = 6;
  char procs[kMax][512] = {};
  int count = 0;
};

class BoxCgroup {
 public:
  // A group named `name` (unique while it lives, e.g. "evalrun-box-<uid>")
  // in each hierarchy evalrun can write, with `limits`.
  static Status Make(const std::string& name, const BoxCgroupLimits& limits, std::unique_ptr<BoxCgroup>* out);
  ~BoxCgroup();
  BoxCgroup(const BoxCgroup&) = delete;
  BoxCgroup& operator=(const BoxCgroup&) = delete;

  const BoxCgroupJoin& join() const { return join_; }
  // SIGKILL to every process of the group, until none is left (bounded:
  // about two seconds). True when the group is empty.
  bool KillAll();
  // Whether the CPU quota binds (a controller holds it).
  bool limits_cpu() const { return limits_cpu_; }
  std::string Describe() const { return describe_; }

 private:
  BoxCgroup() = default;
  std::vector<std::string> dirs_;  // every group made, v2 first when there is one
  std::string kill_file_;          // v2's cgroup.kill, "" without
  BoxCgroupJoin join_;
  bool limits_cpu_ = false;
  std::string describe_;
  friend struct BoxCgroupBuilder;
};

// A pre-user ChildHook: writes "0" to each of join's cgroup.procs (arg is
// a BoxCgroupJoin*). 0 or an errno value.
int JoinBoxCgroup(const void* join);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_BOX_CGROUP_H_
