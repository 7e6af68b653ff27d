// The speed part's load guard: while a step runs, the machine is
// sampled every `interval_s` (0.5 s by default) on the existing busy
// sampler (evals/watch/busy_sampler.h: one pass over /proc, CPU % since the
// last pass; the runner itself and the engine's process tree are not
// foreign) and, when the card names a GPU, nvidia-smi --query-compute-apps.
// A sample is disturbed when a foreign process used more than
// `threshold_pct` of a core since the last one, or a foreign process holds
// memory on the card's GPU. A step whose samples hold `need` (2) disturbed
// samples in a row is disturbed: the part repeats it, up to `tries`, keeps
// every attempt, and marks one still disturbed after the last (never drops
// it). "Load" here is other processes' work; it is not the A/A noise floor.
//
// Thread-safety: DecideLoad is pure. A LoadGuard is driven by one thread
// (Begin/End); it samples on a thread of its own between them. A LoadProbe
// is called from that thread only.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_GUARD_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_GUARD_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/card.h"

namespace evalrun {

struct LoadSample {
  double t = 0;                   // seconds since the attempt began
  double busiest_cpu_pct = 0;     // the busiest foreign process
  int busiest_pid = 0;
  std::string busiest_comm;
  double foreign_cpu_pct_total = 0;
  std::vector<int> foreign_gpu_pids;  // foreign processes holding memory on the card's GPU
  bool disturbed = false;         // set by the guard from the threshold

  nlohmann::json ToJson() const;
};

struct GuardDecision {
  bool disturbed = false;
  int longest_run = 0;  // disturbed samples in a row, at most
  std::string why;      // "" when not disturbed; else who, e.g. "hog (pid 42) at 98 % CPU for 3 samples in a row"
};

// Disturbed when `need` samples in a row are disturbed.
GuardDecision DecideLoad(const std::vector<LoadSample>& samples, int need);

// One reading of the machine. Begin() starts a new attempt (the busy
// sampler's baseline pass); Sample() takes a reading since the last one
// (false when none could be taken).
class LoadProbe {
 public:
  virtual ~LoadProbe() = default;
  virtual void Begin() = 0;
  virtual bool Sample(LoadSample* out) = 0;
};

// The probe of this machine: /proc through the busy sampler (the engine:
// `engine_pid` and whoever listens on `engine_port`; `ignore`: process names
// never foreign) and the GPU of `gpu` (kNone: none).
std::unique_ptr<LoadProbe> MakeMachineProbe(int engine_pid, int engine_port, std::vector<std::string> ignore,
                                            const Card& card);

class LoadGuard {
 public:
  // `probe` may be null: no sampling (every attempt undisturbed, no samples).
  LoadGuard(std::unique_ptr<LoadProbe> probe, double interval_s, double threshold_pct, int need);
  ~LoadGuard();  // End()s
  LoadGuard(const LoadGuard&) = delete;
  LoadGuard& operator=(const LoadGuard&) = delete;

  void Begin();
  // Stops sampling (one last reading first) and returns the attempt's samples.
  std::vector<LoadSample> End();
  GuardDecision Decide(const std::vector<LoadSample>& samples) const { return DecideLoad(samples, need_); }
  bool active() const { return probe_ != nullptr; }

 private:
  void TakeSample();

  std::unique_ptr<LoadProbe> probe_;
  double interval_s_, threshold_pct_;
  int need_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<LoadSample> samples_;
  std::thread thread_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_GUARD_H_
