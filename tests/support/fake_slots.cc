#include "tests/support/fake_slots.h"

#include <algorithm>
#include <cmath>

namespace evalrun::testing {
namespace {

// llama-server's defaults: a prompt batch of 2048 tokens, slot_prompt_similarity 0.1.
constexpr int kBatch = 2048;
constexpr double kPromptSimilarity = 0.1;
// The fake's prompt processing speed, for the seconds /metrics reports.
constexpr double kPromptSecondsPerToken = 1e-4;

size_t CommonPrefix(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t n = std::min(a.size(), b.size()), i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The tokens of n_gen due `elapsed_ms` after admission, and when the next
// one is due (ms from admission; +inf when none is left).
int DueTokens(int n_gen, const FakeSlots::Pace& p, double elapsed_ms, double* next_ms) {
  *next_ms = 1e300;
  if (p.service_ms <= 0 || n_gen <= 0) return n_gen;
  if (p.first_ms <= 0) {
    if (elapsed_ms >= p.service_ms) return n_gen;
    const int due = static_cast<int>(static_cast<double>(n_gen) * elapsed_ms / p.service_ms);
    *next_ms = p.service_ms * (due + 1) / n_gen;
    return due;
  }
  if (elapsed_ms < p.first_ms) {
    *next_ms = p.first_ms;
    return 0;
  }
  const double step = n_gen > 1 ? std::max(0.0, p.service_ms - p.first_ms) / (n_gen - 1) : 0;
  if (step <= 0) return n_gen;
  const int due = std::min(n_gen, 1 + static_cast<int>((elapsed_ms - p.first_ms) / step));
  if (due < n_gen) *next_ms = p.first_ms + due * step;
  return due;
}

}  // namespace

FakeSlots::FakeSlots(FakeSlotsConfig config) { Configure(config); }

void FakeSlots::Configure(const FakeSlotsConfig& config) {
  std::lock_guard<std::mutex> l(mu_);
  config_ = config;
  config_.slots = std::max(1, config_.slots);
  // Shrinking keeps busy slots until they finish (they are only taken
  // while idle and within config_.slots).
  while (static_cast<int>(slots_.size()) < config_.slots) {
    Slot s;
    s.id = static_cast<int>(slots_.size());
    slots_.push_back(s);
  }
  cv_.notify_all();
}

FakeSlotsConfig FakeSlots::config() const {
  std::lock_guard<std::mutex> l(mu_);
  return config_;
}

void FakeSlots::Shutdown() {
  std::lock_guard<std::mutex> l(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

FakeSlots::Slot* FakeSlots::FindTask(int task) {
  for (auto& s : slots_)
    if (s.task == task) return &s;
  return nullptr;
}

int FakeSlots::HeldLocked() const {
  int held = 0;
  for (const auto& s : slots_)
    if (s.task >= 0) held += s.prompt_tokens + s.n_decoded;
  return held;
}

int FakeSlots::running() const {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (const auto& s : slots_) n += s.task >= 0;
  return n;
}

int FakeSlots::waiting() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(waiters_.size());
}

int FakeSlots::idle_slots() const {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (int i = 0; i < config_.slots && i < static_cast<int>(slots_.size()); ++i) n += slots_[i].task < 0;
  return n;
}

void FakeSlots::CountDecodesLocked(double tokens, int batches) {
  int busy = 0;
  for (const auto& s : slots_) busy += s.task >= 0;
  busy = std::max(1, busy);
  // Running requests share each llama_decode() call: one step decodes a
  // token of every busy slot.
  decode_steps_ += tokens / busy + batches;
  busy_slot_steps_ += tokens + static_cast<double>(batches) * busy;
  m_.n_decode_total = static_cast<uint64_t>(std::llround(decode_steps_));
}

FakeSlots::Outcome FakeSlots::Admit(const Admission& a, const std::function<bool()>& gone, int* task, int* cached) {
  std::unique_lock<std::mutex> l(mu_);
  const uint64_t ticket = next_ticket_++;
  waiters_.push_back(ticket);
  auto leave = [&] {
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), ticket));
    if (chosen_ticket_ == ticket) chosen_ticket_ = 0;
    cv_.notify_all();
  };
  Slot* slot = nullptr;
  for (;;) {
    if (shutdown_) {
      leave();
      return Outcome::kStopped;
    }
    std::vector<Slot*> idle;
    for (int i = 0; i < config_.slots; ++i)
      if (slots_[i].task < 0) idle.push_back(&slots_[i]);
    if (!idle.empty()) {
      // Waiters are not served in arrival order: one is picked (seeded).
      if (chosen_ticket_ == 0) {
        pick_state_ ^= pick_state_ << 13;
        pick_state_ ^= pick_state_ >> 7;
        pick_state_ ^= pick_state_ << 17;
        chosen_ticket_ = waiters_[pick_state_ % waiters_.size()];
        cv_.notify_all();
      }
      if (chosen_ticket_ == ticket) {
        // The slot: the most similar cache, else the least recently used.
        size_t best = 0;
        for (Slot* s : idle) {
          size_t lcp = CommonPrefix(a.prompt_hashes, s->cache);
          if (lcp > best && lcp > kPromptSimilarity * a.prompt_hashes.size()) {
            best = lcp;
            slot = s;
          }
        }
        if (slot == nullptr)
          for (Slot* s : idle)
            if (slot == nullptr || s->t_last < slot->t_last) slot = s;
        chosen_ticket_ = 0;
        waiters_.erase(std::find(waiters_.begin(), waiters_.end(), ticket));
        cv_.notify_all();
        break;
      }
    }
    const int deferred = static_cast<int>(waiters_.size()) - static_cast<int>(idle.size());
    max_deferred_ = std::max(max_deferred_, deferred);
    cv_.wait_for(l, std::chrono::milliseconds(20));
    if (gone && gone()) {
      leave();
      return Outcome::kGone;
    }
  }

  int lcp = a.cache_prompt ? static_cast<int>(CommonPrefix(a.prompt_hashes, slot->cache)) : 0;
  if (a.force_cache_n >= 0) lcp = a.force_cache_n;
  slot->task = *task = next_task_++;
  slot->start = std::chrono::steady_clock::now();
  slot->timed = false;
  slot->prompt_tokens = a.prompt_tokens;
  slot->cached = *cached = std::max(0, std::min(lcp, a.prompt_tokens - 1));
  slot->processed = a.prompt_tokens - slot->cached;
  slot->n_predict = a.n_predict;
  slot->n_decoded = 0;
  slot->has_next_token = true;
  slot->params = a.params;
  if (a.prompt_tokens >= config_.n_ctx_slot) {  // llama-server's check, in the slot
    slot->prompt_tokens = 0;
    slot->last_task = slot->task;
    slot->task = -1;
    slot->t_last = ++clock_;
    slot->processed = slot->cached = 0;
    slot->n_predict = -1;
    *cached = 0;
    cv_.notify_all();
    return Outcome::kTooLong;
  }
  slot->cache = a.prompt_hashes;
  int running = 0;
  for (const auto& s : slots_) running += s.task >= 0;
  max_running_ = std::max(max_running_, running);

  m_.prompt_tokens_total += static_cast<uint64_t>(slot->processed);
  m_.prompt_tokens_cached_total += static_cast<uint64_t>(slot->cached);
  m_.prompt_seconds_total += slot->processed * kPromptSecondsPerToken;
  m_.n_tokens_max = std::max<uint64_t>(m_.n_tokens_max, static_cast<uint64_t>(a.prompt_tokens));
  bucket_prompt_tokens_ += static_cast<uint64_t>(slot->processed);
  bucket_prompt_s_ += slot->processed * kPromptSecondsPerToken;
  CountDecodesLocked(0, (slot->processed + kBatch - 1) / kBatch);

  if (config_.kv_unified && HeldLocked() > config_.kv_size) {
    OverflowLocked();
    failed_.erase(*task);
    return Outcome::kOverflow;
  }
  return Outcome::kDone;
}

FakeSlots::Outcome FakeSlots::Generate(int task, int n_gen, int service_ms, int until, int* k,
                                       const std::function<bool()>& gone) {
  return Generate(task, n_gen, Pace{static_cast<double>(service_ms), 0}, until, k, gone);
}

FakeSlots::Outcome FakeSlots::Generate(int task, int n_gen, Pace pace, int until, int* k,
                                       const std::function<bool()>& gone, double max_wait_ms) {
  std::unique_lock<std::mutex> l(mu_);
  const auto called = std::chrono::steady_clock::now();
  for (;;) {
    if (failed_.erase(task)) return Outcome::kOverflow;
    Slot* s = FindTask(task);
    if (s == nullptr) return Outcome::kStopped;
    if (shutdown_) {
      FreeLocked(s, false);
      return Outcome::kStopped;
    }
    const auto now = std::chrono::steady_clock::now();
    const double elapsed_ms = Seconds(now - s->start) * 1000;
    double next_ms = 0;
    const int due = DueTokens(n_gen, pace, elapsed_ms, &next_ms);
    if (due > s->n_decoded) {
      const int delta = due - s->n_decoded;
      s->n_decoded = due;
      m_.n_tokens_max = std::max<uint64_t>(m_.n_tokens_max, static_cast<uint64_t>(s->prompt_tokens + due));
      CountDecodesLocked(delta, 0);
      if (config_.kv_unified && HeldLocked() > config_.kv_size) {
        OverflowLocked();
        failed_.erase(task);
        return Outcome::kOverflow;
      }
    }
    *k = s->n_decoded;
    if (s->n_decoded >= n_gen && !s->timed) {
      s->timed = true;
      m_.tokens_predicted_seconds_total += Seconds(now - s->start);
      bucket_predicted_s_ += Seconds(now - s->start);
    }
    if (s->n_decoded >= std::min(until, n_gen)) return Outcome::kDone;
    if (gone && gone()) {
      FreeLocked(s, true);
      return Outcome::kGone;
    }
    // Wake when the next token is due (the planted times hold to well
    // under a millisecond), at least every 5 ms to see the client leave.
    double wait_ms = std::clamp(next_ms - elapsed_ms, 0.01, 5.0);
    if (max_wait_ms >= 0) {
      const double left_ms = max_wait_ms - Seconds(now - called) * 1000;
      if (left_ms <= 0) return Outcome::kPending;
      wait_ms = std::min(wait_ms, left_ms);
    }
    cv_.wait_for(l, std::chrono::microseconds(static_cast<int64_t>(wait_ms * 1000) + 1));
  }
}

void FakeSlots::FreeLocked(Slot* s, bool keep_cache) {
  m_.tokens_predicted_total += static_cast<uint64_t>(s->n_decoded);
  bucket_predicted_tokens_ += static_cast<uint64_t>(s->n_decoded);
  s->last_task = s->task;
  s->task = -1;
  s->t_last = ++clock_;
  if (keep_cache) {
    s->n_cached_tokens = std::max(0, s->prompt_tokens + s->n_decoded - 1);
    s->has_next_token = false;
  } else {
    s->cache.clear();
    s->n_cached_tokens = 0;
  }
  s->processed = s->cached = s->n_decoded = 0;
  s->n_predict = -1;
  cv_.notify_all();
}

void FakeSlots::Release(int task, bool keep_cache) {
  std::lock_guard<std::mutex> l(mu_);
  failed_.erase(task);
  if (Slot* s = FindTask(task)) FreeLocked(s, keep_cache);
}

void FakeSlots::OverflowLocked() {
  for (auto& s : slots_) {
    if (s.task < 0) continue;
    failed_.insert(s.task);
    FreeLocked(&s, false);  // llama-server clears the whole prompt of each
  }
}

void FakeSlots::ForceOverflow() {
  std::lock_guard<std::mutex> l(mu_);
  OverflowLocked();
}

int FakeSlots::max_running() const {
  std::lock_guard<std::mutex> l(mu_);
  return max_running_;
}

int FakeSlots::max_deferred() const {
  std::lock_guard<std::mutex> l(mu_);
  return max_deferred_;
}

nlohmann::ordered_json FakeSlots::SlotsJson() const {
  std::lock_guard<std::mutex> l(mu_);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int i = 0; i < config_.slots; ++i) {
    const Slot& s = slots_[i];
    nlohmann::ordered_json j;
    j["id"] = s.id;
    j["n_ctx"] = config_.n_ctx_slot;
    j["speculative"] = false;
    j["is_processing"] = s.task >= 0;
    const int shown = s.task >= 0 ? s.task : s.last_task;
    if (shown >= 0) {
      j["id_task"] = shown;
      j["n_prompt_tokens"] = s.task >= 0 ? s.prompt_tokens : s.n_cached_tokens;
      j["n_prompt_tokens_processed"] = s.processed;
      j["n_prompt_tokens_cache"] = s.cached;
      j["params"] = s.params;
      j["next_token"] = nlohmann::ordered_json::array(
          {{{"has_next_token", s.has_next_token},
            {"has_new_line", false},
            {"n_remain", s.n_predict < 0 ? -1 : s.n_predict - s.n_decoded},
            {"n_decoded", s.n_decoded}}});
    }
    out.push_back(std::move(j));
  }
  return out;
}

FakeMetrics FakeSlots::ScrapeMetrics() {
  std::lock_guard<std::mutex> l(mu_);
  FakeMetrics m = m_;
  for (const auto& s : slots_) m.requests_processing += s.task >= 0;
  m.requests_deferred = static_cast<int>(waiters_.size());
  m.prompt_tokens_seconds = bucket_prompt_s_ > 0 ? bucket_prompt_tokens_ / bucket_prompt_s_ : 0;
  m.predicted_tokens_seconds = bucket_predicted_s_ > 0 ? bucket_predicted_tokens_ / bucket_predicted_s_ : 0;
  m.n_busy_slots_per_decode = busy_slot_steps_ / std::max(decode_steps_, 1.0);
  bucket_prompt_tokens_ = bucket_predicted_tokens_ = 0;
  bucket_prompt_s_ = bucket_predicted_s_ = 0;
  return m;
}

}  // namespace evalrun::testing
