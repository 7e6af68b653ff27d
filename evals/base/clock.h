// The clock, behind a small interface (after LevelDB's Env::NowMicros and
// Env::SleepForMicroseconds): the real one reads the system and sleeps, tests
// use a fake they move by hand (tests/support/fake_clock.h), whose sleeps
// return at once. The load sampler reads it; the client's retry backoff and
// the managed engine's health polling and stop grace wait on it (each takes
// a Clock*, defaulting to RealClock::Default()).
//
// Thread-safety: implementations must be safe to call from several threads
// at once (RealClock is stateless).
#ifndef EVALRUN_EVALS_BASE_CLOCK_H_
#define EVALRUN_EVALS_BASE_CLOCK_H_

#include <string>

#include "evals/base/cancel.h"

namespace evalrun {

class Clock {
 public:
  virtual ~Clock() = default;

  // Seconds on a clock that never goes backwards (CLOCK_MONOTONIC); only
  // differences mean anything.
  virtual double MonotonicSeconds() = 0;

  // The wall-clock time now in UTC, ISO 8601 with milliseconds:
  // "2025-11-30T04:10:00.123Z".
  virtual std::string UtcIso8601() = 0;

  // CPU seconds (user + system) used so far by the calling thread; lets a
  // component measure its own cost. Fakes may return 0.
  virtual double ThreadCpuSeconds() = 0;

  // Waits `seconds` (nothing when <= 0) on this clock. Returns false as soon
  // as `cancel` (may be null) is cancelled, before or during the wait; true
  // when the time has passed. MonotonicSeconds() has moved on by at least
  // `seconds` after a true return.
  virtual bool SleepFor(double seconds, CancelToken* cancel) = 0;
};

class RealClock : public Clock {
 public:
  double MonotonicSeconds() override;
  std::string UtcIso8601() override;
  double ThreadCpuSeconds() override;
  // CancelToken::SleepFor with a token (Cancel() wakes it), else nanosleep.
  bool SleepFor(double seconds, CancelToken* cancel) override;

  // A process-wide instance (never destroyed).
  static RealClock* Default();
};

// Seconds since it was made (or restarted), on a clock that is not owned.
class Stopwatch {
 public:
  explicit Stopwatch(Clock* clock) : clock_(clock), start_(clock->MonotonicSeconds()) {}
  double Seconds() const { return clock_->MonotonicSeconds() - start_; }
  void Restart() { start_ = clock_->MonotonicSeconds(); }

 private:
  Clock* clock_;
  double start_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_CLOCK_H_
