// A job's folder, <out>/<job>/, owned by one evalrun process at a time.
//
// Ownership is an advisory lock: flock(LOCK_EX) on <job>/evalrun.lock, held
// from Open() until the JobDir is destroyed (or the process dies: the kernel
// releases it). The holder writes its PID into the file, and empties it
// again on a clean release; a second process asking for the same job is
// refused (InvalidInput) with that PID.
//
// Job names: an explicit name (--job) is used as it is: a new folder, or an
// existing evalrun job (which the caller resumes). Without one, the name is
// `default_name` (<card>-<UTC time>) and the folder must be new: when it
// already exists, "-2", "-3", ... is appended, each claimed with mkdir(2),
// which only one process can win.
//
// Nothing is left behind by a start that fails: unless Keep() was called,
// the destructor removes what Open() created (the lock file and the folders
// it made, when they hold nothing else). A folder that already existed, or
// that now holds other files (answers, the managed engine's server.log), is
// never removed.
//
// Not thread-safe; one JobDir per job and process.
#ifndef EVALRUN_EVALS_RUN_JOB_DIR_H_
#define EVALRUN_EVALS_RUN_JOB_DIR_H_

#include <string>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

class JobDir {
 public:
  JobDir() = default;
  ~JobDir();
  JobDir(const JobDir&) = delete;
  JobDir& operator=(const JobDir&) = delete;

  // Claims <out_dir>/<job> (job empty: a fresh name from default_name) and
  // takes its lock. InvalidInput, naming the folder, when the job name is
  // not a plain name, the folder cannot be made or written, holds files
  // that are not an evalrun job's (no run.json), or another process holds
  // the lock ("in use by PID n").
  Status Open(const std::string& out_dir, const std::string& job, const std::string& default_name);

  // The run has started (run.json is written): the folder is kept.
  void Keep() { keep_ = true; }

  const std::string& job() const { return job_; }
  const std::string& path() const { return path_; }

  // The lock file's name inside the job folder.
  static constexpr const char* kLockFile = "evalrun.lock";

 private:
  Status Lock();
  void Release();

  std::string job_, path_;
  int fd_ = -1;
  bool keep_ = false;
  bool created_lock_ = false;
  std::vector<std::string> created_dirs_;  // outermost first
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_JOB_DIR_H_
