#include "evals/run/shard_auto.h"

#include <cerrno>
#include <cstdlib>

namespace evalrun {
namespace {

constexpr const char* kFlag = "--shard auto: ";
constexpr long kMaxShards = 100000;

// A whole number 0..kMaxShards in variable `name`; false with `*st` set when
// it is set but not one. `*set` says whether it is set at all.
bool ReadCount(const EnvLookup& env, const char* name, long* out, bool* set, Status* st) {
  const char* v = env(name);
  *set = v != nullptr && *v != '\0';
  if (!*set) return true;
  const std::string s = v;
  errno = 0;
  char* end = nullptr;
  const long n = std::strtol(s.c_str(), &end, 10);
  if (s.find_first_not_of("0123456789") != std::string::npos || errno != 0 || *end != '\0' || n > kMaxShards) {
    *st = Status::InvalidInput(std::string(kFlag) + name + " is \"" + s + "\", not a whole number 0 to " +
                               std::to_string(kMaxShards));
    return false;
  }
  *out = n;
  return true;
}

std::string Var(const char* name, long v) { return std::string(name) + "=" + std::to_string(v); }

// N of a Slurm array from EVALRUN_SHARD_COUNT or the array's bounds.
Status SlurmCount(const EnvLookup& env, bool count_set, long count_env, long* n, std::string* from) {
  long lo = 0, hi = 0, tasks = 0;
  bool lo_set = false, hi_set = false, tasks_set = false;
  Status st;
  if (!ReadCount(env, "SLURM_ARRAY_TASK_MIN", &lo, &lo_set, &st) ||
      !ReadCount(env, "SLURM_ARRAY_TASK_MAX", &hi, &hi_set, &st) ||
      !ReadCount(env, "SLURM_ARRAY_TASK_COUNT", &tasks, &tasks_set, &st))
    return st;
  const bool whole = lo_set && hi_set && lo == 1 && (!tasks_set || tasks == hi);
  if (count_set) {
    if (whole && hi != count_env)
      return Status::InvalidInput(std::string(kFlag) + "the job array is 1-" + std::to_string(hi) + " but " +
                                  kShardCountEnv + " is " + std::to_string(count_env) + "; make them agree");
    *n = count_env;
    *from += ", " + Var(kShardCountEnv, count_env);
    return Status::Ok();
  }
  if (!whole) {
    const std::string bounds = lo_set && hi_set ? std::to_string(lo) + "-" + std::to_string(hi) : "unknown";
    return Status::InvalidInput(std::string(kFlag) + "the job array (" + bounds + (tasks_set ? ", " + std::to_string(tasks) + " tasks" : "") +
                                ") is not a whole 1-N array, so it does not tell N (a task submitted again "
                                "alone is an array of one): set " + kShardCountEnv + "=N, or use --shard I/N");
  }
  *n = hi;
  *from += ", " + Var("SLURM_ARRAY_TASK_MAX", hi);
  return Status::Ok();
}

}  // namespace

Status ResolveAutoShard(const EnvLookup& env, ShardSpec* out, std::string* from) {
  long slurm = 0, k8s = 0, count_env = 0, n = 0, i = 0;
  bool slurm_set = false, k8s_set = false, count_set = false;
  Status st;
  if (!ReadCount(env, "SLURM_ARRAY_TASK_ID", &slurm, &slurm_set, &st) ||
      !ReadCount(env, "JOB_COMPLETION_INDEX", &k8s, &k8s_set, &st) ||
      !ReadCount(env, kShardCountEnv, &count_env, &count_set, &st))
    return st;
  if (count_set && count_env < 1)
    return Status::InvalidInput(std::string(kFlag) + kShardCountEnv + " must be at least 1");
  if (!slurm_set && !k8s_set)
    return Status::InvalidInput(std::string(kFlag) + "neither SLURM_ARRAY_TASK_ID (a task of a Slurm job array) nor "
                                "JOB_COMPLETION_INDEX (a pod of a Kubernetes Indexed Job) is set; give the shard "
                                "as --shard I/N");
  if (slurm_set && k8s_set)
    return Status::InvalidInput(std::string(kFlag) + "both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set; "
                                "give the shard as --shard I/N");
  std::string src;
  if (slurm_set) {
    src = Var("SLURM_ARRAY_TASK_ID", slurm);
    if (slurm == 0)
      return Status::InvalidInput(std::string(kFlag) + "SLURM_ARRAY_TASK_ID is 0: the array must count from 1 "
                                  "(sbatch --array=1-N), its task id being the shard");
    if (Status c = SlurmCount(env, count_set, count_env, &n, &src); !c.ok()) return c;
    i = slurm;
  } else {
    src = Var("JOB_COMPLETION_INDEX", k8s);
    if (!count_set)
      return Status::InvalidInput(std::string(kFlag) + "JOB_COMPLETION_INDEX is set but " + kShardCountEnv +
                                  " is not: Kubernetes does not tell a pod the Job's completions; set " +
                                  kShardCountEnv + " to spec.completions in the pod template's env");
    n = count_env;
    src += ", " + Var(kShardCountEnv, count_env);
    i = k8s + 1;
  }
  if (i > n)
    return Status::InvalidInput(std::string(kFlag) + "shard " + std::to_string(i) + " of " + std::to_string(n) +
                                " (" + src + "): the index is past the count");
  out->index = static_cast<int>(i);
  out->count = static_cast<int>(n);
  if (from) *from = src;
  return Status::Ok();
}

}  // namespace evalrun
