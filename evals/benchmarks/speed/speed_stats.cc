#include "evals/benchmarks/speed/speed_stats.h"

#include <algorithm>
#include <cmath>

namespace evalrun {
namespace {

std::vector<double> Clean(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

std::optional<double> Percentile(std::vector<double> values, double p) {
  values = Clean(std::move(values));
  if (values.empty()) return std::nullopt;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

std::optional<double> Median(std::vector<double> values) { return Percentile(std::move(values), 50); }

nlohmann::json SpreadJson(std::vector<double> values) {
  values = Clean(std::move(values));
  nlohmann::json j = {{"median", nullptr}, {"min", nullptr}, {"max", nullptr}, {"n", values.size()}};
  if (values.empty()) return j;
  j["median"] = *Median(values);
  j["min"] = values.front();
  j["max"] = values.back();
  return j;
}

nlohmann::json ChunkGapsJson(const std::vector<double>& chunk_times_s) {
  if (chunk_times_s.size() < 2) return nullptr;
  std::vector<double> gaps;
  gaps.reserve(chunk_times_s.size() - 1);
  for (size_t i = 1; i < chunk_times_s.size(); ++i) gaps.push_back((chunk_times_s[i] - chunk_times_s[i - 1]) * 1000);
  nlohmann::json j;
  j["n"] = gaps.size();
  j["p50_ms"] = *Percentile(gaps, 50);
  j["p90_ms"] = *Percentile(gaps, 90);
  j["p99_ms"] = gaps.size() >= 100 ? nlohmann::json(*Percentile(gaps, 99)) : nlohmann::json(nullptr);
  j["max_ms"] = *std::max_element(gaps.begin(), gaps.end());
  return j;
}

RequestRates ComputeRates(int prompt_tokens, int completion_tokens, double first_token_s, double last_token_s,
                          double prompt_n, double prompt_ms, double predicted_n, double predicted_ms) {
  RequestRates r;
  if (completion_tokens >= 2 && first_token_s >= 0 && last_token_s > first_token_s)
    r.client_decode_tps = (completion_tokens - 1) / (last_token_s - first_token_s);
  if (predicted_n > 0 && predicted_ms > 0) r.server_decode_tps = predicted_n / predicted_ms * 1000;
  if (prompt_tokens > 0 && first_token_s > 0) r.client_prefill_tps = prompt_tokens / first_token_s;
  if (prompt_n > 0 && prompt_ms > 0) r.server_prefill_tps = prompt_n / prompt_ms * 1000;
  return r;
}

std::optional<double> GapPct(double client, double server) {
  if (!(client > 0) || !(server > 0)) return std::nullopt;
  return (client - server) / server * 100;
}

}  // namespace evalrun
