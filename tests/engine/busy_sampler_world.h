// The machine the load sampler's tests watch (busy_sampler_test.cc,
// busy_sampler_gpu_test.cc, busy_sampler_thread_test.cc): a FakeProcSource
// with a few planted processes, a FakeClock, and the lines the sampler
// writes. Sink() appends to `lines` without a lock: read them while no
// sampler thread runs.
#ifndef EVALRUN_TESTS_ENGINE_BUSY_SAMPLER_WORLD_H_
#define EVALRUN_TESTS_ENGINE_BUSY_SAMPLER_WORLD_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/watch/busy_sampler.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_proc_source.h"

namespace evalrun::busy_testing {

// A machine: evalrun (100), the engine listening on 8080 (200) with a child
// (201) and grandchild (202), a busy indexer (300), sshd (400), a desktop
// indexer to ignore (500, comm cut to 15 bytes by the kernel).
struct World {
  testing::FakeProcSource proc;
  testing::FakeClock clock;
  std::vector<std::string> lines;

  World() {
    proc.set_self(100);
    proc.Add(1, 0, "systemd", "/sbin/init");
    proc.Add(100, 1, "evalrun", "evalrun run card.json");
    proc.Add(200, 1, "llama-server", "llama-server -m m.gguf --port 8080", 4000u << 20);
    proc.Add(201, 200, "llama-helper", "");
    proc.Add(202, 201, "sh", "sh -c true");
    proc.Add(300, 1, "indexer", "/usr/bin/indexer --all", 120u << 20);
    proc.Add(400, 1, "sshd", "sshd: me@pts/0");
    proc.Add(500, 1, "tracker-miner-f", "/usr/libexec/tracker-miner-fs-3");
    proc.Listen(8080, 200);
  }

  BusySampler::LineSink Sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
  nlohmann::json Line(size_t i) const { return nlohmann::json::parse(lines.at(i)); }
};

// Samples every 10 s, the engine the process listening on `port`, the
// desktop indexer ignored.
inline BusySamplerOptions EngineOnPort(int port) {
  BusySamplerOptions o;
  o.interval_s = 10;
  o.engine_port = port;
  o.ignore = {"tracker-miner-fs-3"};
  return o;
}

}  // namespace evalrun::busy_testing

#endif  // EVALRUN_TESTS_ENGINE_BUSY_SAMPLER_WORLD_H_
