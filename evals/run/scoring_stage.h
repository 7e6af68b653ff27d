// The scoring stage: answers are scored here, off the request pool's path,
// after they are on disk. A scorer may take seconds and run programs (code
// in a sandbox); the pool never waits for it, and the server stays as busy
// as with an instant scorer.
//
// Built on oneTBB: a task_arena of `concurrency` threads. With one (the
// default), a feeder thread of the stage's own takes the answers Submit
// queues and runs them in the arena as task_groups, then sleeps (an arena
// worker would spin after each task), gathering what comes in the next
// 0.5 s into one batch (Wait ends the gathering at once); with several,
// Submit enqueues into the arena and its workers run them. Every scoring
// thread runs at `nice` (the feeder sets it, an observer sets it as a
// worker enters the arena), so on a machine the engine shares, scoring
// takes only what the engine leaves.
//
//   ScoringStage stage(options, score, sink, cancel);
//   stage.Submit(i, std::move(unscored));  // returns at once
//   ...
//   stage.Wait();                          // every submitted answer sunk
//
// `score` runs on the stage's threads, several at once (it must be safe to
// call concurrently; Part::Score is); `sink` gets each result one at a time
// (the stage serialises it), in the order scoring finished. Once `cancel`
// is cancelled, answers not yet started are skipped (they are journaled:
// resume scores them); the running ones finish.
//
// Thread-safety: Submit may be called from any one thread at a time; Wait
// from the thread that owns the stage; the destructor waits.
#ifndef EVALRUN_EVALS_RUN_SCORING_STAGE_H_
#define EVALRUN_EVALS_RUN_SCORING_STAGE_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "evals/base/cancel.h"
#include "evals/run/answer_journal.h"
#include "evals/run/sample_record.h"
#include "evals/server/types.h"

namespace evalrun {

struct ScoringOptions {
  int concurrency = 1;  // threads that score at once (>= 1)
  int nice = 0;         // their nice value (0..19)
};

// The card's `scoring` as options: concurrency 0 is 1; nice unset is 10
// when the server runs on this machine (`local`), else 0.
ScoringOptions ScoringOptionsFor(int concurrency, const int* nice, bool local);

class ScoringStage {
 public:
  using ScoreFn = std::function<SampleRecord(size_t index, UnscoredAnswer answer)>;
  using SinkFn = std::function<void(size_t index, SampleRecord scored)>;

  // `cancel` may be null; it must outlive the stage.
  ScoringStage(ScoringOptions options, ScoreFn score, SinkFn sink, const CancelToken* cancel);
  ~ScoringStage();
  ScoringStage(const ScoringStage&) = delete;
  ScoringStage& operator=(const ScoringStage&) = delete;

  void Submit(size_t index, UnscoredAnswer answer);
  // Returns when every submitted answer is sunk (its sink call returned)
  // or skipped (cancelled).
  void Wait();
  // As Wait, for at most `seconds`; false when answers are still left.
  bool WaitFor(double seconds);
  // From now on, answers not yet started are skipped, as when `cancel` is
  // cancelled (a run stopped by the user that will not wait for a slow
  // scorer: the answers stay journaled, resume scores them).
  void Abandon();

  int submitted() const;
  int sunk() const;
  // Submitted, not yet sunk nor skipped (what is left to score).
  int backlog() const;
  // How many batches the feeder took (one scoring thread; else 0): answers
  // that come close together share one wake-up.
  int feeder_batches() const;

 private:
  struct Shared;  // what the tasks share with the stage (kept alive by them)
  struct Arena;   // the oneTBB arena and its observer
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<Arena> arena_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_SCORING_STAGE_H_
