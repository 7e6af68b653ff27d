// The fake llama-server's slots and KV cache, modelled on llama-server
// b10470 (tools/server/server-context.cpp, checked against the real binary):
//   - `slots` slots; a request beyond them waits ("deferred") and waiters
//     are not served in arrival order (a seeded pick among them);
//   - a free slot is chosen by prompt similarity (the longest common token
//     prefix with what the slot holds, if over 10 % of the prompt), else the
//     least recently used; that prefix is the request's cached tokens
//     (at most prompt - 1: one token is always evaluated);
//   - with a unified KV cache (kv_unified) the running requests share one
//     pool of kv_size cells: each holds its prompt plus the tokens generated
//     so far (the generation advancing evenly over its service time), and
//     when together they outgrow the pool every running request fails at
//     once (llama-server: "decode: failed to find free space in the KV
//     cache", then HTTP 500 "Context size has been exceeded.");
//   - the counters of GET /metrics and the state of GET /slots.
//
// Thread-safe; each request's handler thread calls Admit, Generate and
// Release for its own task.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_SLOTS_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_SLOTS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

struct FakeSlotsConfig {
  int slots = 4;
  int n_ctx_slot = 8192;    // what one request may hold
  bool kv_unified = false;
  int kv_size = 32768;      // cells of the shared pool (with kv_unified)
};

// What GET /metrics reports (llama-server's server_metrics).
struct FakeMetrics {
  uint64_t prompt_tokens_total = 0;         // processed, cached excluded
  uint64_t prompt_tokens_cached_total = 0;
  double prompt_seconds_total = 0;
  uint64_t tokens_predicted_total = 0;
  double tokens_predicted_seconds_total = 0;
  uint64_t n_decode_total = 0;
  uint64_t n_tokens_max = 0;                // prompt + generation, the largest seen
  double prompt_tokens_seconds = 0;         // since the previous scrape
  double predicted_tokens_seconds = 0;      // since the previous scrape
  int requests_processing = 0;
  int requests_deferred = 0;
  double n_busy_slots_per_decode = 0;
};

class FakeSlots {
 public:
  enum class Outcome {
    kDone,      // generated all its tokens
    kOverflow,  // failed with every running request: the shared pool was outgrown (or ForceOverflow)
    kGone,      // the client went away (llama-server cancels the task)
    kStopped,   // Shutdown()
    kTooLong,   // Admit: the prompt has n_ctx_slot tokens or more (the slot is free again)
    kPending,   // Generate: `max_wait_ms` passed before `until` tokens (*k says how many)
  };

  struct Admission {
    int prompt_tokens = 0;
    std::vector<uint64_t> prompt_hashes;  // one per prompt token, BOS included
    int n_predict = -1;                   // the request's limit (-1: none), for /slots
    nlohmann::ordered_json params;        // what /slots shows as the task's "params"
    bool cache_prompt = true;             // false: nothing is reused from the slot's cache
    int force_cache_n = -1;               // >= 0: this many tokens count as cached whatever the slot holds
  };

  // When the tokens of a generation are due, in ms from admission.
  // first_ms == 0: evenly over service_ms (token k at k * service_ms /
  // n_gen). first_ms > 0: the first at first_ms, the rest evenly from there
  // to service_ms (a prefill, then a steady decode).
  struct Pace {
    double service_ms = 0;
    double first_ms = 0;
  };

  explicit FakeSlots(FakeSlotsConfig config);

  // Takes effect for requests admitted later (slots may grow or shrink).
  void Configure(const FakeSlotsConfig& config);
  FakeSlotsConfig config() const;
  // Wakes every waiting and running request: they return kStopped.
  void Shutdown();

  // Waits for a free slot (deferred meanwhile; `gone` is polled). Then,
  // as llama-server in the slot, refuses a prompt of n_ctx_slot tokens or
  // more (kTooLong). On kDone: *task is the task id, *cached the prompt
  // tokens reused from the slot's cache, and the task holds its prompt in
  // the KV cache (which may overflow a unified pool: then kOverflow, and
  // every running request fails). The generation's clock starts now.
  Outcome Admit(const Admission& a, const std::function<bool()>& gone, int* task, int* cached);
  // Generation of `n_gen` tokens over `service_ms` from admission (0: at
  // once): waits until at least `until` tokens are generated (or all), sets
  // *k to the count so far and returns kDone. Ends early with kOverflow,
  // kGone or kStopped (the slot is then released), or kPending once
  // `max_wait_ms` (when >= 0) has passed. Called again with a larger
  // `until` it goes on.
  Outcome Generate(int task, int n_gen, int service_ms, int until, int* k, const std::function<bool()>& gone);
  Outcome Generate(int task, int n_gen, Pace pace, int until, int* k, const std::function<bool()>& gone,
                   double max_wait_ms = -1);
  // Frees the slot after kDone (also after a rejected prompt: n_gen 0,
  // keep_cache false).
  void Release(int task, bool keep_cache);
  // Every running request fails with kOverflow now (Fault::kContextOverflow).
  void ForceOverflow();

  nlohmann::ordered_json SlotsJson() const;  // GET /slots
  FakeMetrics ScrapeMetrics();        // GET /metrics (restarts the rate window)
  int running() const;
  int waiting() const;
  int idle_slots() const;
  int max_running() const;   // the most requests running at once
  int max_deferred() const;  // the most requests waiting for a slot at once

 private:
  struct Slot {
    int id = 0;
    int task = -1;         // running task, -1 when idle
    int last_task = -1;    // for /slots of an idle slot
    int64_t t_last = -1;   // for LRU
    std::vector<uint64_t> cache;  // token hashes it holds
    int n_cached_tokens = 0;      // what it holds after a task (prompt + generated - 1)
    // The running (or last) task's state.
    int prompt_tokens = 0, processed = 0, cached = 0, n_predict = -1, n_decoded = 0;
    bool has_next_token = true;
    nlohmann::ordered_json params;
    std::chrono::steady_clock::time_point start;  // admission
    bool timed = false;                           // generation seconds counted
  };

  Slot* FindTask(int task);
  int HeldLocked() const;                 // cells held by the running requests
  void OverflowLocked();                  // every running request fails
  void FreeLocked(Slot* s, bool keep_cache);
  void CountDecodesLocked(double tokens, int batches);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  FakeSlotsConfig config_;
  std::vector<Slot> slots_;
  bool shutdown_ = false;
  int next_task_ = 0;
  int64_t clock_ = 0;                     // LRU ticks
  std::set<int> failed_;                  // tasks failed by an overflow, until their thread sees it
  int max_running_ = 0, max_deferred_ = 0;
  uint64_t pick_state_ = 0x9E3779B97F4A7C15ull;  // the seeded pick among waiters
  std::vector<uint64_t> waiters_;         // waiting tickets, arrival order
  uint64_t next_ticket_ = 1;
  uint64_t chosen_ticket_ = 0;            // the waiter that may take the next free slot
  FakeMetrics m_;
  double decode_steps_ = 0, busy_slot_steps_ = 0;
  uint64_t bucket_prompt_tokens_ = 0, bucket_predicted_tokens_ = 0;
  double bucket_prompt_s_ = 0, bucket_predicted_s_ = 0;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_SLOTS_H_
