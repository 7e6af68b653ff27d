// The fit profile: every sample fitted on its own to its length
// (ruler_length.h), the stream continuing from the state after the accepted
// build. vt's in-context example is fitted first, to 500 raw tokens.
#include <map>
#include <memory>
#include <utility>

#include "evals/benchmarks/ruler/ruler_generate.h"
#include "evals/benchmarks/ruler/ruler_length.h"

namespace evalrun {

namespace {

// Counts a sample's tokens as the server will see them; with an assistant
// prefill, the part from the answer prefix on is counted raw (and cached:
// it repeats across samples).
class PrefillCounter {
 public:
  PrefillCounter(const RulerTaskConfig& task, Tokenizer* tok)
      : tok_(tok),
        prefix_head_(std::string(RulerTemplateFor(task.family).answer_prefix).substr(0, 10)),
        prefill_(task.answer_prefix_mode == RulerAnswerPrefixMode::kAssistantPrefill) {}

  Status Count(std::string_view text, int* tokens) {
    const size_t p = prefill_ ? text.rfind(prefix_head_) : std::string_view::npos;
    if (p == std::string_view::npos) return tok_->CountChat(text, tokens);
    int head = 0;
    EVALRUN_RETURN_IF_ERROR(tok_->CountChat(text.substr(0, p), &head));
    const std::string_view tail = text.substr(p);
    auto it = prefix_tokens_.find(tail);
    if (it == prefix_tokens_.end()) {
      int t = 0;
      EVALRUN_RETURN_IF_ERROR(tok_->Count(tail, &t));
      it = prefix_tokens_.emplace(std::string(tail), t).first;
    }
    *tokens = head + it->second;
    return Status::Ok();
  }

 private:
  Tokenizer* const tok_;
  const std::string prefix_head_;
  const bool prefill_;
  std::map<std::string, int, std::less<>> prefix_tokens_;
};

// variable_tracking.py main(): one example of at most 500 tokens (raw
// count, no chat template), built first from the task's stream.
Status FitVtExample(const RulerGenEnv& env, RulerStreams* streams) {
  const RulerTaskConfig& task = *env.task;
  Tokenizer* tok = env.tok;
  std::unique_ptr<RulerSampleBuilder> b;
  EVALRUN_RETURN_IF_ERROR(MakeRulerBuilder(env.ctx, 0, *streams, /*vt_icl=*/true, &b));
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
  env.ctx->vt_icl_example = fit.text + " " + answer + "\n";
  *streams = built.after;
  return Status::Ok();
}

// cwe: a prompt that used every word of the pool and still falls short of
// its length needs RULER's english_words.json.
Status CheckCwePool(const RulerGenEnv& env, const RulerSampleBuilder& b, const FitResult& fit,
                    const LengthTarget& target, const std::string& id) {
  if (env.task->family != RulerFamily::kCommonWords || fit.units < b.MaxUnits() ||
      target.max_tokens - fit.exact_tokens <= EffectiveTolerance(target) || !env.inputs->english_words.empty())
    return Status::Ok();
  return Status::NotFound(
      id + ": cwe at length " + std::to_string(env.length) + " needs more than the " +
      std::to_string(env.ctx->cwe_pool.size()) + " distinct wonderwords words (the prompt stops at " +
      std::to_string(fit.exact_tokens) + " of " + std::to_string(target.max_tokens) +
      " tokens); put RULER's english_words.json "
      "(sha256 " +
      kRulerEnglishWordsSha256 + ") in " + env.inputs->ruler_dir);
}

}  // namespace

Status GenerateRulerFit(const RulerGenEnv& env) {
  const RulerTaskConfig& task = *env.task;
  RulerBuildContext& ctx = *env.ctx;
  Tokenizer* tok = env.tok;
  LengthTarget target;
  target.max_tokens = env.length - task.max_tokens;
  const int calls_at_start = tok->calls();

  RulerStreams streams{PyRandom(env.seed), NpRandom(static_cast<uint32_t>(env.seed))};
  PrefillCounter counter(task, tok);
  const TokenCounter chat_count = [&counter](std::string_view text, int* tokens) {
    return counter.Count(text, tokens);
  };
  if (task.family == RulerFamily::kVariableTracking) EVALRUN_RETURN_IF_ERROR(FitVtExample(env, &streams));
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
    EVALRUN_RETURN_IF_ERROR(CheckCwePool(env, *b, fit, target, id_prefix + std::to_string(i)));
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
