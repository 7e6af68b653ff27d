#include "evals/publish/merge_load.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace evalrun {
namespace {

using json = nlohmann::json;

std::optional<double> Number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

double Round(double x, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

// Adds `key` of `from` into `into` (a sum, a max or a min).
void Sum(const json& from, const char* key, json* into) {
  if (auto v = Number(from, key)) (*into)[key] = Round(Number(*into, key).value_or(0) + *v, 3);
}
void Max(const json& from, const char* key, json* into) {
  if (auto v = Number(from, key)) (*into)[key] = std::max(*v, Number(*into, key).value_or(*v));
}
void Min(const json& from, const char* key, json* into) {
  if (auto v = Number(from, key)) (*into)[key] = std::min(*v, Number(*into, key).value_or(*v));
}

std::string Fmt0(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

// One line for the whole, as BusySampler::SummaryLine words it.
std::string TextOf(const json& m, size_t shards) {
  const int samples = m.value("samples", 0);
  std::string s = std::to_string(shards) + " shards: ";
  if (samples == 0) return s + "no load samples were taken";
  s += std::to_string(m.value("samples_above_threshold", 0)) + " of " + std::to_string(samples) +
       " samples were above " + Fmt0(Number(m, "threshold_pct").value_or(0)) + " % CPU (up to " +
       Fmt0(Number(m, "max_foreign_cpu_pct").value_or(0)) + " %";
  if (m["max_foreign"].is_object())
    s += ", " + m["max_foreign"].value("comm", std::string()) + " on shard " +
         std::to_string(m["max_foreign"].value("shard", 0));
  s += ")";
  if (auto e = Number(m, "engine_cpu_pct_mean")) s += "; engine " + Fmt0(*e) + " % CPU on average";
  if (Number(m, "paused_s_total").value_or(0) > 0)
    s += "; paused " + std::to_string(m["pauses"].size()) + " time(s), " + Fmt0(m["paused_s_total"].get<double>()) +
         " s";
  return s;
}

// The merged summary before any shard.
json EmptySummary() {
  json m = json::object();
  m["samples"] = 0;
  m["samples_above_threshold"] = 0;
  m["max_foreign_cpu_pct"] = nullptr;
  m["max_foreign"] = nullptr;
  m["above_by_comm"] = json::object();
  m["engine_cpu_pct_mean"] = nullptr;
  m["gpu"] = nullptr;
  m["gpu_error"] = nullptr;
  m["warnings"] = json::array();
  m["pauses"] = json::array();
  m["paused_s_total"] = 0.0;
  return m;
}

// The busiest other process of all shards (named with its shard), and the
// counts of who was busy, summed.
void MergeForeign(const json& n, int index, json* m) {
  const auto foreign = Number(n, "max_foreign_cpu_pct");
  if (foreign && (!Number(*m, "max_foreign_cpu_pct") || *foreign > *Number(*m, "max_foreign_cpu_pct"))) {
    (*m)["max_foreign_cpu_pct"] = *foreign;
    (*m)["max_foreign"] = n.value("max_foreign", json());
    if ((*m)["max_foreign"].is_object()) (*m)["max_foreign"]["shard"] = index;
  }
  if (n.contains("above_by_comm") && n["above_by_comm"].is_object())
    for (const auto& [comm, c] : n["above_by_comm"].items())
      if (c.is_number()) (*m)["above_by_comm"][comm] = (*m)["above_by_comm"].value(comm, 0) + c.get<int>();
}

// The first shard's GPU, widened by the others' extremes and counts.
void MergeGpu(const json& n, json* m) {
  if (!n.contains("gpu") || !n["gpu"].is_object()) return;
  const json& g = n["gpu"];
  if (!(*m)["gpu"].is_object()) {
    (*m)["gpu"] = g;
    return;
  }
  json& mg = (*m)["gpu"];
  Min(g, "mem_used_mib_min", &mg);
  Max(g, "mem_used_mib_max", &mg);
  Max(g, "util_pct_max", &mg);
  Sum(g, "reads", &mg);
  Sum(g, "read_failures", &mg);
}

// Engine pids by shard; warnings and pauses, each marked with its shard.
void MergeLists(const json& n, int index, json* m) {
  if (n.contains("engine_pids") && n["engine_pids"].is_array()) {
    json& pids = (*m)["engine_pids"];
    if (!pids.is_object()) pids = json::object();
    pids[std::to_string(index)] = n["engine_pids"];
  }
  if (n.contains("warnings") && n["warnings"].is_array())
    for (const auto& w : n["warnings"])
      if (w.is_string()) (*m)["warnings"].push_back("shard " + std::to_string(index) + ": " + w.get<std::string>());
  if (n.contains("pauses") && n["pauses"].is_array())
    for (json p : n["pauses"]) {
      p["shard"] = index;
      (*m)["pauses"].push_back(p);
    }
}

}  // namespace

json MergeLoadSummaries(const std::vector<std::pair<int, json>>& shards) {
  json m = EmptySummary();
  json listed = json::array();
  double engine_sum = 0, engine_weight = 0;
  bool first = true;
  for (const auto& [index, n] : shards) {
    listed.push_back({{"shard", index}, {"load", n}});
    if (!n.is_object()) {
      m["warnings"].push_back("shard " + std::to_string(index) + ": no noise summary recorded");
      continue;
    }
    if (first) {
      for (const char* k : {"interval_s", "threshold_pct"})
        if (n.contains(k)) m[k] = n[k];
      if (n.contains("guard")) m["guard"] = n["guard"];
      m["gpu_error"] = n.value("gpu_error", json());
    }
    Sum(n, "samples", &m);
    Sum(n, "samples_above_threshold", &m);
    Sum(n, "sampler_cpu_s", &m);
    Sum(n, "paused_s_total", &m);
    Max(n, "max_foreign_cpu_pct_total", &m);
    Max(n, "self_cpu_pct_max", &m);
    MergeForeign(n, index, &m);
    if (auto e = Number(n, "engine_cpu_pct_mean")) {
      const double w = std::max(1.0, Number(n, "samples").value_or(1));
      engine_sum += *e * w;
      engine_weight += w;
    }
    MergeGpu(n, &m);
    MergeLists(n, index, &m);
    first = false;
  }
  if (engine_weight > 0) m["engine_cpu_pct_mean"] = Round(engine_sum / engine_weight, 1);
  if (m["samples"].get<double>() > 0 && m["max_foreign_cpu_pct"].is_null()) m["max_foreign_cpu_pct"] = 0.0;
  m["samples"] = static_cast<int64_t>(m["samples"].get<double>());
  m["samples_above_threshold"] = static_cast<int64_t>(m["samples_above_threshold"].get<double>());
  m["text"] = TextOf(m, shards.size());
  m["shards"] = listed;
  return m;
}

}  // namespace evalrun
