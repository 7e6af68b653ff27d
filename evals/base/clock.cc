#include "evals/base/clock.h"

#include <errno.h>
#include <time.h>

#include <chrono>

#include "evals/base/time_text.h"

namespace evalrun {

double RealClock::MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string RealClock::UtcIso8601() { return FormatUtcIso8601(UnixSecondsNow()); }

double RealClock::ThreadCpuSeconds() {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool RealClock::SleepFor(double seconds, CancelToken* cancel) {
  if (cancel) return cancel->SleepFor(seconds);
  if (seconds <= 0) return true;
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
  return true;
}

RealClock* RealClock::Default() {
  static RealClock* clock = new RealClock();
  return clock;
}

}  // namespace evalrun
