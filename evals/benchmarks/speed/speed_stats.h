// The speed part's statistics: a step's figure is the median of
// its requests (or rounds) with the min, the max and n, never a mean with a
// standard deviation from two numbers and never a p99 across runs; the gaps
// between streamed chunks are summarised only within one request.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_STATS_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_STATS_H_

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// {"median", "min", "max", "n"} of the values (median of an even count: the
// mean of the middle two); n 0 gives nulls. NaN values are left out.
nlohmann::json SpreadJson(std::vector<double> values);

// The median, nullopt when empty.
std::optional<double> Median(std::vector<double> values);

// The p-th percentile (0..100) by linear interpolation between closest
// ranks (numpy's default); nullopt when empty.
std::optional<double> Percentile(std::vector<double> values, double p);

// Within one request: the gaps between consecutive text chunks (ms) as
// {"n", "p50_ms", "p90_ms", "p99_ms" (only with 100 gaps or more, else
// null), "max_ms"}; null with fewer than two chunks.
nlohmann::json ChunkGapsJson(const std::vector<double>& chunk_times_s);

// The clocks of one request, -1 where they cannot be computed:
//   client decode = (completion_tokens - 1) / (last_token_s - first_token_s)
//   server decode = predicted_n / predicted_ms x 1000
//   client prefill = prompt_tokens / first_token_s (TTFT)
//   server prefill = prompt_n / prompt_ms x 1000
struct RequestRates {
  double client_decode_tps = -1, server_decode_tps = -1;
  double client_prefill_tps = -1, server_prefill_tps = -1;
};
RequestRates ComputeRates(int prompt_tokens, int completion_tokens, double first_token_s, double last_token_s,
                          double prompt_n, double prompt_ms, double predicted_n, double predicted_ms);

// (client - server) / server x 100; nullopt unless both are positive.
std::optional<double> GapPct(double client, double server);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_STATS_H_
