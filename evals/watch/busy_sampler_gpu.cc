// The GPU side of the load sampler: one nvidia-smi read a pass, and the
// check that the engine holds memory on the card that is read.
#include "evals/watch/busy_sampler.h"

#include <string>
#include <utility>
#include <vector>

#include "evals/watch/busy_sampler_fields.h"

namespace evalrun {
namespace {

using busy::OptNumber;
using busy::ValidUtf8;

void KeepMin(std::optional<double>* acc, const std::optional<double>& v) {
  if (v && (!*acc || *v < **acc)) *acc = v;
}
void KeepMax(std::optional<double>* acc, const std::optional<double>& v) {
  if (v && (!*acc || *v > **acc)) *acc = v;
}

std::string GpuIndexOf(const std::vector<GpuInfo>& all, const std::string& uuid) {
  for (const GpuInfo& g : all) {
    if (g.uuid == uuid) return "GPU " + std::to_string(g.index) + " (" + uuid + ")";
  }
  return uuid;
}

std::string JoinPids(const std::vector<int>& pids) {
  std::string s;
  for (size_t i = 0; i < pids.size(); ++i) s += (i ? ", " : "") + std::to_string(pids[i]);
  return s;
}

}  // namespace

void BusySampler::ReadGpu(bool first, nlohmann::ordered_json* line_gpu) {
  *line_gpu = nullptr;
  if (gpu_reader_ == nullptr || options_.gpu.kind == GpuSelector::Kind::kNone || gpu_disabled_) {
    return;
  }
  GpuInfo g;
  Status st = gpu_reader_->Read(options_.gpu, &g, &all_gpus_);
  if (!st.ok()) {
    // A missing nvidia-smi, an absent card or output we cannot parse will
    // not mend itself: stop asking. Timeouts and failures may.
    if (st.code() == Status::Code::kNotFound || st.code() == Status::Code::kInvalidInput) {
      gpu_disabled_ = true;
    }
    std::lock_guard<std::mutex> lk(state_mu_);
    ++gpu_failures_;
    if (gpu_error_.empty()) gpu_error_ = ValidUtf8(st.ToString());
    return;
  }
  {
    std::lock_guard<std::mutex> lk(state_mu_);
    if (!gpu_id_) {
      gpu_id_ = g;
      if (!g.mig_uuid.empty()) {
        AddWarningLocked("GPU selector names MIG instance " + g.mig_uuid +
                         ": memory and utilisation are those of the whole GPU " +
                         std::to_string(g.index) + " (" + g.uuid + ")");
      }
    }
    if (!first) {
      ++gpu_reads_;
      KeepMin(&gpu_mem_min_, g.mem_used_mib);
      KeepMax(&gpu_mem_max_, g.mem_used_mib);
      if (g.mem_total_mib) gpu_total_ = g.mem_total_mib;
      KeepMax(&gpu_util_max_, g.util_pct);
    }
  }
  nlohmann::ordered_json j;
  j["index"] = g.index;
  j["mem_used_mib"] = OptNumber(g.mem_used_mib);
  j["mem_total_mib"] = OptNumber(g.mem_total_mib);
  j["util_pct"] = OptNumber(g.util_pct);
  *line_gpu = std::move(j);
  if (!placement_done_ && !engine_pids_.empty()) CheckEnginePlacement(g, all_gpus_);
}

void BusySampler::CheckEnginePlacement(const GpuInfo& gpu, const std::vector<GpuInfo>& all) {
  ++placement_checks_;
  std::vector<GpuApp> apps;
  Status st = gpu_reader_->QueryComputeApps(&apps);
  std::string warning;
  if (!st.ok()) {
    placement_done_ = true;
    warning = "could not check which GPU the engine uses: " + st.ToString();
  } else {
    EnginePlacement p = PlaceEngine(apps, engine_pids_, gpu);
    std::string read = "the GPU read (GPU " + std::to_string(gpu.index) + ", " + gpu.uuid + ")";
    std::string others;
    for (const std::string& u : p.other_uuids)
      others += (others.empty() ? "" : ", ") + GpuIndexOf(all, u);
    if (p.on_selected) {
      placement_done_ = true;
      if (!p.other_uuids.empty()) {
        warning = "the engine also holds memory on " + others + ", which is not read";
      }
    } else if (!p.other_uuids.empty()) {
      placement_done_ = true;
      warning = "the engine (pid " + JoinPids(p.pids_seen) + ") holds memory on " + others +
                ", not on " + read + ": the GPU numbers describe another card";
    } else if (placement_checks_ >= 3) {
      placement_done_ = true;
      warning = "the engine (pid " + JoinPids(engine_pids_) +
                ") holds memory on no GPU according to nvidia-smi --query-compute-apps "
                "(a CPU-only engine, or nvidia-smi sees another PID namespace); " +
                read + " may not be the engine's";
    }
  }
  if (!warning.empty()) {
    std::lock_guard<std::mutex> lk(state_mu_);
    AddWarningLocked(std::move(warning));
  }
}

}  // namespace evalrun
