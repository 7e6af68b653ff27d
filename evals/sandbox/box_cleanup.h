// The end of a sandboxed run: what an answer left behind is removed, so
// that nothing of it outlives its grading (evals/sandbox/sandbox.h).
//
//   KillProcessesOfUid   as root: a helper process takes the run's uid and
//                        sends SIGKILL to every process that uid may signal
//                        (kill(-1)), and evalrun reaps those that were its
//                        children (with evalrun a child subreaper, every
//                        orphan of a run is), until none is running: a
//                        daemon that left the process group, the session
//                        and the control group is still the uid's;
//   ReapZombieChildrenOfUid  evalrun's own children of that uid that have
//                        ended (a process made a child of evalrun's), so
//                        that none stays a zombie until evalrun exits;
//   RemoveSysvIpcOfUid   as root: System V shared memory, semaphores and
//                        message queues the uid owns or made (ListSysvObjects
//                        lists every one the kernel shows, /proc/sysvipc);
//   RemoveTree           a folder and everything in it, links removed, never
//                        followed.
// Each is bounded and reports nothing: what cannot be removed stays (the
// caller has already ended every process that could make more).
//
// Thread-safety: each may be called from several threads at once (the
// helper is forked and exits; the /proc scans read only).
#ifndef EVALRUN_EVALS_SANDBOX_BOX_CLEANUP_H_
#define EVALRUN_EVALS_SANDBOX_BOX_CLEANUP_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace evalrun {

// True when no process of `uid` is left (uid must not be 0 or evalrun's).
bool KillProcessesOfUid(int uid);
void ReapZombieChildrenOfUid(int uid);
void RemoveSysvIpcOfUid(int uid);

// A process's parent, state, real uid and threads from /proc/<pid>/status;
// false when the process is gone.
struct ProcStatus {
  pid_t ppid = 0;
  char state = '?';
  long uid = -1;
  int threads = 0;
};
bool ReadProcStatus(const std::string& pid, ProcStatus* s);

struct SysvObject {
  std::string kind;  // "shm", "sem" or "msg"
  long key = 0;      // 0: IPC_PRIVATE
  int id = -1;
  long uid = -1;     // owner
  long cuid = -1;    // creator
};
std::vector<SysvObject> ListSysvObjects();
void RemoveTree(const std::string& dir);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SANDBOX_BOX_CLEANUP_H_
