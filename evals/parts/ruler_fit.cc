// The fit profile: every sample fitted on its own to its length
// (ruler_length.h), the stream continuing from the state after the accepted
// build. vt's in-context example is fitted first, to 500 raw tokens.
#include <map>
#include <memory>
#include <utility>

#include "evals/parts/ruler_generate.h"
#include "evals/parts/ruler_length.h"

namespace evalrun {

Status GenerateRulerFit(const RulerGenEnv& env) {
  const RulerTaskConfig& task = *env.task;
  const RulerInputs& inputs = *env.inputs;
  RulerBuildContext& ctx = *env.ctx;
  Tokenizer* tok = env.tok;
  LengthTarget target;
  target.max_tokens = env.length - task.max_tokens;
  const int calls_at_start = tok->calls();

  RulerStreams streams{PyRandom(env.seed), NpRandom(static_cast<uint32_t>(env.seed))};
  const std::string prefix_head =
      std::string(RulerTemplateFor(task.family).answer_prefix).substr(0, 10);
  const bool prefill = task.answer_prefix_mode == RulerAnswerPrefixMode::kAssistantPrefill;
  std::map<std::string, int, std::less<>> prefix_tokens;
  const TokenCounter chat_count = [&](std::string_view text, int* tokens) -> Status {
    const size_t p = prefill ? text.rfind(prefix_head) : std::string_view::npos;
    if (p == std::string_view::npos) return tok->CountChat(text, tokens);
    int head = 0;
    EVALRUN_RETURN_IF_ERROR(tok->CountChat(text.substr(0, p), &head));
    const std::string_view tail = text.substr(p);
    auto it = prefix_tokens.find(tail);
    if (it == prefix_tokens.end()) {
      int t = 0;
      EVALRUN_RETURN_IF_ERROR(tok->Count(tail, &t));
      it = prefix_tokens.emplace(std::string(tail), t).first;
    }
    *tokens = head + it->second;
    return Status::Ok();
  };

  if (task.family == RulerFamily::kVariableTracking) {
    // variable_tracking.py main(): one example of at most 500 tokens (raw
    // count, no chat template), built first from the task's stream.
    std::unique_ptr<RulerSampleBuilder> b;
    EVALRUN_RETURN_IF_ERROR(MakeRulerBuilder(&ctx, 0, streams, /*vt_icl=*/true, &b));
    LengthTarget icl_target;
    icl_target.max_tokens = task.icl_max_tokens;
    TokenEstimator icl_est;
    FitResult fit;
    const TokenCounter raw_count = [&](std::string_view text, int* tokens) {
      return tok->Count(text, tokens);
    };
    EVALRUN_RETURN_IF_ERROR(FitToLength(b.get(), raw_count, icl_target, &icl_est, &fit)
                                .Prefixed(task.name + ": in-context example"));
    const RulerBuilt& built = b->Result(fit.units);
    std::string answer;
    for (size_t i = 0; i < built.gold.size(); ++i) answer += (i ? " " : "") + built.gold[i];
    ctx.vt_icl_example = fit.text + " " + answer + "\n";
    streams = built.after;
  }
  env.stats->setup_calls = tok->calls() - calls_at_start;

  TokenEstimator est;
  const std::string id_prefix = task.name + "/" + std::to_string(env.length) + "/";
  for (int i = 0; i < env.n; ++i) {
    const int calls_before = tok->calls();
    std::unique_ptr<RulerSampleBuilder> b;
    EVALRUN_RETURN_IF_ERROR(MakeRulerBuilder(&ctx, i, streams, /*vt_icl=*/false, &b));
    FitResult fit;
    EVALRUN_RETURN_IF_ERROR(FitToLength(b.get(), chat_count, target, &est, &fit)
                                .Prefixed(id_prefix + std::to_string(i)));
    if (task.family == RulerFamily::kCommonWords && fit.units >= b->MaxUnits() &&
        target.max_tokens - fit.exact_tokens > EffectiveTolerance(target) &&
        inputs.english_words.empty()) {
      return Status::NotFound(
          id_prefix + std::to_string(i) + ": cwe at length " + std::to_string(env.length) +
          " needs more than the " + std::to_string(ctx.cwe_pool.size()) +
          " distinct wonderwords words (the prompt stops at " + std::to_string(fit.exact_tokens) +
          " of " + std::to_string(target.max_tokens) +
          " tokens); put RULER's english_words.json "
          "(sha256 " +
          kRulerEnglishWordsSha256 + ") in " + inputs.ruler_dir);
    }
    const RulerBuilt& built = b->Result(fit.units);
    streams = built.after;
    RulerSampleFacts facts;
    facts.index = i;
    facts.units = fit.units;
    facts.estimated = fit.estimated_tokens;
    facts.exact = fit.exact_tokens;
    facts.tokenizer_calls = tok->calls() - calls_before;
    EVALRUN_RETURN_IF_ERROR(EmitRulerSample(env, facts, std::move(fit.text), built.gold));
  }
  return Status::Ok();
}

}  // namespace evalrun
