// The concurrent request pool: exactly `slots` requests in flight until the
// work runs out, never more (a request beyond the server's slots would wait
// inside the server and its timing would be wrong).
#ifndef EVALRUN_EVALS_REQUEST_POOL_H_
#define EVALRUN_EVALS_REQUEST_POOL_H_

#include <atomic>
#include <functional>
#include <vector>

#include "evals/cancel.h"
#include "evals/client.h"
#include "evals/types.h"

namespace evalrun {

struct PoolStats {
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::atomic<int> done{0};
};

class RequestPool {
 public:
  // `slots` >= 1. `make_client` is called once per worker, on the caller's
  // thread, before any request: each worker owns its client (connection).
  RequestPool(int slots, ClientFactory make_client);

  // Sends prompts[i] for every i in `order` (each once) and returns the
  // results indexed like `prompts` (entries not in `order` stay default).
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
  // After `cancel` fires, no new request starts; the ones in flight finish
  // (their clients see the token too) and still reach on_done.
  // `should_pause` (may be empty) is asked before each new request; while it
  // says true the worker waits (checking every 0.2 s, cancellable).
  std::vector<CallResult> Run(const std::vector<Prompt>& prompts, const std::vector<size_t>& order,
                              const std::function<void(size_t, const CallResult&)>& on_done,
                              CancelToken* cancel,
                              const std::function<bool()>& should_pause = {},
                              const std::function<void()>& on_batch_end = {});

  const PoolStats& stats() const { return stats_; }
  int slots() const { return slots_; }

 private:
  int slots_;
  ClientFactory make_client_;
  PoolStats stats_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_REQUEST_POOL_H_
