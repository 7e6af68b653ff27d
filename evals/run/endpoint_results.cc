#include "evals/run/endpoint_results.h"

#include <algorithm>
#include <cmath>

#include "evals/run/results.h"
#include "evals/run/verdict.h"

namespace evalrun {
namespace {

// The q-quantile of sorted values (nearest rank), null when there are none.
nlohmann::json Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return nullptr;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return Round(sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)], 1);
}

}  // namespace

nlohmann::json EndpointResults(const RequestPool& pool, const std::vector<SampleRecord>& records) {
  const std::vector<EndpointDrop> drops = pool.drops();
  nlohmann::json out = nlohmann::json::array();
  for (size_t e = 0; e < pool.endpoint_count(); ++e) {
    const PoolEndpoint& ep = pool.endpoint(e);
    const EndpointStats& st = pool.endpoint_stats(e);
    std::vector<SampleRecord> mine;
    std::vector<double> latencies;
    double score_sum = 0;
    for (const auto& rec : records) {
      if (rec.endpoint != ep.name) continue;
      mine.push_back(rec);
      if (rec.latency_ms) latencies.push_back(*rec.latency_ms);
      score_sum += HeadlineScore(rec.verdict);
    }
    std::sort(latencies.begin(), latencies.end());
    double latency_sum = 0;
    for (double l : latencies) latency_sum += l;
    nlohmann::json j;
    j["base_url"] = ep.name;
    j["slots"] = ep.slots;
    j["n"] = mine.size();
    j["score"] = mine.empty() ? nlohmann::json() : nlohmann::json(Round(score_sum / mine.size(), 6));
    j["answered_this_run"] = st.answered.load();
    j["failed_this_run"] = st.failed.load();
    j["max_in_flight"] = st.max_in_flight.load();
    j["latency_ms"] = {{"mean", latencies.empty() ? nlohmann::json() : nlohmann::json(Round(latency_sum / latencies.size(), 1))},
                       {"p50", Quantile(latencies, 0.5)},
                       {"p95", Quantile(latencies, 0.95)}};
    AddSpeeds(mine, &j);
    nlohmann::json dropped;
    for (const auto& d : drops)
      if (d.endpoint == static_cast<int>(e)) dropped = {{"utc", d.utc}, {"reason", d.reason}};
    j["dropped"] = dropped;
    out.push_back(j);
  }
  return out;
}

}  // namespace evalrun
