// Wall-clock times as text, in UTC, in the three forms evalrun writes:
//   FormatUtcIso8601  "2025-11-30T04:10:00.123Z"  load.jsonl, server.log lines
//   FormatUtcSeconds  "2025-11-30T04:10:00Z"      run.json, samples (started_utc, ...)
//   FormatUtcCompact  "20251130T041000Z"          default job names
// Each takes seconds since the Unix epoch (UnixSecondsNow() for now, or a
// Clock's reading); the last two truncate to the second, as strftime does.
// Pure functions, safe on any thread.
#ifndef EVALRUN_EVALS_BASE_TIME_TEXT_H_
#define EVALRUN_EVALS_BASE_TIME_TEXT_H_

#include <string>

namespace evalrun {

// The system clock now, in seconds since the Unix epoch (with fractions).
double UnixSecondsNow();

// Milliseconds rounded to nearest (0.9996 s rounds into the next second).
std::string FormatUtcIso8601(double unix_seconds);
std::string FormatUtcSeconds(double unix_seconds);
std::string FormatUtcCompact(double unix_seconds);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_TIME_TEXT_H_
