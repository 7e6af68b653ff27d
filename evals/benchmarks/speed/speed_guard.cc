#include "evals/benchmarks/speed/speed_guard.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "evals/base/clock.h"
#include "evals/base/thread_name.h"
#include "evals/run/load_log.h"
#include "evals/watch/busy_sampler.h"
#include "evals/watch/gpu_reader.h"
#include "evals/watch/proc_source.h"

namespace evalrun {
namespace {

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string Who(const LoadSample& s, double) {
  if (!s.foreign_gpu_pids.empty()) return "pid " + std::to_string(s.foreign_gpu_pids[0]) + " on the GPU";
  return s.busiest_comm + " (pid " + std::to_string(s.busiest_pid) + ") at " + Pct(s.busiest_cpu_pct) + " % CPU";
}

class MachineProbe : public LoadProbe {
 public:
  MachineProbe(BusySamplerOptions opts, GpuSelector gpu) : opts_(std::move(opts)), gpu_sel_(gpu), gpu_(&runner_) {}

  void Begin() override {
    sampler_ = std::make_unique<BusySampler>(opts_, &proc_, nullptr, RealClock::Default(),
                                             [this](const std::string& line) { line_ = line; });
    sampler_->SampleOnce();  // the baseline
    start_ = RealClock::Default()->MonotonicSeconds();
  }

  bool Sample(LoadSample* out) override {
    if (!sampler_ || !sampler_->SampleOnce()) return false;
    const nlohmann::json j = nlohmann::json::parse(line_, nullptr, false);
    if (!j.is_object()) return false;
    out->t = RealClock::Default()->MonotonicSeconds() - start_;
    if (j.contains("busiest") && j["busiest"].is_object()) {
      out->busiest_cpu_pct = j["busiest"].value("cpu_pct", 0.0);
      out->busiest_pid = j["busiest"].value("pid", 0);
      out->busiest_comm = j["busiest"].value("comm", "");
    }
    out->foreign_cpu_pct_total = j.value("foreign_cpu_pct_total", 0.0);
    if (gpu_sel_.kind != GpuSelector::Kind::kNone) ForeignGpu(&out->foreign_gpu_pids);
    return true;
  }

 private:
  // Processes on the card's GPU that are neither the engine nor evalrun.
  void ForeignGpu(std::vector<int>* pids) {
    if (gpu_failed_) return;
    if (uuid_.empty()) {
      GpuInfo info;
      if (!gpu_.Read(gpu_sel_, &info).ok()) {
        gpu_failed_ = true;
        return;
      }
      uuid_ = info.uuid;
    }
    std::vector<GpuApp> apps;
    if (!gpu_.QueryComputeApps(&apps).ok()) return;
    const nlohmann::json engine = sampler_->Summary().value("engine_pids", nlohmann::json::array());
    for (const GpuApp& a : apps) {
      if (a.gpu_uuid != uuid_ || a.pid == getpid()) continue;
      bool is_engine = false;
      for (const auto& p : engine) is_engine = is_engine || (p.is_number_integer() && p.get<int>() == a.pid);
      if (!is_engine && a.pid != opts_.engine_pid) pids->push_back(a.pid);
    }
  }

  BusySamplerOptions opts_;
  GpuSelector gpu_sel_;
  RealProcSource proc_;
  RealCommandRunner runner_;
  GpuReader gpu_;
  std::unique_ptr<BusySampler> sampler_;
  std::string line_;
  std::string uuid_;
  bool gpu_failed_ = false;
  double start_ = 0;
};

}  // namespace

nlohmann::json LoadSample::ToJson() const {
  nlohmann::json j;
  j["t"] = t;
  j["busiest"] = busiest_pid > 0 ? nlohmann::json{{"pid", busiest_pid}, {"comm", busiest_comm},
                                                   {"cpu_pct", busiest_cpu_pct}}
                                 : nlohmann::json(nullptr);
  j["foreign_cpu_pct_total"] = foreign_cpu_pct_total;
  j["foreign_gpu_pids"] = foreign_gpu_pids;
  j["disturbed"] = disturbed;
  return j;
}

GuardDecision DecideLoad(const std::vector<LoadSample>& samples, int need) {
  GuardDecision d;
  int run = 0;
  size_t run_start = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].disturbed) {
      run = 0;
      continue;
    }
    if (run == 0) run_start = i;
    ++run;
    if (run > d.longest_run) {
      d.longest_run = run;
      if (run >= need) d.why = Who(samples[run_start], 0) + ", " + std::to_string(run) + " samples in a row";
    }
  }
  d.disturbed = need > 0 && d.longest_run >= need;
  if (!d.disturbed) d.why.clear();
  return d;
}

std::unique_ptr<LoadProbe> MakeMachineProbe(int engine_pid, int engine_port, std::vector<std::string> ignore,
                                            const Card& card) {
  BusySamplerOptions o;
  o.interval_s = 0.5;  // not used: the guard drives SampleOnce itself
  o.top_n = 1;
  o.ignore = std::move(ignore);
  o.engine_pid = engine_pid > 0 ? engine_pid : 0;
  o.engine_port = engine_port;
  return std::make_unique<MachineProbe>(o, CardGpu(card));
}

LoadGuard::LoadGuard(std::unique_ptr<LoadProbe> probe, double interval_s, double threshold_pct, int need)
    : probe_(std::move(probe)), interval_s_(std::max(0.05, interval_s)), threshold_pct_(threshold_pct), need_(need) {}

LoadGuard::~LoadGuard() { End(); }

void LoadGuard::TakeSample() {
  LoadSample s;
  if (!probe_->Sample(&s)) return;
  s.disturbed = s.busiest_cpu_pct > threshold_pct_ || !s.foreign_gpu_pids.empty();
  std::lock_guard<std::mutex> l(mu_);
  samples_.push_back(std::move(s));
}

void LoadGuard::Begin() {
  End();
  if (!probe_) return;
  samples_.clear();
  stop_ = false;
  probe_->Begin();
  thread_ = std::thread([this] {
    NameThisThread("evalrun-speed-load");
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        if (cv_.wait_for(l, std::chrono::duration<double>(interval_s_), [this] { return stop_; })) return;
      }
      TakeSample();
    }
  });
}

std::vector<LoadSample> LoadGuard::End() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    TakeSample();  // the stretch since the last sample
  }
  std::lock_guard<std::mutex> l(mu_);
  std::vector<LoadSample> out;
  out.swap(samples_);
  return out;
}

}  // namespace evalrun
