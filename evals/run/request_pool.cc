#include "evals/run/request_pool.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "evals/base/thread_name.h"
#include "evals/run/pool_scheduler.h"
#include "evals/run/utc_now.h"

namespace evalrun {

namespace {

using SteadyClock = std::chrono::steady_clock;

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Answers that arrived and wait for on_done, in arrival order. Bounded, so
// that a writer slower than the server (a very slow disk) holds the workers
// back instead of growing without limit.
class AnswerQueue {
 public:
  explicit AnswerQueue(size_t capacity) : capacity_(capacity) {}

  void Push(size_t index, CallResult result) {
    std::unique_lock<std::mutex> l(mu_);
    not_full_.wait(l, [&] { return items_.size() < capacity_; });
    items_.emplace_back(index, std::move(result));
    not_empty_.notify_one();
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
    if (items_.empty()) return false;
    for (auto& item : items_) out->push_back(std::move(item));
    items_.clear();
    not_full_.notify_all();
    return true;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::pair<size_t, CallResult>> items_;
  bool closed_ = false;
};

}  // namespace

RequestPool::RequestPool(int slots, ClientFactory make_client, PoolOptions options)
    : RequestPool(std::vector<PoolEndpoint>{{"", std::max(1, slots), std::move(make_client),
                                             options.kv_capacity_tokens, options.watch}},
                  std::move(options)) {}

RequestPool::RequestPool(std::vector<PoolEndpoint> endpoints, PoolOptions options)
    : endpoints_(std::move(endpoints)), options_(std::move(options)) {
  for (auto& e : endpoints_) {
    e.slots = std::max(1, e.slots);
    slots_ += e.slots;
    endpoint_stats_.push_back(std::make_unique<EndpointStats>());
  }
}

Status RequestPool::stop_status() const {
  std::lock_guard<std::mutex> l(mu_);
  return stop_;
}

std::vector<Outage> RequestPool::outages() const {
  std::lock_guard<std::mutex> l(mu_);
  return outages_;
}

std::vector<EndpointDrop> RequestPool::drops() const {
  std::lock_guard<std::mutex> l(mu_);
  return drops_;
}

std::vector<CallResult> RequestPool::Run(
    const std::vector<Prompt>& prompts, const std::vector<size_t>& order,
    const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
    const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end) {
  PromptSource source = [&prompts](size_t i, Prompt* out) {
    *out = prompts[i];
    return Status::Ok();
  };
  return Run(prompts.size(), source, order, on_done, cancel, should_pause, on_batch_end);
}

std::vector<CallResult> RequestPool::Run(
    size_t count, const PromptSource& prompts, const std::vector<size_t>& order,
    const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
    const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end) {
  std::vector<CallResult> results(count);
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = Status::Ok();
    outages_.clear();
    drops_.clear();
  }
  mean_in_flight_ = 0;
  capacity_final_.clear();
  std::vector<int64_t> capacities;
  for (const auto& e : endpoints_) capacities.push_back(e.kv_capacity_tokens);
  capacity_final_ = capacities;
  // Workers per endpoint: its slots, never more than the work.
  std::vector<int> workers;
  int total_workers = 0;
  for (const auto& e : endpoints_) {
    workers.push_back(static_cast<int>(std::min<size_t>(e.slots, order.size())));
    total_workers += workers.back();
  }
  if (total_workers == 0) return results;
  std::vector<std::vector<std::unique_ptr<Client>>> clients(endpoints_.size());
  for (size_t e = 0; e < endpoints_.size(); ++e)
    for (int w = 0; w < workers[e]; ++w) clients[e].push_back(endpoints_[e].make_client());

  AnswerQueue answers(2 * static_cast<size_t>(total_workers));
  // The writer: on_done for every answer, one at a time, in arrival order,
  // then on_batch_end once for all that were waiting together (the caller's
  // group commit). Only it touches `results` until it is joined.
  std::thread writer([&] {
    NameThisThread("evalrun-writer");
    std::vector<std::pair<size_t, CallResult>> batch;
    auto last_trim = SteadyClock::now();
    while (answers.PopAll(&batch)) {
      for (auto& [i, r] : batch) {
        results[i] = std::move(r);
        if (on_done) on_done(i, results[i]);
      }
      if (on_batch_end) on_batch_end();
      stats_.done += static_cast<int>(batch.size());
      // Every request builds its body afresh (up to megabytes at 128K) on
      // its worker's malloc arena; what glibc keeps of those arenas grows
      // with the run (measured: 526 MB of RSS over 5,000 RULER prompts at
      // 128K, 30 MB of it live). Hand the free pages back once a second.
      if (SecondsBetween(last_trim, SteadyClock::now()) >= 1.0) {
        malloc_trim(0);
        last_trim = SteadyClock::now();
      }
    }
  });

  pool_internal::Scheduler sched(order, options_.reserve_tokens, capacities, options_.max_returns);
  auto stop = [&](const Status& why) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_.ok()) stop_ = why;
    }
    sched.Stop();
  };
  // Ends an endpoint's wait for its server early: the run was cancelled,
  // stopped, or the other endpoints did the work meanwhile.
  CancelToken wait_cancel;
  bool any_watch = false;
  for (const auto& e : endpoints_) any_watch |= e.watch != nullptr;
  std::thread monitor;
  if (any_watch)
    monitor = std::thread([&] {
      NameThisThread("evalrun-watch");
      sched.WaitIdle(cancel);
      wait_cancel.Cancel();
    });
  const bool several = endpoints_.size() > 1;
  // `e` is dropped for `why`; the run stops when no endpoint is left.
  auto drop = [&](int e, const Status& why) {
    bool first = false;
    const int left = sched.Drop(e, &first);
    if (!first) return;  // another of its workers found out first
    if (!several) {
      stop(why);
      return;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      drops_.push_back({e, endpoints_[e].name, UtcNow(), why.message()});
    }
    if (left == 0) {
      stop(why.Prefixed("no endpoint is left; the last one, " + endpoints_[e].name));
      return;
    }
    if (options_.note)
      options_.note("dropping endpoint " + endpoints_[e].name + " (" + why.message() + "); going on with " +
                    std::to_string(left) + " endpoint" + (left == 1 ? "" : "s"));
  };
  // A result for on_done, counted for its endpoint.
  auto push = [&](int e, size_t i, CallResult r) {
    r.endpoint = e;
    if (r.status == CallStatus::kFailed) ++endpoint_stats_[e]->failed;
    else ++endpoint_stats_[e]->answered;
    answers.Push(i, std::move(r));
  };
  // A request that came back more than max_returns times: failed, asked
  // once more than it was sent back.
  auto fail_returned = [&](CallResult r, const std::string& why) {
    r.status = CallStatus::kFailed;
    r.error = why + (r.error.empty() ? "" : " (last: " + r.error + ")");
    r.attempts = options_.max_returns + 1;
    return r;
  };
  const std::string went_away =
      "the server went away during this request " + std::to_string(options_.max_returns) + " times";

  // One worker of `e` waits for e's server; true when it had been down (the
  // requests that failed there are asked again), false when it answered at
  // once (the failures were the requests' own).
  auto lead_outage = [&](int e) {
    Outage o;
    o.endpoint = e;
    o.endpoint_name = endpoints_[e].name;
    o.started_utc = UtcNow();
    const Stopwatch waited(options_.clock ? options_.clock : RealClock::Default());
    bool was_down = false;
    Status st = endpoints_[e].watch->AwaitRecovery(&wait_cancel, &was_down);
    o.seconds = waited.Seconds();
    o.recovered = st.ok();
    if (st.ok() && !was_down) {
      sched.EndOutage(e, false);
      return false;
    }
    if (!st.ok()) o.error = st.message();
    const bool cancelled = st.code() == Status::Code::kCancelled;
    if (cancelled && !(cancel && cancel->cancelled()) && sched.Idle())
      o.error = several ? "the other endpoints finished the work meanwhile" : "nothing was left to ask";
    // Dropped before e's other workers are let go, so that none of them
    // takes another request there.
    if (!st.ok() && !cancelled) drop(e, st);
    o.requeued = sched.EndOutage(e, true);
    {
      std::lock_guard<std::mutex> l(mu_);
      outages_.push_back(o);
    }
    return true;
  };

  auto work = [&](int e, int slot, Client* client) {
    NameThisThread(several ? "evalrun-e" + std::to_string(e) + "s" + std::to_string(slot)
                           : "evalrun-slot" + std::to_string(slot));
    const PoolEndpoint& ep = endpoints_[e];
    EndpointStats& es = *endpoint_stats_[e];
    for (;;) {
      if (cancel && cancel->cancelled()) return;
      if (should_pause) {
        while (should_pause()) {
          if (cancel ? !cancel->SleepFor(0.2) : (std::this_thread::sleep_for(std::chrono::milliseconds(200)), false))
            return;
        }
      }
      size_t i = 0;
      int epoch = 0;
      int64_t waited_us = 0;
      bool waited = false;
      const bool got = sched.Acquire(e, cancel, &i, &epoch, &waited_us, &waited);
      if (waited) {
        ++stats_.admission_waits;
        stats_.admission_wait_us += waited_us;
      }
      if (!got) return;
      for (auto* s : {&stats_.in_flight, &es.in_flight}) {
        const int now = ++*s;
        std::atomic<int>& max = s == &stats_.in_flight ? stats_.max_in_flight : es.max_in_flight;
        int seen = max.load();
        while (now > seen && !max.compare_exchange_weak(seen, now)) {
        }
      }
      Prompt prompt;
      CallResult r;
      Status ps = prompts(i, &prompt);
      if (!ps.ok()) {
        r.status = CallStatus::kFailed;
        r.error = ps.message();
      } else {
        r = client->Complete(prompt);
      }
      --stats_.in_flight;
      --es.in_flight;
      if (r.status == CallStatus::kCapacity) {
        ++stats_.capacity_returns;
        bool tightened = false;
        const bool back = sched.ReturnForCapacity(e, i, epoch, &tightened);
        if (tightened) ++stats_.tightenings;
        if (back) continue;
        push(e, i, fail_returned(std::move(r), "the server had no room for this request " +
                                                  std::to_string(options_.max_returns) + " times"));
        continue;
      }
      if (r.status == CallStatus::kUnreachable && ep.watch) {
        // Is the server gone? The request goes back to the queue at once
        // (another endpoint may take it); one worker of this endpoint finds
        // out (and waits for it); its other workers wait for that.
        const bool returned = sched.ReturnForOutage(e, i);
        if (sched.dropped(e)) {
          if (!returned) push(e, i, fail_returned(std::move(r), went_away));
          return;
        }
        const bool down = sched.BeginOutage(e) ? lead_outage(e) : sched.WaitOutage(e, cancel);
        if (down) {
          if (!returned) push(e, i, fail_returned(std::move(r), went_away));
          continue;
        }
        // It answered at once: the failure was this request's own, unless
        // another endpoint has taken it meanwhile.
        if (returned && !sched.Reclaim(e, i)) continue;
        r.status = CallStatus::kFailed;
        if (!returned) {
          push(e, i, std::move(r));
          continue;
        }
      }
      if (r.status == CallStatus::kUnreachable) r.status = CallStatus::kFailed;
      if (r.status == CallStatus::kOk && r.new_connection && ep.watch) {
        // The answer came over a new connection: the server may have been
        // restarted with another model. Keep it only if it was not.
        Status st = ep.watch->CheckSame();
        if (!st.ok()) {
          if (st.code() == Status::Code::kChanged) {
            // Not this answer; the question goes back for another endpoint.
            sched.ReturnForOutage(e, i);
            drop(e, st);
            return;
          }
          sched.Release(e, i);
          // /props did not answer: treat as the server going away.
          r.status = CallStatus::kUnreachable;
          r.error = st.message();
          push(e, i, fail_returned(std::move(r), "could not check the server after a new connection"));
          continue;
        }
      }
      sched.Release(e, i, r.status == CallStatus::kOk);
      push(e, i, std::move(r));
    }
  };
  std::vector<std::thread> threads;
  for (size_t e = 0; e < endpoints_.size(); ++e)
    for (int w = 0; w < workers[e]; ++w) threads.emplace_back(work, static_cast<int>(e), w, clients[e][w].get());
  for (auto& t : threads) t.join();
  sched.Stop();
  if (monitor.joinable()) monitor.join();
  answers.Close();
  writer.join();
  mean_in_flight_ = sched.MeanInFlight();
  for (size_t e = 0; e < endpoints_.size(); ++e) capacity_final_[e] = sched.capacity(static_cast<int>(e));
  return results;
}

}  // namespace evalrun
