#include "evals/run/load_log.h"
#include "evals/base/redact.h"

#include <cstdlib>

#include "evals/base/clock.h"

namespace evalrun {

GpuSelector CardGpu(const Card& card) {
  GpuSelector g;
  if (!card.hardware.gpu_uuid.empty()) {
    GpuSelector::Parse(card.hardware.gpu_uuid, &g);
  } else if (card.hardware.gpu_index) {
    g.kind = GpuSelector::Kind::kIndex;
    g.index = *card.hardware.gpu_index;
  }
  return g;
}

int LocalPort(const std::string& origin) {
  auto host_start = origin.find("://");
  std::string hostport = origin.substr(host_start == std::string::npos ? 0 : host_start + 3);
  auto colon = hostport.rfind(':');
  std::string host = colon == std::string::npos ? hostport : hostport.substr(0, colon);
  bool local = host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "0.0.0.0";
  if (!local) return 0;
  if (colon == std::string::npos) return origin.rfind("https", 0) == 0 ? 443 : 80;
  return std::atoi(hostport.c_str() + colon + 1);
}

int EnginePort(const Card& card, const std::string& origin) {
  return card.load_sampling.engine_port > 0 ? card.load_sampling.engine_port : LocalPort(origin);
}

LoadLog::LoadLog(const Card& card, const std::string& origin, const std::string& path, int engine_pid, FILE* err)
    : runner_(), gpu_(&runner_) {
  BusySamplerOptions o;
  o.interval_s = card.load_sampling.interval_s;
  o.top_n = card.load_sampling.top;
  o.threshold_pct = card.load_sampling.threshold_pct;
  o.ignore = card.load_sampling.ignore;
  o.guard = card.load_sampling.guard;
  o.guard_max_wait_s = card.load_sampling.guard_max_wait_s;
  o.engine_port = EnginePort(card, origin);
  o.engine_pid = engine_pid;
  o.gpu = CardGpu(card);
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) std::fprintf(err, "evalrun: warning: %s: cannot write the load samples\n", path.c_str());
  sampler_ = std::make_unique<BusySampler>(o, &proc_, o.gpu.kind == GpuSelector::Kind::kNone ? nullptr : &gpu_,
                                           RealClock::Default(), [this](const std::string& line) {
                                             if (!file_) return;
                                             // Other processes' command lines: `--api-key X`.
                                             std::fputs(Redact(line).c_str(), file_);
                                             std::fputc('\n', file_);
                                             std::fflush(file_);
                                           });
  sampler_->Start();
  std::string report = sampler_->StartReport();
  if (!report.empty()) std::fprintf(err, "evalrun: %s\n", report.c_str());
}

LoadLog::~LoadLog() {
  sampler_->Stop();
  if (file_) std::fclose(file_);
}

}  // namespace evalrun
