// The machine-load sampler of a run (evals/watch/busy_sampler.h): the
// busiest other processes and the card's GPU, one line a sample in
// <job>/load.jsonl, from construction until destruction.
//
// Thread-safety: the sampler runs on its own thread; sampler() may be used
// from any thread while the LoadLog lives.
#ifndef EVALRUN_EVALS_RUN_LOAD_LOG_H_
#define EVALRUN_EVALS_RUN_LOAD_LOG_H_

#include <cstdio>
#include <memory>
#include <string>

#include "evals/run/card.h"
#include "evals/watch/busy_sampler.h"
#include "evals/watch/gpu_reader.h"
#include "evals/watch/proc_source.h"

namespace evalrun {

// The GPU the card names (hardware.gpu_uuid, else gpu_index); kNone when none.
GpuSelector CardGpu(const Card& card);

// The port of a server on this machine (a loopback origin), for finding the
// engine's processes; 0 for a remote server.
int LocalPort(const std::string& origin);

// The engine's port: the card's load_sampling.engine_port (a proxy in front
// of the engine on this machine), else LocalPort(origin).
int EnginePort(const Card& card, const std::string& origin);

class LoadLog {
 public:
  // Starts sampling; `engine_pid` (0: none) and the processes on the
  // origin's local port are the engine, not load. Warnings go to `err`.
  LoadLog(const Card& card, const std::string& origin, const std::string& path, int engine_pid, FILE* err);
  ~LoadLog();
  LoadLog(const LoadLog&) = delete;
  LoadLog& operator=(const LoadLog&) = delete;

  BusySampler* sampler() { return sampler_.get(); }

 private:
  RealProcSource proc_;
  RealCommandRunner runner_;
  GpuReader gpu_;
  FILE* file_ = nullptr;
  std::unique_ptr<BusySampler> sampler_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_LOAD_LOG_H_
