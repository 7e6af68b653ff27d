// The `fit` part: the largest context that loads and answers. Not a
// question set: a procedure that restarts the engine at each context and
// sends one prompt filling most of it (the ladder, evals/parts/fit_ladder.h).
#include "evals/parts/fit_ladder.h"
#include "evals/run/part.h"
#include "evals/run/part_registry.h"

namespace evalrun {
namespace {

class FitPart : public ProcedurePart {
 public:
  Status Check(const PartContext& ctx) override {
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

EVALRUN_REGISTER_PART(FitDefinition());

}  // namespace
}  // namespace evalrun
