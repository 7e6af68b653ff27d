// BusySampler: what else the machine was doing while a run was scored.
//
// Every interval it makes one pass over /proc (through a ProcSource) and,
// when a GPU is selected, one nvidia-smi call (through a GpuReader), and
// hands one JSON line to a sink (the runner appends it to <run>/load.jsonl):
//
//   {"t":10.002,"utc":"2025-11-30T04:10:00.123Z","procs":212,
//    "busiest":{"pid":42,"comm":"indexer","cpu_pct":197.3,"rss_mb":120.5},
//    "top":[{"pid":42,"comm":"indexer","cpu_pct":197.3,"rss_mb":120.5,
//            "cmd":"/usr/bin/indexer --all"}, ...],
//    "foreign_cpu_pct_total":201.0,"engine_cpu_pct":95.2,"self_cpu_pct":0.4,
//    "loadavg":[1.02,0.51,0.2],
//    "gpu":{"index":0,"mem_used_mib":1551,"mem_total_mib":143771,"util_pct":98},
//    "paused":false}
//
// CPU % of a process = (utime+stime now - utime+stime at the previous pass)
// / clock ticks per second / wall seconds between the passes x 100, so 100 %
// is one core and a process born in between counts from zero. The counters
// move in clock ticks (10 ms at 100 Hz), so one tick is 0.1 % over 10 s but
// 2 % over 0.5 s: intervals under half a second give coarse numbers. The
// first pass (in Start(), or the first SampleOnce()) only records them. A
// process that lives and dies between two passes is not seen (its time goes
// to its parent's cutime, which is not counted).
//
// Foreign load is every process except: evalrun itself (ProcSource::SelfPid;
// its children do count), the engine, and processes whose comm is in
// `ignore`. The engine is the processes listening on `engine_port` (found
// at the first pass, looked up again only while none is known or its
// processes are gone) and/or `engine_pid`, with all their descendants
// (ppid tree); its CPU is reported as engine_cpu_pct. `busiest` is the
// busiest foreign process (null when none used any CPU), and a sample is
// "above threshold" when its busiest foreign process used more than
// threshold_pct; the sum over all foreign processes is also recorded.
//
// The GPU: at the first pass the sampler reads the selected card (its name,
// bus id and UUID go to StartReport() and the summary) and checks with
// --query-compute-apps that an engine pid holds memory on it: a warning when
// the engine is on another GPU, or on none (that one only after three passes
// found it on none, as a server may still be loading). When nvidia-smi is
// missing or fails, "gpu" is null in the lines and the reason is recorded
// once in the summary; a missing nvidia-smi or an absent card is not asked
// again.
//
// Guard (optional): when foreign load is above the threshold at two samples
// in a row, ShouldPause() turns true until a sample falls to or below it, or
// until guard_max_wait_s have passed, when it releases anyway and stays
// released until load falls once (so the run always makes progress). Each
// pause is recorded (start, end, seconds, why it ended) in the summary.
//
// Cost: one readdir of /proc and one read of /proc/<pid>/stat per process
// per interval (RSS comes from that same stat line), the command lines of
// the top_n only, and buffers reused from pass to pass (measured: about
// 1 ms of CPU a pass with 100 processes; nvidia-smi takes 25-45 ms of wall
// time a call on the H200 machines); the summary reports the sampler's own
// CPU time (sampler_cpu_s; nvidia-smi's is its own process's).
//
// Thread-safety: Start/Stop from one controlling thread. SampleOnce calls
// are serialised internally (the sampler thread or a test calls them).
// Summary, SummaryLine, StartReport and ShouldPause may be called from any
// thread at any time. The sink is called on the sampler thread (or the
// thread calling SampleOnce), one line at a time.
#ifndef EVALRUN_EVALS_WATCH_BUSY_SAMPLER_H_
#define EVALRUN_EVALS_WATCH_BUSY_SAMPLER_H_

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "evals/base/clock.h"
#include "evals/watch/gpu_reader.h"
#include "evals/watch/proc_source.h"
#include "evals/base/status.h"

namespace evalrun {

struct BusySamplerOptions {
  double interval_s = 10;           // seconds between samples; fractions allowed
  int top_n = 5;                    // how many of the busiest go to "top"
  double threshold_pct = 25;        // 100 = one core
  std::vector<std::string> ignore;  // comm names never counted as foreign
  int engine_port = 0;              // TCP port the engine listens on; 0: none
  int engine_pid = 0;               // a server evalrun started; 0: none
  GpuSelector gpu;                  // which card to read; kNone: none
  bool guard = false;               // enable ShouldPause()
  double guard_max_wait_s = 300;    // a pause never lasts longer than this
  size_t cmdline_max_bytes = 256;   // "cmd" in "top" is cut to this
};

class BusySampler {
 public:
  using LineSink = std::function<void(const std::string& json_line)>;

  // `proc` and `clock` are required; `gpu` may be null (no GPU is read).
  // None is owned; all must outlive the sampler. `sink` gets each line
  // without a trailing newline.
  BusySampler(BusySamplerOptions options, ProcSource* proc, GpuReader* gpu, Clock* clock,
              LineSink sink);
  ~BusySampler();  // Stop()s

  BusySampler(const BusySampler&) = delete;
  BusySampler& operator=(const BusySampler&) = delete;

  // Takes the first (baseline) pass synchronously, so StartReport() is ready
  // when it returns, then starts the thread that samples every interval_s.
  // A second call, or a call after Stop(), does nothing.
  void Start();

  // Wakes the thread at once (condition variable), joins it, and closes an
  // open pause. Safe to call more than once, or without Start().
  void Stop();

  // One pass, now, on the calling thread. The first call records the
  // baseline and returns false (no line); later calls write one line and
  // return true. False also when /proc cannot be listed (recorded in the
  // summary's warnings).
  bool SampleOnce();

  // The summary, for results.json "load":
  //   samples, interval_s, threshold_pct, samples_above_threshold,
  //   max_foreign_cpu_pct (null before any sample), max_foreign {pid, comm}
  //   (null when no foreign process used CPU), above_by_comm {comm: count of
  //   above-threshold samples whose busiest it was}, max_foreign_cpu_pct_total,
  //   engine_cpu_pct_mean (null when the engine was never found), engine_pids,
  //   self_cpu_pct_max, sampler_cpu_s,
  //   gpu {index, uuid, name, bus_id, [mig_uuid], mem_used_mib_min,
  //        mem_used_mib_max, mem_total_mib, util_pct_max, reads,
  //        read_failures} or null, gpu_error (why gpu is null, or the first
  //   failure; else null), warnings [strings],
  //   guard {enabled, max_wait_s}, pauses [{start_t, end_t, seconds,
  //   release: "load_fell" | "max_wait" | "stopped"}], paused_s_total,
  //   text (SummaryLine()).
  nlohmann::json Summary() const;

  // One line for people, e.g. "27 of 356 samples were above 25 % CPU (up to
  // 197 %, indexer), 25 of them indexer; GPU 0 (NVIDIA H200) ...".
  std::string SummaryLine() const;

  // What is watched, after the baseline pass: "load sampler: every 10 s ...;
  // engine: pid 1234 (llama-server) on port 8080; GPU 0 NVIDIA H200 (bus
  // 00000000:00:06.0, GPU-...)".
  std::string StartReport() const;

  // True while the guard holds a pause (see above). Also ends a pause that
  // has lasted guard_max_wait_s. Always false when the guard is off.
  bool ShouldPause();

 private:
  struct Prev {
    int pid;
    uint64_t start_ticks;
    uint64_t ticks;
  };
  struct Pause {
    double start_t;
    double end_t;
    std::string release;  // "load_fell", "max_wait", "stopped"
  };
  struct Ranked {
    double cpu_pct;
    size_t index;  // into stats_
  };

  // CPU % over the last interval, summed: the engine tree's, evalrun's own,
  // and every other process's (ignored names left out).
  struct PassCpu {
    double engine = 0;
    double self = 0;
    double foreign_total = 0;
  };

  void Run();
  // SampleOnce's steps, in order (sample_mu_ held).
  // stats_[0, *count): every process that could be read, sorted by pid;
  // false when the processes could not be listed (a warning says why).
  bool ReadStats(size_t* count);
  void ResolveEngine(size_t n);
  void ClassifyEngine(size_t n);
  // From the ticks since the last pass (none on the first, dt 0); fills
  // ranked_ with the other processes that used any and rolls prev_ on.
  PassCpu MeasureCpu(size_t n, double dt);
  // The first pass: the clock starts, the engine is named, the GPU identified.
  void Prime(size_t n, double now);
  // Into the totals the readers see (state_mu_), with the guard's step;
  // *t: the pass's time since the start. Returns whether the run is paused.
  bool RecordPass(double now, const PassCpu& cpu, double* t);
  void GuardLocked(bool above, double t);
  // line's "busiest" and "top": the first `top` of ranked_ (sorted) with their command lines.
  void AddTopProcesses(size_t top, nlohmann::ordered_json* line);
  void ReadGpu(bool first, nlohmann::ordered_json* line_gpu);
  void CheckEnginePlacement(const GpuInfo& gpu, const std::vector<GpuInfo>& all);
  void AddWarningLocked(std::string warning);
  void EndPauseLocked(double t, const char* why);
  double NowT() const;
  std::string SummaryLineLocked() const;

  const BusySamplerOptions options_;
  ProcSource* const proc_;
  GpuReader* const gpu_reader_;
  Clock* const clock_;
  const LineSink sink_;

  // --- Owned by the sampling pass (sample_mu_). ---
  std::mutex sample_mu_;
  bool primed_ = false;
  double prev_mono_ = 0;
  std::vector<int> pids_;
  std::vector<ProcStat> stats_;  // this pass, sorted by pid
  std::vector<int8_t> in_engine_;
  std::vector<size_t> chain_;
  std::vector<Prev> prev_, next_;  // sorted by pid
  std::vector<Ranked> ranked_;
  std::vector<int> engine_roots_;
  std::vector<int> engine_pids_;  // the whole engine tree at the last pass
  bool port_lookup_blocked_ = false;
  bool gpu_disabled_ = false;
  bool stat_warned_ = false;
  int placement_checks_ = 0;
  bool placement_done_ = false;
  std::string cmdline_;
  std::vector<GpuInfo> all_gpus_;

  // --- Shared with readers (state_mu_). ---
  mutable std::mutex state_mu_;
  double start_mono_ = 0;
  int samples_ = 0;
  int above_ = 0;
  double max_foreign_ = -1;
  int max_foreign_pid_ = 0;
  std::string max_foreign_comm_;
  double max_foreign_total_ = 0;
  std::map<std::string, int> above_by_comm_;
  double engine_cpu_sum_ = 0;
  int engine_samples_ = 0;
  double self_cpu_max_ = 0;
  double sampler_cpu_s_ = 0;
  std::vector<int> engine_pids_report_;
  std::string engine_names_report_;
  std::optional<GpuInfo> gpu_id_;  // the card, as first read
  std::optional<double> gpu_mem_min_, gpu_mem_max_, gpu_total_, gpu_util_max_;
  int gpu_reads_ = 0;
  int gpu_failures_ = 0;
  std::string gpu_error_;
  std::string engine_note_;  // why the engine was not found, if it was not
  std::vector<std::string> warnings_;
  bool paused_ = false;
  bool disarmed_ = false;  // released by max_wait; re-armed when load falls
  int high_streak_ = 0;
  double pause_start_t_ = 0;
  std::vector<Pause> pauses_;

  // --- The thread. ---
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_WATCH_BUSY_SAMPLER_H_
