#include "tests/support/fake_clock.h"

#include <numeric>
#include <utility>

#include "evals/base/time_text.h"

namespace evalrun::testing {

double FakeClock::MonotonicSeconds() {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

std::string FakeClock::UtcIso8601() { return FormatUtcIso8601(kStartUnixSeconds + MonotonicSeconds()); }

bool FakeClock::SleepFor(double seconds, CancelToken* cancel) {
  if (cancel && cancel->cancelled()) return false;
  std::function<void(double)> hook;
  {
    std::lock_guard<std::mutex> l(mu_);
    sleeps_.push_back(seconds);
    if (seconds > 0) now_ += seconds;
    hook = hook_;
  }
  if (hook) hook(seconds);
  return !(cancel && cancel->cancelled());
}

void FakeClock::Advance(double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  now_ += seconds;
}

std::vector<double> FakeClock::sleeps() const {
  std::lock_guard<std::mutex> l(mu_);
  return sleeps_;
}

double FakeClock::slept() const {
  std::lock_guard<std::mutex> l(mu_);
  return std::accumulate(sleeps_.begin(), sleeps_.end(), 0.0);
}

void FakeClock::set_sleep_hook(std::function<void(double seconds)> hook) {
  std::lock_guard<std::mutex> l(mu_);
  hook_ = std::move(hook);
}

}  // namespace evalrun::testing
