// The probe section: the runner's own CPU for the logprob probe
// (evals/benchmarks/probe/probe.cc), the real evalrun binary against the in-process
// fake llama-server answering each position (one token, top-10 logprobs)
// after --service-ms.
//
// CPU per position: the child's rusage (wait4) of a run of --requests
// positions minus that of a run of one position (start-up: the card, the
// essays read and split, /health, /props, results.json), over the
// difference in positions. Target: < 0.5 ms a position.
#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

using evalrun::testing::FakeServer;
using evalrun::testing::FakeServerOptions;

std::string Card(const std::string& base_url, int slots, int positions) {
  return R"({
  "name": "bench-probe",
  "model": {"name": "fake"},
  "server": {"base_url": ")" + base_url + R"(", "slots": )" + std::to_string(slots) +
         R"(, "ready_timeout_s": 20},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
  "thinking": false,
  "parts": {"probe": {"positions": )" + std::to_string(positions) +
         R"(, "top_logprobs": 10, "context_words": 64}}
}
)";
}

bool RunProbe(const BenchOptions& o, FakeServer* server, int slots, int positions, const std::string& job,
              ChildRun* run, int* max_in_flight) {
  const std::string card_path = o.work_dir + "/" + job + ".json";
  testing::WriteFile(card_path, Card(server->base_url(), slots, positions));
  ChildProcess child;
  const std::vector<std::string> argv = {o.evalrun_binary, "--card", card_path, "--out", o.work_dir + "/runs",
                                         "--job", job, "--data-dir", o.data_dir};
  if (!child.Start(argv, o.work_dir, job)) return false;
  *run = child.Wait(60 + 4.0 * positions / slots * o.service_ms / 1000.0);
  if (run->exit_code != 0) {
    std::fprintf(stderr, "bench: %s: exit %d\n%s\n", job.c_str(), run->exit_code, FileTail(run->err_path).c_str());
    return false;
  }
  auto res = nlohmann::json::parse(testing::ReadFile(o.work_dir + "/runs/" + job + "/results.json"), nullptr, false);
  *max_in_flight = res.is_discarded() ? -1 : res["parts"]["probe"].value("max_in_flight", -1);
  return true;
}

}  // namespace

bool RunProbeSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "probe";
  const int n = std::max(2, o.requests);
  const int slots = 4;
  FakeServerOptions fo;
  fo.slots = slots;
  fo.ms_per_token = o.service_ms;  // one token a position: the service time
  FakeServer server(fo);
  if (!server.Start()) {
    out->push_back({sec, "fake server", "did not start", "", Verdict::kMiss});
    return false;
  }
  const std::string load_before = LoadAverage();
  ChildRun one, many;
  int in_flight_one = -1, in_flight = -1;
  const bool ok = RunProbe(o, &server, slots, 1, "probe-1", &one, &in_flight_one) &&
                  RunProbe(o, &server, slots, n, Fmt("probe-%d", n), &many, &in_flight);
  server.Stop();
  if (!ok) {
    out->push_back({sec, "evalrun probe runs", "failed (stderr above)", "exit 0", Verdict::kMiss});
    return false;
  }
  const double per_ms = (many.cpu_s() - one.cpu_s()) / (n - 1) * 1000.0;
  const std::string tag = Fmt("%d positions, %d slots, %d ms service", n, slots, o.service_ms);
  out->push_back({sec, "load average before", load_before, "", Verdict::kInfo});
  out->push_back({sec, tag + ": evalrun CPU per position (run minus a 1-position run)", Fmt("%.3f ms", per_ms),
                  "< 0.5 ms", per_ms < 0.5 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, tag + ": evalrun CPU, 1-position run (start-up)",
                  Fmt("%.0f ms (user %.0f, sys %.0f)", one.cpu_s() * 1000, one.user_s * 1000, one.sys_s * 1000), "",
                  Verdict::kInfo});
  out->push_back({sec, tag + ": wall / CPU total", Fmt("%.2f s / %.3f s", many.wall_s(), many.cpu_s()), "",
                  Verdict::kInfo});
  out->push_back({sec, tag + ": peak RSS", Fmt("%.1f MB", many.max_rss_kb / 1024.0), "", Verdict::kInfo});
  out->push_back({sec, tag + ": most requests in flight (results.json)", Fmt("%d", in_flight), "= 4",
                  in_flight == slots ? Verdict::kPass : Verdict::kMiss});
  return true;
}

}  // namespace evalrun::bench
