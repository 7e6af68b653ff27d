#include "evals/base/time_text.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace evalrun {
namespace {

std::string Strftime(double unix_seconds, const char* format) {
  std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace

double UnixSecondsNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

std::string FormatUtcSeconds(double unix_seconds) { return Strftime(unix_seconds, "%Y-%m-%dT%H:%M:%SZ"); }

std::string FormatUtcCompact(double unix_seconds) { return Strftime(unix_seconds, "%Y%m%dT%H%M%SZ"); }

}  // namespace evalrun
