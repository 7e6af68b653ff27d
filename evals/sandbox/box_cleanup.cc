#include "evals/sandbox/box_cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace evalrun {
namespace {


// One SIGKILL to every process `uid` may signal, from a helper that takes
// the uid. False when the helper could not be made or take it.
bool SignalAllOfUid(int uid) {
  pid_t helper = fork();
  if (helper < 0) return false;
  if (helper == 0) {
    // Raw calls: glibc's wrappers would ask the parent's other threads
    // (gone in this child) to change their ids too.
    if (syscall(SYS_setresgid, uid, uid, uid) != 0 || syscall(SYS_setresuid, uid, uid, uid) != 0) _exit(2);
    _exit(kill(-1, SIGKILL) == 0 || errno == ESRCH ? 0 : 1);
  }
  int status = 0;
  while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Walks /proc: reaps evalrun's ended children of `uid`; true when a process
// of `uid` is still running (a zombie of another parent does not count).
bool ReapAndLookForUid(int uid) {
  DIR* proc = opendir("/proc");
  if (!proc) return false;
  const pid_t self = getpid();
  bool running = false;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    ProcStatus s;
    if (!ReadProcStatus(e->d_name, &s) || s.uid != uid) continue;
    if (s.state != 'Z')
      running = true;
    else if (s.ppid == self)
      waitpid(static_cast<pid_t>(std::atol(e->d_name)), nullptr, WNOHANG);
  }
  closedir(proc);
  return running;
}

}  // namespace

bool KillProcessesOfUid(int uid) {
  if (uid <= 0 || uid == static_cast<int>(getuid())) return false;
  for (int round = 0; round < 200; ++round) {
    if (!SignalAllOfUid(uid)) return false;
    if (!ReapAndLookForUid(uid)) return true;
    usleep(2000);
  }
  return false;
}

void ReapZombieChildrenOfUid(int uid) { ReapAndLookForUid(uid); }

bool ReadProcStatus(const std::string& pid, ProcStatus* s) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    any = true;
    if (line.rfind("PPid:", 0) == 0) s->ppid = static_cast<pid_t>(std::atol(line.c_str() + 5));
    if (line.rfind("State:", 0) == 0 && line.size() > 7) s->state = line[line.find_first_not_of(" \t", 6)];
    if (line.rfind("Uid:", 0) == 0) s->uid = std::atol(line.c_str() + 4);
    if (line.rfind("Threads:", 0) == 0) s->threads = std::atoi(line.c_str() + 8);
  }
  return any;
}

std::vector<SysvObject> ListSysvObjects() {
  std::vector<SysvObject> out;
  for (const char* kind : {"shm", "sem", "msg"}) {
    std::ifstream in(std::string("/proc/sysvipc/") + kind);
    std::string header, line;
    if (!std::getline(in, header)) continue;
    std::vector<std::string> names;  // the columns are named on the first line
    std::istringstream h(header);
    for (std::string n; h >> n;) names.push_back(n);
    while (std::getline(in, line)) {
      std::istringstream row(line);
      SysvObject o;
      o.kind = kind;
      std::string cell;
      for (size_t i = 0; i < names.size() && row >> cell; ++i) {
        if (names[i] == "key") o.key = std::atol(cell.c_str());
        if (i == 1) o.id = std::atoi(cell.c_str());  // shmid, semid, msqid
        if (names[i] == "uid") o.uid = std::atol(cell.c_str());
        if (names[i] == "cuid") o.cuid = std::atol(cell.c_str());
      }
      if (o.id >= 0) out.push_back(o);
    }
  }
  return out;
}

void RemoveSysvIpcOfUid(int uid) {
  for (const SysvObject& o : ListSysvObjects()) {
    if (o.uid != uid && o.cuid != uid) continue;
    if (o.kind == "shm") shmctl(o.id, IPC_RMID, nullptr);
    if (o.kind == "sem") semctl(o.id, 0, IPC_RMID);
    if (o.kind == "msg") msgctl(o.id, IPC_RMID, nullptr);
  }
}

void RemoveTree(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // removes links themselves, never what they point at
}

}  // namespace evalrun
