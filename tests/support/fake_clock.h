// A Clock (evals/base/clock.h) moved by hand: time stands still until a test
// calls Advance() or something sleeps on it, and a sleep returns at once
// having moved the time on by what it asked for. Retry backoff, health
// polling and stop grace run in microseconds, and what they waited is
// recorded (sleeps()). Tests only.
//
//   testing::FakeClock clock;                 // 2025-11-30T04:10:00.000Z
//   OpenAiClient client(std::move(transport), server, retry, nullptr, &clock);
//   client.Complete(prompt);
//   EXPECT_EQ(clock.sleeps(), (std::vector<double>{1, 2}));
//
// Thread-safe: every method may be called from any thread.
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_CLOCK_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_CLOCK_H_

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "evals/base/clock.h"

namespace evalrun::testing {

class FakeClock : public Clock {
 public:
  // The wall clock's reading at MonotonicSeconds() == 0: 2025-11-30T04:10:00Z.
  static constexpr double kStartUnixSeconds = 1764475800.0;

  double MonotonicSeconds() override;
  // FormatUtcIso8601(kStartUnixSeconds + MonotonicSeconds()).
  std::string UtcIso8601() override;
  double ThreadCpuSeconds() override { return 0; }
  // False at once (time unmoved) when `cancel` is already cancelled; else
  // records `seconds`, moves the time on by it (when > 0), calls the sleep
  // hook, and returns false if `cancel` was cancelled meanwhile (by the
  // hook), true otherwise.
  bool SleepFor(double seconds, CancelToken* cancel) override;

  void Advance(double seconds);

  // Every SleepFor's `seconds`, in call order (cancelled ones excepted).
  std::vector<double> sleeps() const;
  // Their sum.
  double slept() const;

  // Called (outside the clock's lock) after each sleep has moved the time,
  // with what it asked for: a test can cancel, change what a fake server
  // answers, or give a real child process a moment to run (tests of the
  // managed engine wait on real processes while their deadlines run here).
  void set_sleep_hook(std::function<void(double seconds)> hook);

 private:
  mutable std::mutex mu_;
  double now_ = 0;
  std::vector<double> sleeps_;
  std::function<void(double)> hook_;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_CLOCK_H_
