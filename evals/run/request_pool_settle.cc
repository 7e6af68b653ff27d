// What becomes of a request's result in the request pool
// (evals/run/request_pool.h): to the writer, back to the queue after a
// capacity failure or an outage (one worker waiting for the server), or
// failed past max_returns; endpoints dropped and the run stopped.
#include <mutex>
#include <string>
#include <utility>

#include "evals/run/request_pool_internal.h"
#include "evals/run/utc_now.h"

namespace evalrun {

void RequestPool::Pass::Stop(const Status& why) {
  {
    std::lock_guard<std::mutex> l(pool_.mu_);
    if (pool_.stop_.ok()) pool_.stop_ = why;
  }
  sched_.Stop();
}

// `e` is dropped for `why`; the run stops when no endpoint is left.
void RequestPool::Pass::Drop(int e, const Status& why) {
  bool first = false;
  const int left = sched_.Drop(e, &first);
  if (!first) return;  // another of its workers found out first
  if (!several_) {
    Stop(why);
    return;
  }
  const std::string& name = pool_.endpoints_[e].name;
  {
    std::lock_guard<std::mutex> l(pool_.mu_);
    pool_.drops_.push_back({e, name, UtcNow(), why.message()});
  }
  if (left == 0) {
    Stop(why.Prefixed("no endpoint is left; the last one, " + name));
    return;
  }
  if (pool_.options_.note)
    pool_.options_.note("dropping endpoint " + name + " (" + why.message() + "); going on with " +
                        std::to_string(left) + " endpoint" + (left == 1 ? "" : "s"));
}

// A result for on_done, counted for its endpoint.
void RequestPool::Pass::Push(int e, size_t i, CallResult r) {
  r.endpoint = e;
  if (r.status == CallStatus::kFailed) ++pool_.endpoint_stats_[e]->failed;
  else ++pool_.endpoint_stats_[e]->answered;
  answers_.Push(i, std::move(r));
}

// A request that came back more than max_returns times: failed, asked
// once more than it was sent back.
CallResult RequestPool::Pass::FailReturned(CallResult r, const std::string& why) const {
  r.status = CallStatus::kFailed;
  r.error = why + (r.error.empty() ? "" : " (last: " + r.error + ")");
  return r;
}

// One worker of `e` waits for e's server; true when it had been down (the
// requests that failed there are asked again), false when it answered at
// once (the failures were the requests' own).
bool RequestPool::Pass::LeadOutage(int e) {
  Outage o;
  o.endpoint = e;
  o.endpoint_name = pool_.endpoints_[e].name;
  o.started_utc = UtcNow();
  const Stopwatch waited(pool_.options_.clock ? pool_.options_.clock : RealClock::Default());
  bool was_down = false;
  Status st = pool_.endpoints_[e].watch->AwaitRecovery(&wait_cancel_, &was_down);
  o.seconds = waited.Seconds();
  o.recovered = st.ok();
  if (st.ok() && !was_down) {
    sched_.EndOutage(e, false);
    return false;
  }
  if (!st.ok()) o.error = st.message();
  const bool cancelled = st.code() == Status::Code::kCancelled;
  if (cancelled && !(cancel_ && cancel_->cancelled()) && sched_.Idle())
    o.error = several_ ? "the other endpoints finished the work meanwhile" : "nothing was left to ask";
  // Dropped before e's other workers are let go, so that none of them
  // takes another request there.
  if (!st.ok() && !cancelled) Drop(e, st);
  o.requeued = sched_.EndOutage(e, true);
  {
    std::lock_guard<std::mutex> l(pool_.mu_);
    pool_.outages_.push_back(o);
  }
  return true;
}

// Sends the result of request i on `e` back to the queue, to the writer, or
// (the endpoint was dropped) nowhere.
RequestPool::Pass::Next RequestPool::Pass::Settle(int e, size_t i, int epoch, CallResult* r) {
  const PoolEndpoint& ep = pool_.endpoints_[e];
  if (r->status == CallStatus::kCapacity) return AfterCapacity(e, i, epoch, r);
  if (r->status == CallStatus::kUnreachable && ep.watch) {
    const Next next = AfterUnreachable(e, i, r);
    if (next != Next::kDeliver) return next;
  }
  if (r->status == CallStatus::kUnreachable) r->status = CallStatus::kFailed;
  if (r->status == CallStatus::kOk && r->new_connection && ep.watch) {
    const Next next = AfterNewConnection(e, i, r);
    if (next != Next::kDeliver) return next;
  }
  sched_.Release(e, i, r->status == CallStatus::kOk);  // answers let a tightened admission recover
  Push(e, i, std::move(*r));
  return Next::kNextRequest;
}

// No room on the server: back to the queue, or failed past max_returns.
RequestPool::Pass::Next RequestPool::Pass::AfterCapacity(int e, size_t i, int epoch, CallResult* r) {
  ++pool_.stats_.capacity_returns;
  bool tightened = false;
  const bool back = sched_.ReturnForCapacity(e, i, epoch, &tightened);
  if (tightened) ++pool_.stats_.tightenings;
  if (back) return Next::kNextRequest;
  // Not attempts at an answer (the client does not count them), but asks.
  r->attempts = pool_.options_.max_returns + 1;
  Push(e, i, FailReturned(std::move(*r), "the server had no room for this request " +
                                             std::to_string(pool_.options_.max_returns) + " times"));
  return Next::kNextRequest;
}

// Is the server gone? The request goes back to the queue at once (another
// endpoint may take it); one worker of this endpoint finds out (and waits
// for it); its other workers wait for that. kDeliver: it answered at once
// and the failure (*r, now kFailed) was the request's own.
RequestPool::Pass::Next RequestPool::Pass::AfterUnreachable(int e, size_t i, CallResult* r) {
  const bool returned = sched_.ReturnForOutage(e, i);
  if (sched_.dropped(e)) {
    if (!returned) Push(e, i, FailReturned(std::move(*r), went_away_));
    return Next::kWorkerEnds;
  }
  const bool down = sched_.BeginOutage(e) ? LeadOutage(e) : sched_.WaitOutage(e, cancel_);
  if (down) {
    if (!returned) Push(e, i, FailReturned(std::move(*r), went_away_));
    return Next::kNextRequest;
  }
  // It answered at once: the failure was this request's own, unless
  // another endpoint has taken it meanwhile.
  Charge(i);
  if (returned && !sched_.Reclaim(e, i)) return Next::kNextRequest;
  r->status = CallStatus::kFailed;
  if (!returned) {
    Push(e, i, std::move(*r));
    return Next::kNextRequest;
  }
  return Next::kDeliver;
}

// The answer came over a new connection: the server may have been
// restarted with another model. kDeliver: it was not, keep the answer.
RequestPool::Pass::Next RequestPool::Pass::AfterNewConnection(int e, size_t i, CallResult* r) {
  Status st = pool_.endpoints_[e].watch->CheckSame();
  if (st.ok()) return Next::kDeliver;
  if (st.code() == Status::Code::kChanged) {
    // Not this answer; the question goes back for another endpoint.
    sched_.ReturnForOutage(e, i);
    Drop(e, st);
    return Next::kWorkerEnds;
  }
  sched_.Release(e, i);
  // /props did not answer: treat as the server going away.
  r->status = CallStatus::kUnreachable;
  r->error = st.message();
  Push(e, i, FailReturned(std::move(*r), "could not check the server after a new connection"));
  return Next::kNextRequest;
}

}  // namespace evalrun
