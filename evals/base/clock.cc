#include "evals/base/clock.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace evalrun {

double RealClock::MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string RealClock::UtcIso8601() {
  return FormatUtcIso8601(
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
}

double RealClock::ThreadCpuSeconds() {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

RealClock* RealClock::Default() {
  static RealClock* clock = new RealClock();
  return clock;
}

std::string FormatUtcIso8601(double unix_seconds) {
  double whole = std::floor(unix_seconds);
  int millis = static_cast<int>(std::lround((unix_seconds - whole) * 1000.0));
  time_t secs = static_cast<time_t>(whole);
  if (millis >= 1000) {  // 0.9996 rounds up into the next second
    millis -= 1000;
    secs += 1;
  }
  struct tm tm_utc;
  gmtime_r(&secs, &tm_utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm_utc.tm_year + 1900,
                tm_utc.tm_mon + 1, tm_utc.tm_mday, tm_utc.tm_hour, tm_utc.tm_min, tm_utc.tm_sec,
                millis);
  return buf;
}

}  // namespace evalrun
