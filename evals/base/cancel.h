// A cancellation flag that sleeping threads can wait on (backoff sleeps,
// health polling, the pool's pause) so Ctrl-C takes effect at once.
#ifndef EVALRUN_EVALS_BASE_CANCEL_H_
#define EVALRUN_EVALS_BASE_CANCEL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace evalrun {

// Thread-safe.
class CancelToken {
 public:
  void Cancel() {
    {
      std::lock_guard<std::mutex> l(mu_);
      cancelled_.store(true);
    }
    cv_.notify_all();
  }
  bool cancelled() const { return cancelled_.load(); }

  // Sleeps up to `seconds`; returns false when cancelled before or during it.
  bool SleepFor(double seconds) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::duration<double>(seconds), [&] { return cancelled_.load(); });
    return !cancelled_.load();
  }

 private:
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_CANCEL_H_
