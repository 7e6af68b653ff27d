#include "evals/parts/ruler_tasks.h"

#include <map>
#include <memory>
#include <utility>

#include "evals/near_miss.h"
#include "evals/parts/ruler_builders.h"
#include "evals/parts/ruler_length.h"
#include "evals/sha256.h"

namespace evalrun {
namespace {

RulerTaskConfig Niah(const char* name, RulerHaystack haystack, RulerNeedleType k, RulerNeedleType v,
                     int num_k, int num_v, int num_q) {
  RulerTaskConfig c;
  c.name = name;
  c.family = RulerFamily::kNiah;
  c.metric = RulerMetric::kStringMatchAll;
  c.max_tokens = 128;
  c.type_haystack = haystack;
  c.type_needle_k = k;
  c.type_needle_v = v;
  c.num_needle_k = num_k;
  c.num_needle_v = num_v;
  c.num_needle_q = num_q;
  return c;
}

RulerTaskConfig Other(const char* name, RulerFamily family, RulerMetric metric, int max_tokens,
                      const char* dataset = "") {
  RulerTaskConfig c;
  c.name = name;
  c.family = family;
  c.metric = metric;
  c.max_tokens = max_tokens;
  c.dataset = dataset;
  c.type_haystack = RulerHaystack::kNoise;  // vt's type_haystack (synthetic.yaml)
  return c;
}

std::vector<RulerTaskConfig> MakeTasks() {
  using H = RulerHaystack;
  using N = RulerNeedleType;
  const RulerMetric all = RulerMetric::kStringMatchAll;
  // scripts/synthetic.yaml; tokens_to_generate from constants.py.
  return {
      Niah("niah_single_1", H::kNoise, N::kWords, N::kNumbers, 1, 1, 1),
      Niah("niah_single_2", H::kEssay, N::kWords, N::kNumbers, 1, 1, 1),
      Niah("niah_single_3", H::kEssay, N::kWords, N::kUuids, 1, 1, 1),
      Niah("niah_multikey_1", H::kEssay, N::kWords, N::kNumbers, 4, 1, 1),
      Niah("niah_multikey_2", H::kNeedle, N::kWords, N::kNumbers, 1, 1, 1),
      Niah("niah_multikey_3", H::kNeedle, N::kUuids, N::kUuids, 1, 1, 1),
      Niah("niah_multivalue", H::kEssay, N::kWords, N::kNumbers, 1, 4, 1),
      Niah("niah_multiquery", H::kEssay, N::kWords, N::kNumbers, 1, 1, 4),
      Other("vt", RulerFamily::kVariableTracking, all, 30),
      Other("cwe", RulerFamily::kCommonWords, all, 120),
      Other("fwe", RulerFamily::kFreqWords, all, 50),
      Other("qa_1", RulerFamily::kQa, RulerMetric::kStringMatchPart, 32, "squad"),
      Other("qa_2", RulerFamily::kQa, RulerMetric::kStringMatchPart, 32, "hotpotqa"),
  };
}

}  // namespace

const std::vector<RulerTaskConfig>& RulerTasks() {
  static const std::vector<RulerTaskConfig>* tasks = new std::vector<RulerTaskConfig>(MakeTasks());
  return *tasks;
}

std::vector<std::string> RulerTaskNames() {
  std::vector<std::string> names;
  for (const RulerTaskConfig& t : RulerTasks()) names.push_back(t.name);
  return names;
}

Status RulerTaskByName(std::string_view name, RulerTaskConfig* out) {
  for (const RulerTaskConfig& t : RulerTasks()) {
    if (t.name == name) {
      *out = t;
      return Status::Ok();
    }
  }
  std::string known;
  for (const std::string& n : RulerTaskNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("unknown RULER task \"" + std::string(name) + "\"" +
                          DidYouMean(name, RulerTaskNames()) + " (known: " + known + ")");
}

const std::vector<int>& RulerDepths() {
  // np.round(np.linspace(0, 100, num=40, endpoint=True)).astype(int)
  static const std::vector<int> depths = {0,  3,  5,  8,  10, 13, 15, 18, 21, 23, 26, 28, 31, 33,
                                          36, 38, 41, 44, 46, 49, 51, 54, 56, 59, 62, 64, 67, 69,
                                          72, 74, 77, 79, 82, 85, 87, 90, 92, 95, 97, 100};
  return depths;
}

Status RulerTaskAvailable(const RulerInputs& in, const RulerTaskConfig& task) {
  const std::string where = in.ruler_dir.empty() ? std::string("<data-dir>/ruler") : in.ruler_dir;
  switch (task.family) {
    case RulerFamily::kNiah:
      if (task.type_haystack == RulerHaystack::kEssay && (in.essay_text.empty() || !in.punkt)) {
        return Status::NotFound(task.name + " needs the essay haystack " + where +
                                "/PaulGrahamEssays.json and the Punkt model (punkt-english), "
                                "which were not loaded");
      }
      if ((task.type_needle_k == RulerNeedleType::kWords ||
           task.type_needle_v == RulerNeedleType::kWords) &&
          in.niah_words.size() == 0) {
        return Status::NotFound(task.name + " needs " + where +
                                "/wonderwords/{nounlist,adjectivelist}.txt, which were not loaded");
      }
      return Status::Ok();
    case RulerFamily::kCommonWords:
      if (in.cwe_words.empty()) {
        return Status::NotFound(task.name + " needs " + where +
                                "/wonderwords/{nounlist,adjectivelist,verblist}.txt, which were "
                                "not loaded");
      }
      return Status::Ok();
    case RulerFamily::kQa: {
      const bool squad = task.dataset == "squad";
      if (squad ? in.squad.has_value() : in.hotpotqa.has_value()) return Status::Ok();
      return Status::NotFound(
          task.name + " skipped: " + where + (squad ? "/squad.json" : "/hotpotqa.json") +
          " not found; put the " +
          (squad ? "SQuAD v2.0 dev set dev-v2.0.json, 4,370,528 bytes (sha256 " +
                       std::string(kRulerSquadSha256)
                 : "HotpotQA dev distractor set hotpot_dev_distractor_v1.json, 46,320,117 bytes "
                   "(sha256 " +
                       std::string(kRulerHotpotSha256)) +
          ") there");
    }
    case RulerFamily::kVariableTracking:
      if (task.type_haystack != RulerHaystack::kNoise) {
        return Status::InvalidInput(task.name + ": only type_haystack noise is implemented for vt");
      }
      return Status::Ok();
    case RulerFamily::kFreqWords:
      return Status::Ok();
  }
  return Status::Ok();
}

Status GenerateRulerSamples(const RulerInputs& inputs, const RulerTaskConfig& task, int length,
                            int n, uint64_t seed, Tokenizer* tok, std::vector<RulerSample>* out,
                            RulerGenStats* stats) {
  if (n < 0) return Status::InvalidInput("ruler: negative sample count");
  if (task.max_tokens < 0) return Status::InvalidInput(task.name + ": negative max_tokens");
  if (task.num_needle_k < 1 || task.num_needle_v < 1 || task.num_needle_q < 1 ||
      task.num_chains < 1 || task.num_hops < 0 || task.num_cw < 1 || task.num_fewshot < 0 ||
      task.freq_cw < 0 || task.freq_ucw < 0 || task.coded_wordlen < 1 || task.icl_max_tokens < 1 ||
      !(task.alpha > 1.0)) {
    return Status::InvalidInput(task.name + ": task arguments out of range");
  }
  EVALRUN_RETURN_IF_ERROR(RulerTaskAvailable(inputs, task));
  LengthTarget target;
  target.max_tokens = length - task.max_tokens;
  if (target.max_tokens <= 0) {
    return Status::InvalidInput(task.name + ": length " + std::to_string(length) +
                                " leaves no room for a prompt after the " +
                                std::to_string(task.max_tokens) + "-token answer budget");
  }
  if (n == 0) {
    out->clear();
    if (stats) *stats = RulerGenStats{};
    return Status::Ok();
  }
  const int calls_at_start = tok->calls();

  RulerEssayCache essay(&inputs);
  RulerBuildContext ctx;
  ctx.inputs = &inputs;
  ctx.task = &task;
  ctx.length = length;
  ctx.seed = seed;
  ctx.essay = &essay;
  if (task.family == RulerFamily::kCommonWords) {
    ctx.cwe_pool = inputs.cwe_words;  // sorted(set(words)), then Random(seed).shuffle
    PyRandom(seed).Shuffle(&ctx.cwe_pool);
  }
  RulerStreams streams{PyRandom(seed), PyRandom(seed)};

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
  const int setup_calls = tok->calls() - calls_at_start;

  std::vector<RulerSample> samples;
  samples.reserve(n);
  TokenEstimator est;
  const std::string id_prefix = task.name + "/" + std::to_string(length) + "/";
  for (int i = 0; i < n; ++i) {
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
          id_prefix + std::to_string(i) + ": cwe at length " + std::to_string(length) +
          " needs more than the " + std::to_string(ctx.cwe_pool.size()) +
          " distinct wonderwords words (the prompt stops at " + std::to_string(fit.exact_tokens) +
          " of " + std::to_string(target.max_tokens) +
          " tokens); put RULER's english_words.json "
          "(sha256 " +
          kRulerEnglishWordsSha256 + ") in " + inputs.ruler_dir);
    }
    const RulerBuilt& built = b->Result(fit.units);

    RulerSample s;
    s.id = id_prefix + std::to_string(i);
    s.task = task.name;
    s.length = length;
    s.index = i;
    s.prompt_sha256 = Sha256Hex(fit.text);
    const size_t p = fit.text.rfind(prefix_head);
    const size_t cut = p == std::string::npos ? fit.text.size() : p;
    s.answer_prefix = fit.text.substr(cut);
    if (prefill) {
      s.assistant_prefix = s.answer_prefix;
      s.prompt = fit.text.substr(0, cut);
    } else {
      s.prompt = std::move(fit.text);
    }
    s.gold = built.gold;
    s.max_tokens = task.max_tokens;
    s.haystack_units = fit.units;
    s.estimated_prompt_tokens = fit.estimated_tokens;
    s.exact_prompt_tokens = fit.exact_tokens;
    s.tokenizer_calls = tok->calls() - calls_before;
    streams = built.after;
    samples.push_back(std::move(s));
  }
  *out = std::move(samples);
  if (stats) {
    stats->tokenizer_calls = tok->calls() - calls_at_start;
    stats->setup_calls = setup_calls;
  }
  return Status::Ok();
}

}  // namespace evalrun
