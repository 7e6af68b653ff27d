// The request pool's workers (evals/run/request_pool.h): each takes the
// next request for its endpoint (pausing, admission), asks it within what
// max_attempts leaves of the earlier asks, and hands the result on to
// Settle (request_pool_settle.cc).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "evals/base/thread_name.h"
#include "evals/run/request_pool_internal.h"

namespace evalrun {

// One worker: takes requests for endpoint `e` until the work runs out, the
// run stops or is cancelled, or `e` is dropped.
void RequestPool::Pass::Work(int e, int slot, Client* client) {
  NameThisThread(several_ ? "evalrun-e" + std::to_string(e) + "s" + std::to_string(slot)
                          : "evalrun-slot" + std::to_string(slot));
  for (;;) {
    if (cancel_ && cancel_->cancelled()) return;
    if (!WaitWhilePaused()) return;
    size_t i = 0;
    int epoch = 0;
    if (!Acquire(e, &i, &epoch)) return;
    CallResult r = Ask(e, i, client);
    if (Settle(e, i, epoch, &r) == Next::kWorkerEnds) return;
  }
}

// While should_pause says so; false when cancelled meanwhile.
bool RequestPool::Pass::WaitWhilePaused() {
  if (!should_pause_) return true;
  while (should_pause_()) {
    if (cancel_ ? !cancel_->SleepFor(0.2) : (std::this_thread::sleep_for(std::chrono::milliseconds(200)), false))
      return false;
  }
  return true;
}

// The next request for `e` (counting an admission wait); false when none is left.
bool RequestPool::Pass::Acquire(int e, size_t* i, int* epoch) {
  int64_t waited_us = 0;
  bool waited = false;
  const bool got = sched_.Acquire(e, cancel_, i, epoch, &waited_us, &waited);
  if (waited) {
    ++pool_.stats_.admission_waits;
    pool_.stats_.admission_wait_us += waited_us;
  }
  if (got) CountInFlight(*pool_.endpoint_stats_[e]);
  return got;
}

// One more request in flight, in the pool's and its endpoint's counts and maxima.
void RequestPool::Pass::CountInFlight(EndpointStats& es) {
  PoolStats& stats = pool_.stats_;
  for (auto* s : {&stats.in_flight, &es.in_flight}) {
    const int now = ++*s;
    std::atomic<int>& max = s == &stats.in_flight ? stats.max_in_flight : es.max_in_flight;
    int seen = max.load();
    while (now > seen && !max.compare_exchange_weak(seen, now)) {
    }
  }
}

// Attempts of `r` that count against PoolOptions::max_attempts: all but
// those that could not connect.
static int CountedAttempts(const CallResult& r) {
  int refused = 0;
  for (const AttemptRecord& a : r.attempt_log) refused += a.cause == "connect_refused";
  return std::max(0, r.attempts - refused);
}

// Attempts of `r` that got no reply at all (cut, timed out).
static int UnansweredAttempts(const CallResult& r) {
  int n = 0;
  for (const AttemptRecord& a : r.attempt_log) n += a.cause == "connection_cut" || a.cause == "timeout";
  return n;
}

// Prompt i asked on `client` (or failed when it could not be made, or when
// the earlier asks spent its attempts), its attempts joined to theirs.
CallResult RequestPool::Pass::Ask(int e, size_t i, Client* client) {
  Prompt prompt;
  CallResult r;
  const int max = pool_.options_.max_attempts;
  CallResult before;
  int used = 0;
  {
    std::lock_guard<std::mutex> l(budget_mu_);
    before = asked_before_[i];
    used = CountedAttempts(before) - forgiven_[i];
  }
  Status ps = prompts_(i, &prompt);
  if (!ps.ok()) {
    r.status = CallStatus::kFailed;
    r.error = ps.message();
  } else if (max > 0 && used >= max) {
    r.status = CallStatus::kFailed;
    r.http_status = before.http_status;
    r.error = "no attempt left (" + std::to_string(used) + " made, server.retries + 1 in all); last: " + before.error;
  } else {
    r = max > 0 ? client->CompleteWithin(prompt, max - used) : client->Complete(prompt);
  }
  const int unanswered = r.status == CallStatus::kUnreachable ? UnansweredAttempts(r) : 0;
  r.attempts += before.attempts;
  r.attempt_log.insert(r.attempt_log.begin(), before.attempt_log.begin(), before.attempt_log.end());
  {
    std::lock_guard<std::mutex> l(budget_mu_);
    asked_before_[i] = r;
    asked_before_[i].completion = Completion();
    forgiven_[i] += unanswered;
    provisional_[i] = unanswered;
  }
  --pool_.stats_.in_flight;
  --pool_.endpoint_stats_[e]->in_flight;
  return r;
}

// The server answered /health at once: the attempts of i's last ask that
// got no reply were its own failures after all, and count.
void RequestPool::Pass::Charge(size_t i) {
  std::lock_guard<std::mutex> l(budget_mu_);
  forgiven_[i] -= provisional_[i];
  provisional_[i] = 0;
}

}  // namespace evalrun
