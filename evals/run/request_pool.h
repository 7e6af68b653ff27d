// The concurrent request pool: at most `slots` requests in flight until the
// work runs out, never more (a request beyond the server's slots would wait
// inside the server and its timing would be wrong), and, when the slots
// share one KV cache, never more tokens in flight than the cache holds.
#ifndef EVALRUN_EVALS_RUN_REQUEST_POOL_H_
#define EVALRUN_EVALS_RUN_REQUEST_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/server/client.h"
#include "evals/server/server_watch.h"
#include "evals/base/status.h"
#include "evals/server/types.h"

namespace evalrun {

struct PoolStats {
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::atomic<int> done{0};
  // Admission: a slot was free but the next request's tokens did not fit
  // beside those in flight (a shared KV cache), so it waited.
  std::atomic<int> admission_waits{0};
  std::atomic<int64_t> admission_wait_us{0};
  // Capacity failures (CallStatus::kCapacity) sent back to the queue, and
  // how often the capacity was lowered after one.
  std::atomic<int> capacity_returns{0};
  std::atomic<int> tightenings{0};
};

// One time the server went away during a run and what came of it.
struct Outage {
  std::string started_utc;
  double seconds = 0;        // until it answered again (or the wait ended)
  int requeued = 0;          // requests in flight then, asked again
  bool recovered = false;
  std::string error;         // why the wait ended, when it did not recover
};

// How the pool may load the server besides the slot count.
struct PoolOptions {
  // Tokens each prompt may hold in the server's KV cache while it runs
  // (prompt + max_tokens), by prompt index; empty (or 0): unknown.
  std::vector<int64_t> reserve_tokens;
  // > 0: the slots share one KV cache of this many tokens. A request starts
  // only when its reservation fits beside the reservations in flight; a
  // request alone always starts (whether it fits a slot at all is checked
  // before the run). 0: only the slot count limits.
  int64_t kv_capacity_tokens = 0;
  // A request sent back this many times (capacity failures, or the server
  // going away while it ran) fails instead (kFailed).
  int max_returns = 8;
  // May be null (then kUnreachable is a failure, as kFailed). With a watch:
  // after kUnreachable the pool stops sending, one worker waits for the
  // server through AwaitRecovery while the others wait, and every request
  // in flight then is asked again; and an answer that came over a new
  // connection is kept only after CheckSame() (else it is dropped and the
  // run stops: see stop_status()).
  ServerWatch* watch = nullptr;
};

// Gives prompt i. Called on the worker threads, several at once: must be
// thread-safe. An error fails that request (kFailed, with the message).
using PromptSource = std::function<Status(size_t i, Prompt* out)>;

class RequestPool {
 public:
  // `slots` >= 1. `make_client` is called once per worker, on the caller's
  // thread, before any request: each worker owns its client (connection).
  RequestPool(int slots, ClientFactory make_client, PoolOptions options = {});

  // Sends prompt i for every i in `order` (each once, unless sent back) and
  // returns the results indexed like the prompts (`count` of them; entries
  // not in `order` stay default).
  //
  // Answers go to one writer thread, so that a slot never waits for the
  // disk: the worker that got an answer sends its next request at once.
  // The writer takes every answer waiting, calls `on_done(i, result)` for
  // each (in arrival order, never two at once: score and write there), then
  // `on_batch_end()` once (may be empty: make the batch durable there, one
  // fsync for all). With one slot a batch is one answer; with many, answers
  // that arrive during an fsync share the next one. stats().done counts
  // answers whose batch has ended. At most 4 x slots answers wait for the
  // writer (the batch it is on, and up to 2 x slots queued behind it);
  // beyond that workers wait (a disk slower than the server holds them back
  // instead of filling memory). Run returns after every answer
  // that arrived has been through on_done and on_batch_end.
  //
  // on_done sees kOk, kFailed and kTooLong results; kCapacity and
  // kUnreachable are the pool's own business (the request is asked again)
  // until max_returns, when it becomes kFailed.
  //
  // After `cancel` fires, or the run stops (stop_status()), no new request
  // starts; the ones in flight finish (their clients see the token too) and
  // still reach on_done.
  // `should_pause` (may be empty) is asked before each new request; while it
  // says true the worker waits (checking every 0.2 s, cancellable).
  std::vector<CallResult> Run(size_t count, const PromptSource& prompts, const std::vector<size_t>& order,
                              const std::function<void(size_t, const CallResult&)>& on_done,
                              CancelToken* cancel,
                              const std::function<bool()>& should_pause = {},
                              const std::function<void()>& on_batch_end = {});
  // The same over prompts held in memory.
  std::vector<CallResult> Run(const std::vector<Prompt>& prompts, const std::vector<size_t>& order,
                              const std::function<void(size_t, const CallResult&)>& on_done,
                              CancelToken* cancel,
                              const std::function<bool()>& should_pause = {},
                              const std::function<void()>& on_batch_end = {});

  const PoolStats& stats() const { return stats_; }
  int slots() const { return slots_; }
  // Ok, or why the run stopped before its work was done: the server did not
  // come back (Unavailable), or it now serves another model or build
  // (FailedPrecondition, naming both). Valid after Run.
  Status stop_status() const;
  std::vector<Outage> outages() const;
  // The time-weighted mean of requests in flight over the last Run.
  double mean_in_flight() const { return mean_in_flight_; }
  // The token capacity the run ended with (0: none), lowered by capacity
  // failures from the one given.
  int64_t capacity_tokens() const { return capacity_final_; }

 private:
  int slots_;
  ClientFactory make_client_;
  PoolOptions options_;
  PoolStats stats_;
  mutable std::mutex mu_;
  Status stop_;
  std::vector<Outage> outages_;
  double mean_in_flight_ = 0;
  int64_t capacity_final_ = 0;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_REQUEST_POOL_H_
