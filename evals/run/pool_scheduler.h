// The request pool's scheduler (evals/run/request_pool.h; internal): one
// queue of work shared by every endpoint, and per endpoint its requests in
// flight, its KV admission, its outage state and whether it was dropped.
// A worker belongs to one endpoint and takes the next request only when
// that endpoint has room, so each endpoint keeps at most its own slots in
// flight and a slow or absent one never holds the queue back.
//
// Thread-safety: every method takes the one lock.
#ifndef EVALRUN_EVALS_RUN_POOL_SCHEDULER_H_
#define EVALRUN_EVALS_RUN_POOL_SCHEDULER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "evals/base/cancel.h"

namespace evalrun::pool_internal {

class Scheduler {
 public:
  // `capacity_tokens`: per endpoint, its shared KV cache (0: slots only).
  Scheduler(const std::vector<size_t>& order, const std::vector<int64_t>& reserve_tokens,
            const std::vector<int64_t>& capacity_tokens, int max_returns);

  int64_t Reserve(size_t i) const;

  // Takes the next request for endpoint `e` once it may start. False when
  // there is nothing left to do, the run stops, or `e` was dropped.
  // `*waited_us` gets the time spent waiting for tokens to fit; `*waited`
  // whether it waited at all.
  bool Acquire(int e, CancelToken* cancel, size_t* index, int* epoch, int64_t* waited_us, bool* waited);
  // The request ended on `e` (answered or failed for good). `answered`:
  // it was answered; every kRecoverAfterAnswers answers since e's request
  // count was last lowered (ReturnForCapacity without token counts) let one
  // more in, until e admits what it had in flight before (then unbounded).
  static constexpr int kRecoverAfterAnswers = 16;
  void Release(int e, size_t i, bool answered = false);
  // A capacity failure on `e`: back to the front of the queue and, if it
  // was admitted under the capacity in force now, e's capacity lowered to
  // half of what was in flight there (never below this one request). False
  // when it has come back too often. `*tightened`: whether it was lowered.
  bool ReturnForCapacity(int e, size_t i, int epoch, bool* tightened);
  // `e` may be gone: the request goes back to the front for the other
  // endpoints; e itself takes it only once its outage ends with e found
  // down (EndOutage(e, true)), else its worker takes it back (Reclaim).
  bool ReturnForOutage(int e, size_t i);
  // Takes back a request returned by ReturnForOutage when the endpoint had
  // not been down after all (the failure was the request's own): true when
  // it was still queued (it is then the caller's again, its return not
  // counted, in flight on `e` again until Release); false when another
  // endpoint has taken it already.
  bool Reclaim(int e, size_t i);

  // One worker of `e` leads its outage; the others of `e` wait. True for
  // the worker that should wait for the server.
  bool BeginOutage(int e);
  // The requests sent back from `e` since the last EndOutage.
  int EndOutage(int e, bool was_down);
  // Blocks while e's outage is led by another worker; then whether e had
  // been down (true when the run stops or is cancelled meanwhile).
  bool WaitOutage(int e, CancelToken* cancel);
  // `e` takes no more work; the number of endpoints left. `*first`: it
  // was not dropped before.
  int Drop(int e, bool* first);
  bool dropped(int e);

  // Nothing queued and nothing in flight anywhere: the work is done (or
  // only requests that failed for good are left).
  bool Idle();
  // Requests taken and not yet released or returned, on every endpoint.
  int InFlight();
  // Blocks until Idle() or Stop() (both wake it), or `cancel` (seen within
  // a second: a waiter that must end at once on cancel is linked to it).
  void WaitIdle(CancelToken* cancel);

  void Stop();
  int64_t capacity(int e);
  // The time-weighted mean of requests in flight (all endpoints together).
  double MeanInFlight();

 private:
  struct Endpoint {
    int in_flight = 0;
    int64_t reserved = 0;
    int64_t capacity = 0;
    int max_in_flight_cap = kNoCap;  // lowered by capacity failures without token counts
    int cap_before = 0;              // in flight when it was first lowered
    int answers_since_cap = 0;       // answered since it was last changed
    int epoch = 0;
    bool outage = false;
    bool last_outage_down = false;
    int requeued_in_outage = 0;
    bool dropped = false;
  };
  using SteadyClock = std::chrono::steady_clock;
  static constexpr int kNoCap = 1 << 30;

  bool ReturnLocked(Endpoint& ep, size_t i);
  bool IdleLocked() const { return queue_.empty() && in_flight_ == 0; }
  void Account();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;
  const std::vector<int64_t>& reserve_;
  const int max_returns_;
  std::vector<Endpoint> eps_;
  int live_;
  int in_flight_ = 0;
  int slot_waiters_ = 0;  // Acquire calls waiting on cv_ now
  bool stopping_ = false;
  std::map<size_t, int> returns_;
  std::map<size_t, int> avoid_;  // request -> the endpoint that sent it back (ReturnForOutage)
  SteadyClock::time_point last_change_;
  double weighted_ = 0, busy_time_ = 0;
};

}  // namespace evalrun::pool_internal

#endif  // EVALRUN_EVALS_RUN_POOL_SCHEDULER_H_
