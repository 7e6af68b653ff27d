// The request pool's internals (evals/run/request_pool.h), shared only by
// its files: the writer's bounded queue of answers and RequestPool::Pass,
// one Run's threads and the state they share. request_pool.cc runs a pass,
// request_pool_writer.cc is its writer, request_pool_worker.cc its workers'
// loop and asks, request_pool_settle.cc what becomes of each result.
#ifndef EVALRUN_EVALS_RUN_REQUEST_POOL_INTERNAL_H_
#define EVALRUN_EVALS_RUN_REQUEST_POOL_INTERNAL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/run/pool_scheduler.h"
#include "evals/run/request_pool.h"

namespace evalrun {

namespace pool_internal {

// The writer's group commit: how long it lingers for more answers before
// on_batch_end (request_pool_writer.cc).
class GroupCommit;

// Answers that arrived and wait for on_done, in arrival order. Bounded, so
// that a writer slower than the server (a very slow disk) holds the workers
// back instead of growing without limit.
class AnswerQueue {
 public:
  explicit AnswerQueue(size_t capacity) : capacity_(capacity) {}

  // The writer waits only on an empty queue, so only the first answer into
  // one wakes it; the wake-up comes after the lock is let go (else the
  // writer wakes only to wait for it: 4 slots answering together made that
  // a futex wait and wake each).
  void Push(size_t index, CallResult result) {
    bool was_empty = false;
    {
      std::unique_lock<std::mutex> l(mu_);
      not_full_.wait(l, [&] { return items_.size() < capacity_; });
      was_empty = items_.empty();
      items_.emplace_back(index, std::move(result));
    }
    if (was_empty) not_empty_.notify_one();
  }

  // No more pushes will come; PopAll returns false once the queue is empty.
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    not_empty_.notify_one();
  }

  // Takes every answer waiting (at least one); false once the queue is
  // closed and empty.
  bool PopAll(std::vector<std::pair<size_t, CallResult>>* out) {
    out->clear();
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [&] { return !items_.empty() || closed_; });
    return TakeLocked(out);
  }

  // Appends every answer waiting, waiting until `deadline` for one when
  // none is; false when none came (or the queue is closed and empty).
  bool PopUntil(std::vector<std::pair<size_t, CallResult>>* out, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait_until(l, deadline, [&] { return !items_.empty() || closed_; });
    return TakeLocked(out);
  }

 private:
  // Moves every waiting answer to *out (appended); false when there was none.
  bool TakeLocked(std::vector<std::pair<size_t, CallResult>>* out) {
    if (items_.empty()) return false;
    for (auto& item : items_) out->push_back(std::move(item));
    items_.clear();
    not_full_.notify_all();
    return true;
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::pair<size_t, CallResult>> items_;
  bool closed_ = false;
};

}  // namespace pool_internal

// One Run: the state its threads share (the scheduler, the writer's queue,
// the results) and each thread's steps.
class RequestPool::Pass {
 public:
  Pass(RequestPool* pool, size_t count, const PromptSource& prompts, const std::vector<size_t>& order,
       const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
       const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end,
       const std::vector<int>& workers, int total_workers)
      : pool_(*pool),
        prompts_(prompts),
        on_done_(on_done),
        cancel_(cancel),
        should_pause_(should_pause),
        on_batch_end_(on_batch_end),
        results_(count),
        asked_before_(count),
        forgiven_(count, 0),
        provisional_(count, 0),
        clients_(MakeClients(*pool, workers)),
        answers_(2 * static_cast<size_t>(total_workers)),
        sched_(order, pool->options_.reserve_tokens, pool->capacity_final_, pool->options_.max_returns),
        several_(pool->endpoints_.size() > 1),
        went_away_("the server went away during this request " +
                   std::to_string(pool->options_.max_returns) + " times") {}

  // Runs the workers (as many on each endpoint as it was made with), the
  // writer and the watch monitor; returns the results once all have ended.
  std::vector<CallResult> Run();

 private:
  // What a worker does once a request's result has been dealt with.
  enum class Next { kNextRequest, kWorkerEnds, kDeliver };

  static std::vector<std::vector<std::unique_ptr<Client>>> MakeClients(RequestPool& pool,
                                                                       const std::vector<int>& workers);
  void WriteAnswers();
  int Hand(std::vector<std::pair<size_t, CallResult>>* batch, pool_internal::GroupCommit* group);
  std::thread StartMonitor();
  void Stop(const Status& why);
  void Drop(int e, const Status& why);
  void Push(int e, size_t i, CallResult r);
  CallResult FailReturned(CallResult r, const std::string& why) const;
  bool LeadOutage(int e);
  void Work(int e, int slot, Client* client);
  bool WaitWhilePaused();
  bool Acquire(int e, size_t* i, int* epoch);
  void CountInFlight(EndpointStats& es);
  CallResult Ask(int e, size_t i, Client* client);
  void Charge(size_t i);
  Next Settle(int e, size_t i, int epoch, CallResult* r);
  Next AfterCapacity(int e, size_t i, int epoch, CallResult* r);
  Next AfterUnreachable(int e, size_t i, CallResult* r);
  Next AfterNewConnection(int e, size_t i, CallResult* r);

  RequestPool& pool_;
  const PromptSource& prompts_;
  const std::function<void(size_t, const CallResult&)>& on_done_;
  CancelToken* const cancel_;
  const std::function<bool()>& should_pause_;
  const std::function<void()>& on_batch_end_;
  // Only the writer touches it until it is joined.
  std::vector<CallResult> results_;
  // Per prompt, what the asks before this one cost (attempts and their
  // causes): touched only by the worker that holds the prompt (handed on
  // through the scheduler's lock).
  std::vector<CallResult> asked_before_;
  // Per prompt, attempts not counted against max_attempts: those that got
  // no reply (a cut connection, a timeout) in an ask that ended kUnreachable
  // are forgiven while the pool finds out whether the server was down
  // (provisional_), and charged again when it was not (Charge). A reply (a
  // 503 loading or busy) always counts. Guarded by budget_mu_ (the next
  // ask may run on another endpoint's worker).
  std::vector<int> forgiven_;
  std::vector<int> provisional_;
  std::mutex budget_mu_;
  // Per endpoint, one client per worker, made (on the caller's thread)
  // before the scheduler starts its clock.
  std::vector<std::vector<std::unique_ptr<Client>>> clients_;
  pool_internal::AnswerQueue answers_;
  pool_internal::Scheduler sched_;
  // Ends an endpoint's wait for its server early: the run was cancelled,
  // stopped, or the other endpoints did the work meanwhile.
  CancelToken wait_cancel_;
  const bool several_;
  const std::string went_away_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_REQUEST_POOL_INTERNAL_H_
