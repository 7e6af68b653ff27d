// The `fit` part: the largest context that loads and answers. Not a
// question set: a procedure that restarts the engine at each context and
// sends one prompt filling most of it (the ladder, evals/benchmarks/fit/fit_ladder.h).
#include "evals/benchmarks/fit/fit_ladder.h"
#include "evals/benchmarks/fit/fit_section.h"
#include "evals/run/part.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"

namespace evalrun {
namespace {

// The ladder restarts a managed engine at each of parts.fit.contexts: a
// command that does not pass {context} would run every step at the engine's
// own default while the results name the sizes asked.
Status CheckCommandHasContext(const Card& card) {
  const std::vector<std::string>& command = card.server.command;
  if (command.empty()) return Status::Ok();  // an external engine: every size on the running server
  for (const std::string& arg : command)
    if (arg.find("{context}") != std::string::npos) return Status::Ok();
  return Status::InvalidInput(card.path + ": server.command: has no {context}, but the fit part starts the engine "
                              "at each of parts.fit.contexts; pass it, e.g. \"-c\", \"{context}\" (llama-server)");
}

class FitPart : public ProcedurePart {
 public:
  Status Check(const PartContext& ctx) override {
    EVALRUN_RETURN_IF_ERROR(CheckCommandHasContext(*ctx.card));
    opts_ = FitOptionsFromCard(*ctx.card, ctx.settings, ctx.request);
    return LoadFitHaystack(ctx.data_dir, &opts_.haystack);
  }

  Status Run(const ProcedureEnv& env, nlohmann::json* result) override {
    opts_.gpu_mem_mib = env.gpu_mem_mib;
    opts_.make_tokenizer = env.make_tokenizer;
    opts_.log = env.log;
    return RunFit(opts_, env.engine, env.transports, env.cancel, result);
  }

  std::string Headline(const nlohmann::json& result) const override {
    if (!result.contains("largest")) return "";
    return "fit: largest context that loaded and answered: " + result["largest"].dump();
  }

 private:
  FitOptions opts_;
};

PartDefinition FitDefinition() {
  PartDefinition d;
  d.name = "fit";
  d.display_name = "fit";
  d.run_order = 50;
  d.keys = {
      CardKey::IntList("contexts", 256, 1 << 24, "context", " tokens",
                       "the total contexts tried, each once (default 4096 ... 131072, doubling); the engine is "
                       "(re)started with each (server.command)"),
      CardKey::Number("fill", 0, 1, true, "the share of the slot's context the one prompt fills").Default(0.95),
      CardKey::Int("max_tokens", 1, CardKey::kNoMax, "the answer limit of the one request").Default(int64_t{96}),
  };
  d.make_procedure = [] { return std::make_unique<FitPart>(); };
  return d;
}

Benchmark FitBenchmark() {
  Benchmark b;
  b.name = "fit";
  b.title = "Context fit";
  b.about = "the largest context that loads and answers: restarts the engine at each size and fills most of it";
  b.parts = {FitDefinition()};
  b.datasets = {"ruler"};  // the haystack: RULER's essays
  b.scorer = "none: each size loads and answers, or the step records why not";
  b.page_sections = {FitPageSection()};
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(FitBenchmark());

}  // namespace evalrun
