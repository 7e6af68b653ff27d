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

// Which request goes next, and whether it may start now. One lock for the
// queue, the tokens in flight and the outage state.
class Scheduler {
 public:
  Scheduler(const std::vector<size_t>& order, const PoolOptions& o, PoolStats* stats)
      : queue_(order.begin(), order.end()), opts_(o), capacity_(o.kv_capacity_tokens), stats_(stats) {
    last_change_ = SteadyClock::now();
  }

  int64_t Reserve(size_t i) const {
    return i < opts_.reserve_tokens.size() ? std::max<int64_t>(0, opts_.reserve_tokens[i]) : 0;
  }

  // Takes the next request once it may start. False when there is nothing
  // left to do (or the run stops); then the worker ends.
  bool Acquire(CancelToken* cancel, size_t* index, int* epoch) {
    std::unique_lock<std::mutex> l(mu_);
    bool waiting_for_tokens = false;
    SteadyClock::time_point wait_start;
    for (;;) {
      if (stopping_ || (cancel && cancel->cancelled())) break;
      if (queue_.empty() && in_flight_ == 0 && !outage_) break;
      if (!outage_ && !queue_.empty()) {
        const int64_t r = Reserve(queue_.front());
        const bool fits = capacity_ <= 0 || in_flight_ == 0 || reserved_ + r <= capacity_;
        if (fits && in_flight_ < max_in_flight_cap_) {
          if (waiting_for_tokens) {
            stats_->admission_wait_us +=
                std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - wait_start).count();
          }
          *index = queue_.front();
          queue_.pop_front();
          Account();
          ++in_flight_;
          reserved_ += r;
          *epoch = epoch_;
          return true;
        }
        if (!waiting_for_tokens) {
          waiting_for_tokens = true;
          wait_start = SteadyClock::now();
          ++stats_->admission_waits;
        }
      }
      // Woken by a release, a return, the end of an outage, or cancel.
      cv_.wait_for(l, std::chrono::milliseconds(200));
    }
    if (waiting_for_tokens)
      stats_->admission_wait_us +=
          std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - wait_start).count();
    return false;
  }

  // The request ended (answered or failed for good).
  void Release(size_t i) {
    std::lock_guard<std::mutex> l(mu_);
    Account();
    --in_flight_;
    reserved_ -= Reserve(i);
    cv_.notify_all();
  }

  // A capacity failure: the request goes back to the front of the queue
  // and, if it was admitted under the capacity in force now, the capacity
  // is lowered to half of what was in flight then (never below this one
  // request: alone it always starts). False when it has come back too often.
  bool ReturnForCapacity(size_t i, int epoch) {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_->capacity_returns;
    if (epoch == epoch_) {
      const int64_t r = Reserve(i);
      if (reserved_ > 0) {
        const int64_t lowered = std::max(r, reserved_ / 2);
        capacity_ = capacity_ > 0 ? std::min(capacity_, lowered) : lowered;
      }
      // Without token counts, admit fewer at once instead.
      if (r == 0) max_in_flight_cap_ = std::max(1, std::min(max_in_flight_cap_, in_flight_ / 2));
      ++epoch_;
      ++stats_->tightenings;
    }
    return ReturnLocked(i);
  }

  // The server went away while the request ran: back to the front.
  bool ReturnForOutage(size_t i) {
    std::lock_guard<std::mutex> l(mu_);
    ++requeued_in_outage_;
    return ReturnLocked(i);
  }

  // One worker leads an outage; the others wait in Acquire. True for the
  // worker that should call AwaitRecovery.
  bool BeginOutage() {
    std::lock_guard<std::mutex> l(mu_);
    if (outage_) return false;
    outage_ = true;
    requeued_in_outage_ = 0;
    return true;
  }
  int EndOutage(bool was_down) {
    std::lock_guard<std::mutex> l(mu_);
    outage_ = false;
    last_outage_down_ = was_down;
    cv_.notify_all();
    return requeued_in_outage_;
  }
  // Blocks while an outage is being led by another worker; then whether
  // the server had been down (else the failures were the requests' own).
  bool WaitOutage(CancelToken* cancel) {
    std::unique_lock<std::mutex> l(mu_);
    while (outage_ && !stopping_ && !(cancel && cancel->cancelled())) cv_.wait_for(l, std::chrono::milliseconds(200));
    return last_outage_down_;
  }

  void Stop() {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  int64_t capacity() {
    std::lock_guard<std::mutex> l(mu_);
    return capacity_;
  }
  // Integral of requests in flight over time, and the time spanned.
  double MeanInFlight() {
    std::lock_guard<std::mutex> l(mu_);
    Account();
    return busy_time_ > 0 ? weighted_ / busy_time_ : 0;
  }

 private:
  bool ReturnLocked(size_t i) {
    Account();
    --in_flight_;
    reserved_ -= Reserve(i);
    cv_.notify_all();
    if (++returns_[i] > opts_.max_returns) return false;
    queue_.push_front(i);
    return true;
  }
  // Adds the time since the last change, weighted by the requests in flight.
  void Account() {
    const auto now = SteadyClock::now();
    const double dt = SecondsBetween(last_change_, now);
    weighted_ += dt * in_flight_;
    busy_time_ += dt;
    last_change_ = now;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;
  const PoolOptions& opts_;
  int64_t capacity_;
  int max_in_flight_cap_ = 1 << 30;  // lowered by capacity failures without token counts
  PoolStats* stats_;
  int in_flight_ = 0;
  int64_t reserved_ = 0;
  int epoch_ = 0;
  bool outage_ = false;
  bool last_outage_down_ = false;
  bool stopping_ = false;
  int requeued_in_outage_ = 0;
  std::map<size_t, int> returns_;
  SteadyClock::time_point last_change_;
  double weighted_ = 0, busy_time_ = 0;
};

}  // namespace

RequestPool::RequestPool(int slots, ClientFactory make_client, PoolOptions options)
    : slots_(std::max(1, slots)), make_client_(std::move(make_client)), options_(std::move(options)) {}

Status RequestPool::stop_status() const {
  std::lock_guard<std::mutex> l(mu_);
  return stop_;
}

std::vector<Outage> RequestPool::outages() const {
  std::lock_guard<std::mutex> l(mu_);
  return outages_;
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
  }
  mean_in_flight_ = 0;
  capacity_final_ = options_.kv_capacity_tokens;
  const int workers = static_cast<int>(std::min<size_t>(slots_, order.size()));
  if (workers == 0) return results;
  std::vector<std::unique_ptr<Client>> clients;
  for (int w = 0; w < workers; ++w) clients.push_back(make_client_());

  AnswerQueue answers(2 * static_cast<size_t>(workers));
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

  Scheduler sched(order, options_, &stats_);
  auto stop = [&](const Status& why) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_.ok()) stop_ = why;
    }
    sched.Stop();
  };
  // A request that came back more than max_returns times: failed, asked
  // once more than it was sent back.
  auto fail_returned = [&](CallResult r, const std::string& why) {
    r.status = CallStatus::kFailed;
    r.error = why + (r.error.empty() ? "" : " (last: " + r.error + ")");
    r.attempts = options_.max_returns + 1;
    return r;
  };

  auto work = [&](int slot, Client* client) {
    NameThisThread("evalrun-slot" + std::to_string(slot));
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
      if (!sched.Acquire(cancel, &i, &epoch)) return;
      int now = ++stats_.in_flight;
      int seen = stats_.max_in_flight.load();
      while (now > seen && !stats_.max_in_flight.compare_exchange_weak(seen, now)) {
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
      if (r.status == CallStatus::kCapacity) {
        if (sched.ReturnForCapacity(i, epoch)) continue;
        r = fail_returned(std::move(r), "the server had no room for this request " +
                                            std::to_string(options_.max_returns) + " times");
        answers.Push(i, std::move(r));
        continue;
      }
      if (r.status == CallStatus::kUnreachable && options_.watch) {
        // Is the server gone? One worker finds out (and waits for it); the
        // others wait for that.
        if (sched.BeginOutage()) {
          Outage o;
          o.started_utc = UtcNow();
          const auto t0 = SteadyClock::now();
          bool was_down = false;
          Status st = options_.watch->AwaitRecovery(cancel, &was_down);
          o.seconds = SecondsBetween(t0, SteadyClock::now());
          o.recovered = st.ok();
          if (!st.ok()) o.error = st.message();
          if (was_down || !st.ok()) {
            if (sched.ReturnForOutage(i)) {
              o.requeued = sched.EndOutage(true);
              std::lock_guard<std::mutex> l(mu_);
              outages_.push_back(o);
            } else {
              o.requeued = sched.EndOutage(true);
              {
                std::lock_guard<std::mutex> l(mu_);
                outages_.push_back(o);
              }
              answers.Push(i, fail_returned(std::move(r), "the server went away during this request " +
                                                              std::to_string(options_.max_returns) + " times"));
            }
            if (!st.ok() && st.code() != Status::Code::kCancelled) stop(st);
            continue;
          }
          sched.EndOutage(false);
          // It answered at once: the failure was this request's own.
          r.status = CallStatus::kFailed;
        } else if (sched.WaitOutage(cancel)) {
          // Another worker found the server down and waited for it: this
          // request is asked again.
          if (!sched.ReturnForOutage(i))
            answers.Push(i, fail_returned(std::move(r), "the server went away during this request " +
                                                            std::to_string(options_.max_returns) + " times"));
          continue;
        } else {
          r.status = CallStatus::kFailed;
        }
      }
      if (r.status == CallStatus::kUnreachable) r.status = CallStatus::kFailed;
      if (r.status == CallStatus::kOk && r.new_connection && options_.watch) {
        // The answer came over a new connection: the server may have been
        // restarted with another model. Keep it only if it was not.
        Status st = options_.watch->CheckSame();
        if (!st.ok()) {
          sched.Release(i);
          if (st.code() == Status::Code::kChanged) {
            stop(st);
            return;
          }
          // /props did not answer: treat as the server going away.
          r.status = CallStatus::kUnreachable;
          r.error = st.message();
          answers.Push(i, fail_returned(std::move(r), "could not check the server after a new connection"));
          continue;
        }
      }
      sched.Release(i);
      answers.Push(i, std::move(r));
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work, w, clients[w].get());
  for (auto& t : threads) t.join();
  answers.Close();
  writer.join();
  mean_in_flight_ = sched.MeanInFlight();
  capacity_final_ = sched.capacity();
  return results;
}

}  // namespace evalrun
