// A cancellation flag that sleeping threads can wait on (backoff sleeps,
// health polling, the pool's pause) so Ctrl-C takes effect at once, and
// what stopping means at the run's present stage (the signal watcher says
// it on the first Ctrl-C: "no new requests; waiting for the answers in
// flight" only while requests are being sent).
#ifndef EVALRUN_EVALS_BASE_CANCEL_H_
#define EVALRUN_EVALS_BASE_CANCEL_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace evalrun {

// Thread-safe.
class CancelToken {
 public:
  void Cancel() {
    {
      std::lock_guard<std::mutex> l(mu_);
      cancelled_.store(true);
      for (CancelToken* t : linked_) t->Cancel();  // under mu_: an Unlink waits for this
    }
    cv_.notify_all();
  }
  // While linked, cancelling this token cancels `child` too (at once when
  // this one is cancelled already): a narrower token (one request pool's
  // waits) follows the run's without a thread polling for it. Unlink
  // before `child` is destroyed.
  void Link(CancelToken* child) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!cancelled_.load()) {
        linked_.push_back(child);
        return;
      }
    }
    child->Cancel();
  }
  void Unlink(CancelToken* child) {
    std::lock_guard<std::mutex> l(mu_);
    linked_.erase(std::remove(linked_.begin(), linked_.end(), child), linked_.end());
  }
  bool cancelled() const { return cancelled_.load(); }

  // What the first Ctrl-C does now, in words ("preparation stops before
  // any request is sent"). `note` must outlive the token (a string literal).
  void SetStopNote(const char* note) { note_.store(note); }
  const char* stop_note() const { return note_.load(); }

  // Sleeps up to `seconds`; returns false when cancelled before or during it.
  bool SleepFor(double seconds) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::duration<double>(seconds), [&] { return cancelled_.load(); });
    return !cancelled_.load();
  }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<const char*> note_{"no new requests; waiting for the answers in flight"};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<CancelToken*> linked_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_CANCEL_H_
