// The clock, behind a small interface (after LevelDB's Env::NowMicros): the
// real one reads the system, tests use a fake they move by hand.
//
// Thread-safety: implementations must be safe to call from several threads
// at once (RealClock is stateless).
#ifndef EVALRUN_EVALS_BASE_CLOCK_H_
#define EVALRUN_EVALS_BASE_CLOCK_H_

#include <string>

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
};

class RealClock : public Clock {
 public:
  double MonotonicSeconds() override;
  std::string UtcIso8601() override;
  double ThreadCpuSeconds() override;

  // A process-wide instance (never destroyed).
  static RealClock* Default();
};

// Formats seconds since the Unix epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string FormatUtcIso8601(double unix_seconds);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_CLOCK_H_
