// The `speed` part: how fast the server runs. Not a question
// set: a procedure (evals/benchmarks/speed/speed_run.h) that measures decode, prefill,
// requests at once and context depth on the client's clock and the
// server's, with exact prompt lengths, a cold row and a load guard.
#include <cstdio>

#include "evals/benchmarks/speed/speed_options.h"
#include "evals/benchmarks/speed/speed_prompt.h"
#include "evals/benchmarks/speed/speed_run.h"
#include "evals/benchmarks/speed/speed_section.h"
#include "evals/run/part.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"

namespace evalrun {
namespace {

std::string CheckStepKind(const std::string& name) {
  if (name == "decode" || name == "prefill" || name == "conc" || name == "ctx") return "";
  return "unknown step kind \"" + name + "\"; known: decode, prefill, conc, ctx";
}

std::string CheckPromptId(const std::string& name) {
  return IsSpeedPromptId(name) ? "" : "unknown prompt id \"" + name + "\"; known: code, prose";
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

class SpeedPart : public ProcedurePart {
 public:
  Status Check(const PartContext& ctx) override {
    opts_ = SpeedOptionsFromCard(*ctx.card, ctx.settings, ctx.request);
    return CheckSpeedOptions(opts_);
  }

  Status Run(const ProcedureEnv& env, nlohmann::json* result) override { return RunSpeed(opts_, env, result); }

  std::string Headline(const nlohmann::json& result) const override {
    std::string line;
    for (const auto& s : result.value("steps", nlohmann::json::array())) {
      if (!s["result"].is_object()) continue;
      const nlohmann::json& r = s["result"];
      const char* key = s["kind"] == "prefill" ? "prefill_client_tps" : s["kind"] == "conc" ? "total_tps"
                                                                                             : "decode_client_tps";
      if (!r.contains(key) || !r[key]["median"].is_number()) continue;
      line += (line.empty() ? "" : ", ") + s["name"].get<std::string>() + " " + Fixed(r[key]["median"], 1) + " t/s";
    }
    return line.empty() ? "" : "speed: " + line;
  }

 private:
  SpeedOptions opts_;
};

PartDefinition SpeedDefinition() {
  PartDefinition d;
  d.name = "speed";
  d.display_name = "speed";
  d.run_order = 60;
  d.keys = {
      CardKey::NameList("steps", "step kind", CheckStepKind, "which kinds of step run: decode, prefill, conc, ctx")
          .Default(std::vector<std::string>{"decode", "prefill", "conc", "ctx"}),
      CardKey::NameList("prompt_ids", "prompt id", CheckPromptId, "the task at the end of every prompt: code, prose")
          .Default(std::vector<std::string>{"code", "prose"}),
      CardKey::Int("decode_prompt_tokens", 64, 1 << 24, "the exact prompt length of decode and conc requests")
          .Default(int64_t{512}),
      CardKey::Int("runs", 1, 1000, "measured requests per decode prompt").Default(int64_t{2}),
      CardKey::Int("warmups", 0, 1000, "unmeasured requests after the cold one").Default(int64_t{1}),
      CardKey::Int("max_tokens", 2, 1 << 20, "the length of every answer (ignore_eos) of decode, conc and ctx")
          .Default(int64_t{512}),
      CardKey::IntList("prefill_depths", 64, 1 << 24, "depth", " tokens", "the exact prompt lengths of the prefill steps")
          .Default(std::vector<int64_t>{2048, 8192, 32768}),
      CardKey::Int("prefill_runs", 1, 1000, "requests per prefill depth").Default(int64_t{3}),
      CardKey::IntList("conc_levels", 1, 1024, "level", " requests", "requests at once, each a conc step")
          .Default(std::vector<int64_t>{1, 2, 4, 8}),
      CardKey::Int("conc_rounds", 1, 1000, "rounds per conc level").Default(int64_t{2}),
      CardKey::IntList("ctx_depths", 64, 1 << 24, "depth", " tokens", "the exact prompt lengths of the ctx steps")
          .Default(std::vector<int64_t>{16384, 32768, 65536, 131072}),
      CardKey::Int("ctx_runs", 1, 1000, "requests per ctx depth").Default(int64_t{2}),
      CardKey::Number("guard_interval_s", 0.05, 60, false, "seconds between the load guard's samples").Default(0.5),
      CardKey::Int("guard_samples", 1, 100, "disturbed samples in a row that disturb a step").Default(int64_t{2}),
      CardKey::Int("guard_tries", 1, 20, "attempts of a disturbed step at most").Default(int64_t{3}),
      CardKey::Number("guard_threshold_pct", 0, 100000, true, "a foreign process above this CPU % disturbs a sample")
          .Default(50.0),
      CardKey::NameList("guard_ignore", "process name", nullptr, "process names (comm) never counted as foreign"),
  };
  d.make_procedure = [] { return std::make_unique<SpeedPart>(); };
  return d;
}

Benchmark SpeedBenchmark() {
  Benchmark b;
  b.name = "speed";
  b.title = "Speed";
  b.about = "decode, prefill, requests at once and context depth, on the client's clock and the server's";
  b.parts = {SpeedDefinition()};
  b.scorer = "none: medians of the measured steps beside the server's own timings (as llama.cpp tools/llama-bench)";
  b.page_sections = {SpeedPageSection()};
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(SpeedBenchmark());

}  // namespace evalrun
