// What the load sampler reports: the summary for results.json, its one line
// for people, and the line that says what is watched.
#include "evals/watch/busy_sampler.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "evals/watch/busy_sampler_fields.h"

namespace evalrun {
namespace {

using busy::OptNumber;
using busy::Round1;
using busy::Round3;

std::string Fmt0(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

nlohmann::json BusySampler::Summary() const {
  std::lock_guard<std::mutex> lk(state_mu_);
  nlohmann::json j;
  j["samples"] = samples_;
  j["interval_s"] = options_.interval_s;
  j["threshold_pct"] = options_.threshold_pct;
  j["samples_above_threshold"] = above_;
  if (max_foreign_ >= 0) {
    j["max_foreign_cpu_pct"] = Round1(max_foreign_);
    j["max_foreign"] = {{"pid", max_foreign_pid_}, {"comm", max_foreign_comm_}};
  } else {
    j["max_foreign_cpu_pct"] = samples_ > 0 ? nlohmann::json(0.0) : nlohmann::json(nullptr);
    j["max_foreign"] = nullptr;
  }
  j["above_by_comm"] = nlohmann::json::object();
  for (const auto& [comm, count] : above_by_comm_) j["above_by_comm"][comm] = count;
  j["max_foreign_cpu_pct_total"] = Round1(max_foreign_total_);
  j["engine_cpu_pct_mean"] = engine_samples_ > 0
                                 ? nlohmann::json(Round1(engine_cpu_sum_ / engine_samples_))
                                 : nlohmann::json(nullptr);
  j["engine_pids"] = engine_pids_report_;
  j["self_cpu_pct_max"] = Round1(self_cpu_max_);
  j["sampler_cpu_s"] = Round3(sampler_cpu_s_);

  if (gpu_id_) {
    nlohmann::json g;
    g["index"] = gpu_id_->index;
    g["uuid"] = gpu_id_->uuid;
    g["name"] = gpu_id_->name;
    g["bus_id"] = gpu_id_->bus_id;
    if (!gpu_id_->mig_uuid.empty()) g["mig_uuid"] = gpu_id_->mig_uuid;
    g["mem_used_mib_min"] = OptNumber(gpu_mem_min_);
    g["mem_used_mib_max"] = OptNumber(gpu_mem_max_);
    g["mem_total_mib"] = OptNumber(gpu_total_ ? gpu_total_ : gpu_id_->mem_total_mib);
    g["util_pct_max"] = OptNumber(gpu_util_max_);
    g["reads"] = gpu_reads_;
    g["read_failures"] = gpu_failures_;
    j["gpu"] = std::move(g);
  } else {
    j["gpu"] = nullptr;
  }
  std::string gpu_error = gpu_error_;
  if (!gpu_id_ && gpu_error.empty()) {
    gpu_error = options_.gpu.kind == GpuSelector::Kind::kNone ? "no GPU selected"
                : gpu_reader_ == nullptr                      ? "no GPU reader given"
                                                              : "GPU not read yet";
  }
  j["gpu_error"] = gpu_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(gpu_error);

  std::vector<std::string> warnings = warnings_;
  if ((options_.engine_port > 0 || options_.engine_pid > 0) && engine_samples_ == 0 &&
      samples_ > 0) {
    std::string what = options_.engine_port > 0 ? "TCP port " + std::to_string(options_.engine_port)
                                                : "pid " + std::to_string(options_.engine_pid);
    warnings.push_back("the engine (" + what + ") was never found" +
                       (engine_note_.empty() ? "" : " (" + engine_note_ + ")") +
                       ": its CPU counted as foreign load");
  }
  if (gpu_id_ && gpu_failures_ > 0) {
    warnings.push_back("nvidia-smi failed " + std::to_string(gpu_failures_) +
                       " time(s); first: " + gpu_error_);
  }
  j["warnings"] = warnings;

  j["guard"] = {{"enabled", options_.guard}, {"max_wait_s", options_.guard_max_wait_s}};
  nlohmann::json pauses = nlohmann::json::array();
  double paused_total = 0;
  for (const Pause& p : pauses_) {
    pauses.push_back({{"start_t", Round3(p.start_t)},
                      {"end_t", Round3(p.end_t)},
                      {"seconds", Round3(p.end_t - p.start_t)},
                      {"release", p.release}});
    paused_total += p.end_t - p.start_t;
  }
  j["pauses"] = std::move(pauses);
  j["paused_s_total"] = Round3(paused_total);
  j["text"] = SummaryLineLocked();
  return j;
}

std::string BusySampler::SummaryLine() const {
  std::lock_guard<std::mutex> lk(state_mu_);
  return SummaryLineLocked();
}

std::string BusySampler::SummaryLineLocked() const {
  if (samples_ == 0) return "no load samples were taken";
  std::string s = std::to_string(above_) + " of " + std::to_string(samples_) +
                  " samples were above " + Fmt0(options_.threshold_pct) + " % CPU (up to " +
                  Fmt0(std::max(0.0, max_foreign_)) + " %" +
                  (max_foreign_ >= 0 ? ", " + max_foreign_comm_ : std::string()) + ")";
  if (!above_by_comm_.empty()) {
    auto most = std::max_element(above_by_comm_.begin(), above_by_comm_.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    s += ", " + std::to_string(most->second) + " of them " + most->first;
  }
  if (engine_samples_ > 0)
    s += "; engine " + Fmt0(engine_cpu_sum_ / engine_samples_) + " % CPU on average";
  if (gpu_id_) {
    s += "; GPU " + std::to_string(gpu_id_->index) + " (" + gpu_id_->name + ")";
    if (gpu_mem_min_ && gpu_mem_max_) {
      s += " memory " + Fmt0(*gpu_mem_min_) + "-" + Fmt0(*gpu_mem_max_);
      if (gpu_total_) s += " of " + Fmt0(*gpu_total_);
      s += " MiB";
    }
    if (gpu_util_max_) s += ", up to " + Fmt0(*gpu_util_max_) + " % busy";
  } else if (!gpu_error_.empty()) {
    s += "; GPU not read: " + gpu_error_;
  }
  if (!pauses_.empty()) {
    double total = 0;
    for (const Pause& p : pauses_) total += p.end_t - p.start_t;
    s += "; paused " + std::to_string(pauses_.size()) + " time(s), " + Fmt0(total) + " s";
  }
  return s;
}

std::string BusySampler::StartReport() const {
  std::lock_guard<std::mutex> lk(state_mu_);
  char head[160];
  std::snprintf(head, sizeof head, "load sampler: every %g s, threshold %g %% CPU, guard %s",
                options_.interval_s, options_.threshold_pct, options_.guard ? "on" : "off");
  std::string s = head;
  if (options_.engine_port > 0 || options_.engine_pid > 0) {
    s += "; engine: ";
    if (engine_pids_report_.empty()) {
      s += "not found" + (engine_note_.empty() ? std::string() : " (" + engine_note_ + ")");
    } else {
      s += "pid " + engine_names_report_;
      if (engine_pids_report_.size() > 5)
        s += " and " + std::to_string(engine_pids_report_.size() - 5) + " more";
    }
    if (options_.engine_port > 0) s += " on port " + std::to_string(options_.engine_port);
  }
  if (gpu_id_) {
    s += "; GPU " + std::to_string(gpu_id_->index) + " " + gpu_id_->name + " (bus " +
         gpu_id_->bus_id + ", " + gpu_id_->uuid + ")";
    if (!gpu_id_->mig_uuid.empty()) s += " for MIG " + gpu_id_->mig_uuid;
  } else if (!gpu_error_.empty()) {
    s += "; GPU not read: " + gpu_error_;
  } else {
    s += "; GPU: none selected";
  }
  return s;
}

}  // namespace evalrun
