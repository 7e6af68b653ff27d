// The progress line on stderr: done/total, in flight vs slots (per
// endpoint, with several), answers/s,
// ETA, running score, cut-offs. One overprinted line on a terminal; sparse
// plain lines otherwise (every 10 % or 60 s), so logs stay readable.
//
// Thread-safety: the On* calls may come from any thread (the pool's writer,
// the scoring stage); the status line is printed by its own thread.
#ifndef EVALRUN_EVALS_RUN_PROGRESS_H_
#define EVALRUN_EVALS_RUN_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "evals/run/request_pool.h"

namespace evalrun {

class Progress {
 public:
  // `already` answers were done before (resume). `stats` may be null.
  Progress(std::string part, int total, int already, int slots, const PoolStats* stats, FILE* out,
           bool tty);
  ~Progress();

  // With several endpoints: "in flight" shows each endpoint's beside the
  // total ("in flight 3/8 [2/4 1/4]"). `pool` must outlive this. Before Start.
  void ShowEndpoints(const RequestPool* pool) { pool_ = pool; }

  void Start();
  // Thread-safe. An answer on disk (or a request failed after its retries).
  void OnAnswered(bool failed);
  // Thread-safe. An answer scored (the scoring stage runs behind the pool):
  // `score` in [0,1]; `cut_off` when it hit its limit.
  void OnScored(double score, bool cut_off);
  // Prints the final line and stops the thread.
  void Finish();

  std::string Line() const;  // the current text (for tests)

 private:
  void Loop();

  std::string part_;
  int total_, already_, slots_;
  const PoolStats* stats_;
  const RequestPool* pool_ = nullptr;
  FILE* out_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int done_ = 0, failed_ = 0, cut_ = 0, scored_ = 0;
  double score_sum_ = 0;
  int last_decile_ = 0;
  std::thread thread_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_PROGRESS_H_
