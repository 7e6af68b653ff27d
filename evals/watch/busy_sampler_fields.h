// How the load sampler writes numbers and names into its JSON (internal to
// evals/watch: busy_sampler.cc, busy_sampler_gpu.cc, busy_sampler_report.cc).
// Pure functions.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_WATCH_BUSY_SAMPLER_FIELDS_H_
#define EVALRUN_EVALS_WATCH_BUSY_SAMPLER_FIELDS_H_

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::busy {

inline double Round1(double v) { return std::round(v * 10.0) / 10.0; }
inline double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// The number, or null when it is unknown.
inline nlohmann::json OptNumber(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// comm and cmdline are bytes, not text: a process may name itself
// "\xff". nlohmann::json throws on invalid UTF-8 when it dumps, so every
// process-supplied string is made valid first (each byte that starts no
// well-formed sequence becomes U+FFFD).
std::string ValidUtf8(std::string_view in);

}  // namespace evalrun::busy

#endif  // EVALRUN_EVALS_WATCH_BUSY_SAMPLER_FIELDS_H_
