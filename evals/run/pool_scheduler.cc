#include "evals/run/pool_scheduler.h"

#include <algorithm>
#include <iterator>

namespace evalrun::pool_internal {

Scheduler::Scheduler(const std::vector<size_t>& order, const std::vector<int64_t>& reserve_tokens,
                     const std::vector<int64_t>& capacity_tokens, int max_returns)
    : queue_(order.begin(), order.end()),
      reserve_(reserve_tokens),
      max_returns_(max_returns),
      eps_(capacity_tokens.size()),
      live_(static_cast<int>(capacity_tokens.size())) {
  for (size_t e = 0; e < eps_.size(); ++e) eps_[e].capacity = capacity_tokens[e];
  last_change_ = SteadyClock::now();
}

int64_t Scheduler::Reserve(size_t i) const {
  return i < reserve_.size() ? std::max<int64_t>(0, reserve_[i]) : 0;
}

bool Scheduler::Acquire(int e, CancelToken* cancel, size_t* index, int* epoch, int64_t* waited_us, bool* waited) {
  std::unique_lock<std::mutex> l(mu_);
  Endpoint& ep = eps_[e];
  *waited = false;
  *waited_us = 0;
  SteadyClock::time_point wait_start;
  auto end_wait = [&] {
    if (*waited)
      *waited_us += std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - wait_start).count();
  };
  for (;;) {
    if (stopping_ || ep.dropped || (cancel && cancel->cancelled())) break;
    if (IdleLocked()) break;
    // The first queued request e may take: not one e sent back while its
    // outage is being looked into.
    auto next = queue_.begin();
    if (!avoid_.empty())
      while (next != queue_.end() && avoid_.count(*next) && avoid_.at(*next) == e) ++next;
    if (!ep.outage && next != queue_.end()) {
      const int64_t r = Reserve(*next);
      const bool fits = ep.capacity <= 0 || ep.in_flight == 0 || ep.reserved + r <= ep.capacity;
      if (fits && ep.in_flight < ep.max_in_flight_cap) {
        end_wait();
        *index = *next;
        queue_.erase(next);
        avoid_.erase(*index);
        Account();
        ++ep.in_flight;
        ++in_flight_;
        ep.reserved += r;
        *epoch = ep.epoch;
        return true;
      }
      // A slot of e is free (a worker of e asks only then) but the tokens do
      // not fit beside e's requests in flight (or fewer are admitted now).
      if (!*waited) {
        *waited = true;
        wait_start = SteadyClock::now();
      }
    }
    // Woken by a release, a return, the end of an outage, or cancel.
    ++slot_waiters_;
    cv_.wait_for(l, std::chrono::milliseconds(200));
    --slot_waiters_;
  }
  end_wait();
  return false;
}

void Scheduler::Release(int e, size_t i, bool answered) {
  std::unique_lock<std::mutex> l(mu_);
  Account();
  Endpoint& ep = eps_[e];
  --ep.in_flight;
  --in_flight_;
  ep.reserved -= Reserve(i);
  if (answered && ep.max_in_flight_cap != kNoCap && ++ep.answers_since_cap >= kRecoverAfterAnswers) {
    ep.answers_since_cap = 0;
    ++ep.max_in_flight_cap;
    if (ep.max_in_flight_cap >= ep.cap_before) ep.max_in_flight_cap = kNoCap;
  }
  // Only a worker waiting for room, or a wait for the end, wants to know: a
  // wake-up per answer of a thread that only waits for the end cost it 30 ms
  // of CPU over 600 answers.
  const bool wake = slot_waiters_ > 0 || IdleLocked();
  l.unlock();
  if (wake) cv_.notify_all();
}

bool Scheduler::ReturnForCapacity(int e, size_t i, int epoch, bool* tightened) {
  std::lock_guard<std::mutex> l(mu_);
  Endpoint& ep = eps_[e];
  *tightened = false;
  if (epoch == ep.epoch) {
    const int64_t r = Reserve(i);
    if (ep.reserved > 0) {
      const int64_t lowered = std::max(r, ep.reserved / 2);
      ep.capacity = ep.capacity > 0 ? std::min(ep.capacity, lowered) : lowered;
    }
    // Without token counts, admit fewer at once instead.
    if (r == 0) {
      if (ep.max_in_flight_cap == kNoCap) ep.cap_before = ep.in_flight;
      ep.max_in_flight_cap = std::max(1, std::min(ep.max_in_flight_cap, ep.in_flight / 2));
      ep.answers_since_cap = 0;
    }
    ++ep.epoch;
    *tightened = true;
  }
  return ReturnLocked(ep, i);
}

bool Scheduler::ReturnForOutage(int e, size_t i) {
  std::lock_guard<std::mutex> l(mu_);
  ++eps_[e].requeued_in_outage;
  if (!ReturnLocked(eps_[e], i)) return false;
  avoid_[i] = e;
  return true;
}

bool Scheduler::Reclaim(int e, size_t i) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = std::find(queue_.begin(), queue_.end(), i);
  if (it == queue_.end()) return false;
  queue_.erase(it);
  avoid_.erase(i);
  --returns_[i];
  // In flight on e again until the caller releases it.
  Account();
  ++eps_[e].in_flight;
  ++in_flight_;
  eps_[e].reserved += Reserve(i);
  return true;
}

bool Scheduler::BeginOutage(int e) {
  std::lock_guard<std::mutex> l(mu_);
  Endpoint& ep = eps_[e];
  if (ep.outage) return false;
  ep.outage = true;
  return true;
}

int Scheduler::EndOutage(int e, bool was_down) {
  std::lock_guard<std::mutex> l(mu_);
  Endpoint& ep = eps_[e];
  ep.outage = false;
  ep.last_outage_down = was_down;
  // It had been down: what it sent back may go anywhere now, e included.
  if (was_down)
    for (auto it = avoid_.begin(); it != avoid_.end();) it = it->second == e ? avoid_.erase(it) : std::next(it);
  cv_.notify_all();
  const int requeued = ep.requeued_in_outage;
  ep.requeued_in_outage = 0;
  return requeued;
}

bool Scheduler::WaitOutage(int e, CancelToken* cancel) {
  std::unique_lock<std::mutex> l(mu_);
  while (eps_[e].outage && !stopping_ && !(cancel && cancel->cancelled())) cv_.wait_for(l, std::chrono::milliseconds(200));
  // Stopped or cancelled while it was still on: not known to be the
  // request's own failure, so it stays queued (asked again on resume).
  if (eps_[e].outage) return true;
  return eps_[e].last_outage_down;
}

int Scheduler::Drop(int e, bool* first) {
  std::lock_guard<std::mutex> l(mu_);
  *first = !eps_[e].dropped;
  if (*first) {
    eps_[e].dropped = true;
    --live_;
  }
  cv_.notify_all();
  return live_;
}

bool Scheduler::dropped(int e) {
  std::lock_guard<std::mutex> l(mu_);
  return eps_[e].dropped;
}

bool Scheduler::Idle() {
  std::lock_guard<std::mutex> l(mu_);
  return IdleLocked();
}

int Scheduler::InFlight() {
  std::lock_guard<std::mutex> l(mu_);
  return in_flight_;
}

void Scheduler::WaitIdle(CancelToken* cancel) {
  std::unique_lock<std::mutex> l(mu_);
  while (!IdleLocked() && !stopping_ && !(cancel && cancel->cancelled())) cv_.wait_for(l, std::chrono::milliseconds(1000));
}

void Scheduler::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  stopping_ = true;
  cv_.notify_all();
}

int64_t Scheduler::capacity(int e) {
  std::lock_guard<std::mutex> l(mu_);
  return eps_[e].capacity;
}

double Scheduler::MeanInFlight() {
  std::lock_guard<std::mutex> l(mu_);
  Account();
  return busy_time_ > 0 ? weighted_ / busy_time_ : 0;
}

bool Scheduler::ReturnLocked(Endpoint& ep, size_t i) {
  Account();
  --ep.in_flight;
  --in_flight_;
  ep.reserved -= Reserve(i);
  cv_.notify_all();
  if (++returns_[i] > max_returns_) return false;
  queue_.push_front(i);
  return true;
}

// Adds the time since the last change, weighted by the requests in flight.
void Scheduler::Account() {
  const auto now = SteadyClock::now();
  const double dt = std::chrono::duration<double>(now - last_change_).count();
  weighted_ += dt * in_flight_;
  busy_time_ += dt;
  last_change_ = now;
}

}  // namespace evalrun::pool_internal
