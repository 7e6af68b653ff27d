// ScopedSigpipeBlock: while a child's stdin is written (the process runner,
// a piped conversation), SIGPIPE is blocked in the writing thread, and the
// one that a write to a closed pipe raised is swallowed: the write fails
// with EPIPE instead of killing evalrun.
//
// Thread-safety: per thread (the signal mask is the thread's).
#ifndef EVALRUN_EVALS_PROC_SIGPIPE_BLOCK_H_
#define EVALRUN_EVALS_PROC_SIGPIPE_BLOCK_H_

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace evalrun {

class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~ScopedSigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      struct timespec zero = {0, 0};
      sigtimedwait(&set_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_, old_;
  bool was_pending_ = false;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PROC_SIGPIPE_BLOCK_H_
