// `--shard auto`: the shard I/N from the task index a cluster engine gives
// each task of a sharded run, so that one job script serves every task.
//
// - Slurm job array (SLURM_ARRAY_TASK_ID set): I is the task id itself, so
//   the array counts from 1 (`sbatch --array=1-N`) and a task submitted
//   again alone (`--array=3`) is still shard 3. N is EVALRUN_SHARD_COUNT
//   when set, else the array's bounds: SLURM_ARRAY_TASK_MIN must be 1 and
//   SLURM_ARRAY_TASK_COUNT (when set) equal SLURM_ARRAY_TASK_MAX, the whole
//   1-N, and N is SLURM_ARRAY_TASK_MAX. A task submitted alone (MIN = MAX)
//   does not tell N: it is refused unless EVALRUN_SHARD_COUNT is set. When
//   both are there and the array is a whole 1-M, M must equal the count.
// - Kubernetes Indexed Job (JOB_COMPLETION_INDEX set, 0-based): I is the
//   index + 1. Kubernetes gives a pod no variable with the Job's
//   completions, so N is EVALRUN_SHARD_COUNT, which the Job's pod template
//   sets to spec.completions; refused without it.
//
// Refused with a message naming the variables when neither index is set,
// when both are, or when a value is not a count or out of range.
//
// Thread-safety: pure; the environment is read through `env`.
#ifndef EVALRUN_EVALS_RUN_SHARD_AUTO_H_
#define EVALRUN_EVALS_RUN_SHARD_AUTO_H_

#include <functional>
#include <string>

#include "evals/base/status.h"
#include "evals/run/shard.h"

namespace evalrun {

inline constexpr const char* kShardCountEnv = "EVALRUN_SHARD_COUNT";

// A variable's value, or nullptr when it is not set (std::getenv's contract).
using EnvLookup = std::function<const char*(const char* name)>;

// The shard of this task. `from` (may be null) gets the variables it came
// from, for the run's log ("SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_MAX=4").
Status ResolveAutoShard(const EnvLookup& env, ShardSpec* out, std::string* from);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_SHARD_AUTO_H_
