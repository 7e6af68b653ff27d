// The concurrent request pool: at most `slots` requests in flight until the
// work runs out, never more (a request beyond the server's slots would wait
// inside the server and its timing would be wrong), and, when the slots
// share one KV cache, never more tokens in flight than the cache holds.
//
// Several endpoints (servers that serve the same model) may share one pool:
// one queue of work, and per endpoint its own slots, KV admission and
// server watch. Each endpoint keeps at most its own slots in flight; a slow
// one takes less of the queue, a failed one hands its requests back to the
// queue at once (the others take them), and one that stays down past its
// watch's wait is dropped: the run stops only when none is left.
//
// Thread-safety: Run is called from one thread and blocks; it starts the
// workers, the writer and the monitor, and joins them before it returns.
// The callbacks say below on which of those threads they run.
#ifndef EVALRUN_EVALS_RUN_REQUEST_POOL_H_
#define EVALRUN_EVALS_RUN_REQUEST_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "evals/base/cancel.h"
#include "evals/base/clock.h"
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

// One endpoint's share of the run.
struct EndpointStats {
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::atomic<int> answered{0};  // results handed to on_done other than kFailed
  std::atomic<int> failed{0};    // kFailed results handed to on_done
};

// One time the server went away during a run and what came of it.
struct Outage {
  int endpoint = 0;          // which of the pool's endpoints
  std::string endpoint_name;
  std::string started_utc;
  double seconds = 0;        // until it answered again (or the wait ended)
  int requeued = 0;          // requests in flight then, asked again
  bool recovered = false;
  std::string error;         // why the wait ended, when it did not recover
};

// An endpoint that was dropped during the run: it stayed down past its
// watch's wait, or came back serving another model or build.
struct EndpointDrop {
  int endpoint = 0;
  std::string name;
  std::string utc;
  std::string reason;
};

// One server of the pool.
struct PoolEndpoint {
  std::string name;              // its base_url, for notes and records
  int slots = 1;                 // >= 1: requests in flight there at most
  ClientFactory make_client;     // called once per worker of this endpoint
  // As PoolOptions::kv_capacity_tokens and PoolOptions::watch, for this
  // endpoint alone.
  int64_t kv_capacity_tokens = 0;
  ServerWatch* watch = nullptr;
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
  // > 0: a question gets at most this many attempts in all (the card's
  // retries + 1), however often the pool asks it (after an outage, or a
  // capacity return): each ask gets what the earlier ones left
  // (Client::CompleteWithin), and one with nothing left fails (kFailed)
  // without a request. Attempts that could not connect (nothing was sent:
  // cause "connect_refused") are not counted, nor are those that got no
  // reply (cut, timed out) when the watch then finds the server down (it
  // went away under them: the question is asked again, on another
  // endpoint if there is one); a reply (a 503, loading or busy) always
  // counts. A result's attempts and
  // attempt_log are those of every ask together. 0: each ask its client's
  // own bound.
  int max_attempts = 0;
  // May be null (then kUnreachable is a failure, as kFailed). With a watch:
  // after kUnreachable the pool stops sending, one worker waits for the
  // server through AwaitRecovery while the others wait, and every request
  // in flight then is asked again; and an answer that came over a new
  // connection is kept only after CheckSame() (else it is dropped and the
  // run stops: see stop_status()).
  ServerWatch* watch = nullptr;
  // May be empty: gets one line when an endpoint is dropped, and when the
  // run goes on without it.
  std::function<void(const std::string&)> note;
  // Times the outages (Outage::seconds); null: RealClock::Default(). The
  // watches wait on their own clock (HttpServerWatch's).
  Clock* clock = nullptr;
};

// Gives prompt i. Called on the worker threads, several at once: must be
// thread-safe. An error fails that request (kFailed, with the message).
using PromptSource = std::function<Status(size_t i, Prompt* out)>;

class RequestPool {
 public:
  // `slots` >= 1. `make_client` is called once per worker, on the caller's
  // thread, before any request: each worker owns its client (connection).
  RequestPool(int slots, ClientFactory make_client, PoolOptions options = {});
  // Several endpoints (at least one) sharing one queue; options'
  // kv_capacity_tokens and watch are not used (each endpoint has its own).
  // Every result says which endpoint answered (CallResult::endpoint).
  //
  // With a watch, a request that found no server goes back to the queue at
  // once (another endpoint may take it) while one worker of its endpoint
  // waits for that server (the endpoint's other workers wait too); when the
  // work is done meanwhile, the wait ends. An endpoint whose wait fails
  // (Unavailable), or that serves something else now (Changed, from
  // AwaitRecovery or CheckSame), is dropped: its workers end, a note says
  // so, drops() lists it. When the last endpoint is dropped the run stops
  // (stop_status(): that endpoint's reason).
  RequestPool(std::vector<PoolEndpoint> endpoints, PoolOptions options = {});

  // Sends prompt i for every i in `order` (each once, unless sent back) and
  // returns the results indexed like the prompts (`count` of them; entries
  // not in `order` stay default).
  //
  // Answers go to one writer thread, so that a slot never waits for the
  // disk: the worker that got an answer sends its next request at once.
  // The writer takes every answer waiting, calls `on_done(i, result)` for
  // each (in arrival order, never two at once: score and write there), then
  // `on_batch_end()` once (may be empty: make the batch durable there, one
  // fsync for all). Answers that arrive during an fsync share the next one,
  // and while other requests are in flight the writer waits up to 4 ms for
  // answers finishing together (group commit, request_pool_writer.cc: GroupCommit::Linger);
  // on_done has run for each before the wait. stats().done counts
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
  // All endpoints' slots together.
  int slots() const { return slots_; }
  size_t endpoint_count() const { return endpoints_.size(); }
  const PoolEndpoint& endpoint(size_t e) const { return endpoints_[e]; }
  const EndpointStats& endpoint_stats(size_t e) const { return *endpoint_stats_[e]; }
  std::vector<EndpointDrop> drops() const;
  // Ok, or why the run stopped before its work was done: the server did not
  // come back (Unavailable), or it now serves another model or build
  // (FailedPrecondition, naming both). Valid after Run.
  Status stop_status() const;
  std::vector<Outage> outages() const;
  // The time-weighted mean of requests in flight over the last Run.
  double mean_in_flight() const { return mean_in_flight_; }
  // The token capacity the run ended with (0: none), lowered by capacity
  // failures from the one given; of endpoint `e`.
  int64_t capacity_tokens(size_t e = 0) const { return e < capacity_final_.size() ? capacity_final_[e] : 0; }

 private:
  class Pass;  // one Run: its threads and the state they share (request_pool_internal.h)

  int slots_ = 0;
  std::vector<PoolEndpoint> endpoints_;
  PoolOptions options_;
  PoolStats stats_;
  std::vector<std::unique_ptr<EndpointStats>> endpoint_stats_;
  mutable std::mutex mu_;
  Status stop_;
  std::vector<Outage> outages_;
  std::vector<EndpointDrop> drops_;
  double mean_in_flight_ = 0;
  std::vector<int64_t> capacity_final_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_REQUEST_POOL_H_
