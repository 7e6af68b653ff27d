// The wall-clock time as the run folder's files record it.
//
// Thread-safety: safe from any thread.
#ifndef EVALRUN_EVALS_RUN_UTC_NOW_H_
#define EVALRUN_EVALS_RUN_UTC_NOW_H_

#include <string>

namespace evalrun {

// Now in UTC to the second: "2026-11-30T04:05:00Z" (results.json, run.json,
// failed.jsonl, outages). Thread-safe.
std::string UtcNow();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_UTC_NOW_H_
