#include "evals/run/job_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace evalrun {
namespace {

std::string Errno() { return std::strerror(errno); }

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The names in a folder, without "." and "..".
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

// mkdir -p `path`, adding each folder it makes to *created (outermost
// first). The Status names `path`.
Status MakeDirsRecorded(const std::string& path, std::vector<std::string>* created) {
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) == 0) {
      created->push_back(cur);
    } else if (errno != EEXIST || !IsDir(cur)) {
      if (errno == EEXIST) errno = ENOTDIR;
      return Status::InvalidInput(path + ": cannot create folder: " + Errno());
    }
  }
  return Status::Ok();
}

}  // namespace

JobDir::~JobDir() { Release(); }

Status JobDir::Open(const std::string& out_dir, const std::string& job, const std::string& default_name) {
  if (!job.empty() && (job.find('/') != std::string::npos || job == "." || job == ".."))
    return Status::InvalidInput("--job: a job name may not contain '/' or be \".\" or \"..\"");
  const std::string out = out_dir.empty() ? "." : out_dir;
  if (!job.empty()) {
    job_ = job;
    path_ = out + "/" + job;
    if (IsDir(path_) && ::access((path_ + "/run.json").c_str(), F_OK) != 0) {
      // Only evalrun's own start files (a failed start with a managed
      // engine keeps its log) may be there without run.json.
      for (const std::string& n : Entries(path_))
        if (n != kLockFile && n != "server.log")
          return Status::InvalidInput(path_ + ": exists and is not an evalrun job (no run.json); "
                                      "choose another --job or --out");
    }
    Status st = MakeDirsRecorded(path_, &created_dirs_);
    if (!st.ok()) return Status::InvalidInput(st.message() + " (--out " + out_dir + ")");
  } else {
    Status st = MakeDirsRecorded(out, &created_dirs_);
    if (!st.ok()) return Status::InvalidInput(st.message() + " (--out " + out_dir + ")");
    // mkdir(2) either makes the folder or fails: one process wins each name.
    for (int n = 1; job_.empty(); ++n) {
      if (n > 1000) return Status::InvalidInput(out + "/" + default_name + ": 1000 jobs of that name already exist");
      const std::string name = n == 1 ? default_name : default_name + "-" + std::to_string(n);
      const std::string path = out + "/" + name;
      if (::mkdir(path.c_str(), 0755) == 0) {
        created_dirs_.push_back(path);
        job_ = name;
        path_ = path;
      } else if (errno != EEXIST) {
        return Status::InvalidInput(path + ": cannot create folder: " + Errno() + " (--out " + out_dir + ")");
      }
    }
  }
  return Lock();
}

namespace {

// The PID written in the lock file ("" when none).
std::string LockHolder(int fd) {
  char buf[32] = {0};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

// Takes the lock. When it is held but the evalrun that wrote the file is
// gone (killed), what holds it is a process that evalrun had just forked
// (a grader between fork and exec, which then execs or dies with its
// parent): wait up to 5 s for it to let go. False with errno set otherwise.
bool LockOrWaitForOrphans(int fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
  if (errno != EWOULDBLOCK) return false;
  const std::string holder = LockHolder(fd);
  char* end = nullptr;
  const long pid = holder.empty() ? 0 : std::strtol(holder.c_str(), &end, 10);
  if (pid <= 0 || *end != '\0' || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) {
    errno = EWOULDBLOCK;
    return false;
  }
  for (int i = 0; i < 100; ++i) {
    ::usleep(50 * 1000);
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
  }
  errno = EWOULDBLOCK;
  return false;
}

}  // namespace

Status JobDir::Lock() {
  const std::string lock_path = path_ + "/" + kLockFile;
  // A holder that gave up removes its lock file; a lock taken on a file no
  // longer at the path is taken again on the new one.
  for (int attempt = 0; attempt < 10; ++attempt) {
    created_lock_ = false;
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      created_lock_ = true;
    } else if (errno == EEXIST) {
      fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
    }
    if (fd < 0) {
      if (errno == ENOENT) continue;  // removed between the two opens
      return Status::InvalidInput(path_ + ": output folder is not writable (" + lock_path + ": " + Errno() + ")");
    }
    if (!LockOrWaitForOrphans(fd)) {
      const int e = errno;
      const std::string pid = LockHolder(fd);
      ::close(fd);
      if (e != EWOULDBLOCK)
        return Status::InvalidInput(lock_path + ": cannot lock: " + std::strerror(e));
      return Status::InvalidInput(path_ + ": the job is in use by another evalrun (PID " +
                                  (pid.empty() ? std::string("unknown") : pid) + " holds " + lock_path +
                                  "); wait for it to finish, or choose another --job");
    }
    struct stat held, now;
    if (::fstat(fd, &held) != 0 || ::stat(lock_path.c_str(), &now) != 0 || held.st_ino != now.st_ino ||
        held.st_dev != now.st_dev) {
      ::close(fd);
      continue;
    }
    fd_ = fd;
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
      return Status::InvalidInput(lock_path + ": cannot write: " + Errno());
    return Status::Ok();
  }
  return Status::InvalidInput(lock_path + ": the lock file keeps being replaced; is another evalrun starting "
                              "and stopping this job?");
}

void JobDir::Release() {
  if (!keep_) {
    // Only while holding the lock: then nobody else is using the file.
    if (fd_ >= 0 && created_lock_) ::unlink((path_ + "/" + kLockFile).c_str());
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it)
      if (::rmdir(it->c_str()) != 0) break;  // not empty: kept, and so are the folders above it
    created_dirs_.clear();
  }
  if (fd_ < 0) return;
  if (keep_ || !created_lock_) (void)!::ftruncate(fd_, 0);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace evalrun
