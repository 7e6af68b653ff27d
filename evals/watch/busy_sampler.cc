#include "evals/watch/busy_sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>

#include "evals/base/thread_name.h"
#include "evals/watch/busy_sampler_fields.h"
#include "scorers/py_unicode.h"

namespace evalrun {

namespace busy {

std::string ValidUtf8(std::string_view in) { return py::EncodeUtf8(py::DecodeUtf8All(in)); }

}  // namespace busy

namespace {

using busy::Round1;
using busy::Round3;
using busy::ValidUtf8;

// The kernel cuts comm to 15 bytes: "llama-server-cuda" shows as
// "llama-server-cu", so a longer ignore name matches its first 15 bytes.
bool NameMatches(const std::string& comm, const std::string& name) {
  if (comm == name) return true;
  return comm.size() == 15 && name.size() > 15 && name.compare(0, 15, comm) == 0;
}

}  // namespace

BusySampler::BusySampler(BusySamplerOptions options, ProcSource* proc, GpuReader* gpu, Clock* clock,
                         LineSink sink)
    : options_(std::move(options)),
      proc_(proc),
      gpu_reader_(gpu),
      clock_(clock),
      sink_(std::move(sink)) {}

BusySampler::~BusySampler() { Stop(); }

void BusySampler::Start() {
  {
    std::lock_guard<std::mutex> lk(wake_mu_);
    if (thread_.joinable() || stop_) return;
  }
  bool primed;
  {
    std::lock_guard<std::mutex> lk(sample_mu_);
    primed = primed_;
  }
  if (!primed) SampleOnce();
  thread_ = std::thread([this] {
    NameThisThread("evalrun-load");
    Run();
  });
}

void BusySampler::Run() {
  using Steady = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<Steady::duration>(
      std::chrono::duration<double>(std::max(options_.interval_s, 0.01)));
  auto next = Steady::now() + interval;
  std::unique_lock<std::mutex> lk(wake_mu_);
  while (!stop_) {
    if (wake_cv_.wait_until(lk, next, [this] { return stop_; })) break;
    lk.unlock();
    SampleOnce();
    lk.lock();
    next += interval;
    auto now = Steady::now();
    if (next < now) next = now + interval;  // a slow pass: don't catch up in a burst
  }
}

void BusySampler::Stop() {
  {
    std::lock_guard<std::mutex> lk(wake_mu_);
    stop_ = true;
  }
  wake_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lk(state_mu_);
  if (paused_) EndPauseLocked(NowT(), "stopped");
}

double BusySampler::NowT() const { return clock_->MonotonicSeconds() - start_mono_; }

void BusySampler::AddWarningLocked(std::string warning) {
  warning = ValidUtf8(warning);
  if (std::find(warnings_.begin(), warnings_.end(), warning) == warnings_.end()) {
    warnings_.push_back(std::move(warning));
  }
}

void BusySampler::EndPauseLocked(double t, const char* why) {
  pauses_.push_back(Pause{pause_start_t_, t, why});
  paused_ = false;
}

bool BusySampler::ShouldPause() {
  std::lock_guard<std::mutex> lk(state_mu_);
  if (!options_.guard || !paused_) return false;
  if (NowT() - pause_start_t_ >= options_.guard_max_wait_s) {
    EndPauseLocked(pause_start_t_ + options_.guard_max_wait_s, "max_wait");
    disarmed_ = true;
    return false;
  }
  return true;
}

void BusySampler::ResolveEngine(size_t n) {
  if (options_.engine_port <= 0 || port_lookup_blocked_) return;
  auto present = [&](int pid) {
    auto it = std::lower_bound(stats_.begin(), stats_.begin() + static_cast<long>(n), pid,
                               [](const ProcStat& s, int p) { return s.pid < p; });
    return it != stats_.begin() + static_cast<long>(n) && it->pid == pid;
  };
  for (int root : engine_roots_) {
    if (present(root)) return;  // still there: no need to look again
  }
  engine_roots_.clear();
  Status st = proc_->ListeningPids(options_.engine_port, &engine_roots_);
  std::string note;
  if (!st.ok()) {
    engine_roots_.clear();
    note = st.message();
    if (st.code() == Status::Code::kNotFound) port_lookup_blocked_ = true;
  } else if (engine_roots_.empty()) {
    note = "no process listens on TCP port " + std::to_string(options_.engine_port);
  }
  std::lock_guard<std::mutex> lk(state_mu_);
  if (!note.empty()) engine_note_ = ValidUtf8(note);
}

void BusySampler::ClassifyEngine(size_t n) {
  in_engine_.assign(n, -1);
  engine_pids_.clear();
  if (options_.engine_pid <= 0 && engine_roots_.empty()) return;
  auto is_root = [&](int pid) {
    return pid == options_.engine_pid ||
           std::binary_search(engine_roots_.begin(), engine_roots_.end(), pid);
  };
  auto index_of = [&](int pid) -> long {
    auto end = stats_.begin() + static_cast<long>(n);
    auto it = std::lower_bound(stats_.begin(), end, pid,
                               [](const ProcStat& s, int p) { return s.pid < p; });
    return it != end && it->pid == pid ? it - stats_.begin() : -1;
  };
  for (size_t i = 0; i < n; ++i) {
    if (in_engine_[i] != -1) continue;
    chain_.clear();
    int8_t val = 0;
    size_t j = i;
    for (size_t steps = 0; steps <= n; ++steps) {
      if (in_engine_[j] != -1) {
        val = in_engine_[j];
        break;
      }
      chain_.push_back(j);
      if (is_root(stats_[j].pid)) {
        val = 1;
        break;
      }
      long k = stats_[j].ppid > 0 ? index_of(stats_[j].ppid) : -1;
      if (k < 0) break;  // reached init, a kernel thread's root, or a vanished parent
      j = static_cast<size_t>(k);
    }
    for (size_t c : chain_) in_engine_[c] = val;
  }
  for (size_t i = 0; i < n; ++i) {
    if (in_engine_[i] == 1) engine_pids_.push_back(stats_[i].pid);
  }
}

bool BusySampler::SampleOnce() {
  std::lock_guard<std::mutex> slk(sample_mu_);
  const double cpu_before = clock_->ThreadCpuSeconds();
  const double now = clock_->MonotonicSeconds();

  size_t n = 0;
  if (!ReadStats(&n)) return false;
  ResolveEngine(n);
  ClassifyEngine(n);
  const PassCpu cpu = MeasureCpu(n, primed_ ? now - prev_mono_ : 0);
  prev_mono_ = now;

  if (!primed_) {
    Prime(n, now);
    std::lock_guard<std::mutex> lk(state_mu_);
    sampler_cpu_s_ += clock_->ThreadCpuSeconds() - cpu_before;
    return false;
  }

  const size_t top = std::min(ranked_.size(), static_cast<size_t>(std::max(0, options_.top_n)));
  auto busier = [](const Ranked& a, const Ranked& b) {
    return a.cpu_pct != b.cpu_pct ? a.cpu_pct > b.cpu_pct : a.index < b.index;
  };
  std::partial_sort(ranked_.begin(), ranked_.begin() + static_cast<long>(top), ranked_.end(),
                    busier);

  std::array<double, 3> loadavg{};
  const bool have_loadavg = proc_->ReadLoadAvg(&loadavg).ok();
  nlohmann::ordered_json gpu_json;
  ReadGpu(/*first=*/false, &gpu_json);

  double t;
  const bool paused = RecordPass(now, cpu, &t);

  nlohmann::ordered_json line;
  line["t"] = Round3(t);
  line["utc"] = clock_->UtcIso8601();
  line["procs"] = n;
  AddTopProcesses(top, &line);
  line["foreign_cpu_pct_total"] = Round1(cpu.foreign_total);
  line["engine_cpu_pct"] = engine_pids_.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(Round1(cpu.engine));
  line["self_cpu_pct"] = Round1(cpu.self);
  line["loadavg"] =
      have_loadavg ? nlohmann::ordered_json(loadavg) : nlohmann::ordered_json(nullptr);
  line["gpu"] = std::move(gpu_json);
  line["paused"] = paused;
  if (sink_) sink_(line.dump());

  std::lock_guard<std::mutex> lk(state_mu_);
  sampler_cpu_s_ += clock_->ThreadCpuSeconds() - cpu_before;
  return true;
}

bool BusySampler::ReadStats(size_t* count) {
  Status st = proc_->ListPids(&pids_);
  if (!st.ok()) {
    std::lock_guard<std::mutex> lk(state_mu_);
    AddWarningLocked("cannot list processes: " + st.ToString());
    return false;
  }
  if (stats_.size() < pids_.size()) stats_.resize(pids_.size());
  size_t n = 0;
  for (int pid : pids_) {
    Status s = proc_->ReadStat(pid, &stats_[n]);
    if (s.ok()) {
      ++n;
    } else if (s.code() != Status::Code::kNotFound && !stat_warned_) {  // NotFound: it ended
      stat_warned_ = true;  // one warning, not one per process and pass
      std::lock_guard<std::mutex> lk(state_mu_);
      AddWarningLocked("reading a process's stat: " + s.ToString());
    }
  }
  std::sort(stats_.begin(), stats_.begin() + static_cast<long>(n),
            [](const ProcStat& a, const ProcStat& b) { return a.pid < b.pid; });
  *count = n;
  return true;
}

BusySampler::PassCpu BusySampler::MeasureCpu(size_t n, double dt) {
  const double hz = static_cast<double>(std::max(1L, proc_->ClockTicksPerSecond()));
  const int self = proc_->SelfPid();
  PassCpu out;
  next_.clear();
  ranked_.clear();
  for (size_t i = 0; i < n; ++i) {
    const ProcStat& s = stats_[i];
    const uint64_t ticks = s.utime_ticks + s.stime_ticks;
    next_.push_back(Prev{s.pid, s.start_ticks, ticks});
    if (!primed_ || dt <= 0) continue;
    uint64_t base = 0;  // a process born since the last pass counts from zero
    auto it = std::lower_bound(prev_.begin(), prev_.end(), s.pid,
                               [](const Prev& p, int pid) { return p.pid < pid; });
    if (it != prev_.end() && it->pid == s.pid && it->start_ticks == s.start_ticks) {
      base = std::min(it->ticks, ticks);
    }
    const double cpu = static_cast<double>(ticks - base) / hz / dt * 100.0;
    if (s.pid == self) {
      out.self += cpu;
    } else if (in_engine_[i] == 1) {
      out.engine += cpu;
    } else {
      bool ignored = false;
      for (const std::string& name : options_.ignore)
        ignored = ignored || NameMatches(s.comm, name);
      if (ignored) continue;
      out.foreign_total += cpu;
      if (cpu > 0) ranked_.push_back(Ranked{cpu, i});
    }
  }
  std::swap(prev_, next_);
  return out;
}

void BusySampler::Prime(size_t n, double now) {
  primed_ = true;
  {
    std::lock_guard<std::mutex> lk(state_mu_);
    start_mono_ = now;
    engine_pids_report_ = engine_pids_;
    engine_names_report_.clear();
    for (size_t i = 0, shown = 0; i < n && shown < 5; ++i) {
      if (in_engine_[i] != 1) continue;
      engine_names_report_ +=
          (shown++ ? ", " : "") + std::to_string(stats_[i].pid) + " (" + stats_[i].comm + ")";
    }
  }
  nlohmann::ordered_json ignored_gpu;
  ReadGpu(/*first=*/true, &ignored_gpu);
}

bool BusySampler::RecordPass(double now, const PassCpu& cpu, double* t) {
  const double busiest = ranked_.empty() ? 0 : ranked_[0].cpu_pct;
  const bool above = busiest > options_.threshold_pct;
  std::lock_guard<std::mutex> lk(state_mu_);
  *t = now - start_mono_;
  ++samples_;
  if (above) {
    ++above_;
    ++above_by_comm_[ValidUtf8(stats_[ranked_[0].index].comm)];
  }
  if (!ranked_.empty() && busiest > max_foreign_) {
    max_foreign_ = busiest;
    max_foreign_pid_ = stats_[ranked_[0].index].pid;
    max_foreign_comm_ = ValidUtf8(stats_[ranked_[0].index].comm);
  }
  max_foreign_total_ = std::max(max_foreign_total_, cpu.foreign_total);
  if (!engine_pids_.empty()) {
    engine_cpu_sum_ += cpu.engine;
    ++engine_samples_;
    engine_pids_report_ = engine_pids_;
  }
  self_cpu_max_ = std::max(self_cpu_max_, cpu.self);
  if (options_.guard) GuardLocked(above, *t);
  return paused_;
}

void BusySampler::GuardLocked(bool above, double t) {
  if (above) {
    ++high_streak_;
  } else {
    high_streak_ = 0;
    disarmed_ = false;
    if (paused_) EndPauseLocked(t, "load_fell");
  }
  if (paused_ && t - pause_start_t_ >= options_.guard_max_wait_s) {
    EndPauseLocked(pause_start_t_ + options_.guard_max_wait_s, "max_wait");
    disarmed_ = true;
  }
  if (!paused_ && !disarmed_ && high_streak_ >= 2) {
    paused_ = true;
    pause_start_t_ = t;
  }
}

void BusySampler::AddTopProcesses(size_t top, nlohmann::ordered_json* line) {
  nlohmann::ordered_json top_json = nlohmann::ordered_json::array();
  for (size_t r = 0; r < top; ++r) {
    const ProcStat& s = stats_[ranked_[r].index];
    nlohmann::ordered_json e;
    e["pid"] = s.pid;
    e["comm"] = ValidUtf8(s.comm);
    e["cpu_pct"] = Round1(ranked_[r].cpu_pct);
    e["rss_mb"] = Round1(static_cast<double>(s.rss_bytes) / (1024.0 * 1024.0));
    if (r == 0) (*line)["busiest"] = e;
    if (!proc_->ReadCmdline(s.pid, options_.cmdline_max_bytes, &cmdline_).ok()) cmdline_.clear();
    e["cmd"] = ValidUtf8(cmdline_);
    top_json.push_back(std::move(e));
  }
  if (top == 0) (*line)["busiest"] = nullptr;
  (*line)["top"] = std::move(top_json);
}

}  // namespace evalrun
