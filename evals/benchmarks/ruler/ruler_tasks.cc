#include "evals/benchmarks/ruler/ruler_tasks.h"

#include <map>
#include <memory>
#include <utility>

#include "evals/base/near_miss.h"
#include "evals/benchmarks/ruler/ruler_builders.h"
#include "evals/benchmarks/ruler/ruler_generate.h"
#include "evals/base/sha256.h"

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

const char* RulerProfileName(RulerProfile profile) {
  return profile == RulerProfile::kFit ? kRulerFitProfile : kRulerNvidiaProfile;
}

Status RulerProfileByName(std::string_view name, RulerProfile* out) {
  const std::vector<std::string> names = {kRulerNvidiaProfile, kRulerFitProfile};
  if (name == kRulerNvidiaProfile) {
    *out = RulerProfile::kNvidia;
  } else if (name == kRulerFitProfile) {
    *out = RulerProfile::kFit;
  } else {
    return Status::InvalidInput("unknown RULER profile \"" + std::string(name) + "\"" +
                                DidYouMean(name, names) + " (known: nvidia, fit)");
  }
  return Status::Ok();
}

Status EmitRulerSample(const RulerGenEnv& env, const RulerSampleFacts& facts, std::string text,
                       std::vector<std::string> gold) {
  const RulerTaskConfig& task = *env.task;
  // prepare.py's scripts: input_text.rfind(answer_prefix[:10]).
  const std::string prefix_head =
      std::string(RulerTemplateFor(task.family).answer_prefix).substr(0, 10);
  RulerSample s;
  s.id = task.name + "/" + std::to_string(env.length) + "/" + std::to_string(facts.index);
  s.task = task.name;
  s.length = env.length;
  s.index = facts.index;
  s.prompt_sha256 = Sha256Hex(text);
  const size_t p = text.rfind(prefix_head);
  const size_t cut = p == std::string::npos ? text.size() : p;
  s.answer_prefix = text.substr(cut);
  if (task.answer_prefix_mode == RulerAnswerPrefixMode::kAssistantPrefill) {
    s.assistant_prefix = s.answer_prefix;
    text.resize(cut);
  }
  s.prompt = std::move(text);
  s.gold = std::move(gold);
  s.max_tokens = task.max_tokens;
  s.haystack_units = facts.units;
  s.estimated_prompt_tokens = facts.estimated;
  s.exact_prompt_tokens = facts.exact;
  s.tokenizer_calls = facts.tokenizer_calls;
  EVALRUN_RETURN_IF_ERROR((*env.sink)(std::move(s)));
  ++env.stats->samples;
  return Status::Ok();
}

Status GenerateRulerSamples(const RulerInputs& inputs, const RulerTaskConfig& task, int length,
                            int n, uint64_t seed, Tokenizer* tok, const RulerSampleSink& sink,
                            RulerGenStats* stats) {
  if (!stats) return Status::Internal("GenerateRulerSamples: no stats");
  *stats = RulerGenStats{};
  if (n < 0) return Status::InvalidInput("ruler: negative sample count");
  if (task.max_tokens < 0) return Status::InvalidInput(task.name + ": negative max_tokens");
  if (task.num_needle_k < 1 || task.num_needle_v < 1 || task.num_needle_q < 1 ||
      task.num_chains < 1 || task.num_hops < 0 || task.num_cw < 1 || task.num_fewshot < 0 ||
      task.freq_cw < 0 || task.freq_ucw < 0 || task.coded_wordlen < 1 || task.icl_max_tokens < 1 ||
      !(task.alpha > 1.0)) {
    return Status::InvalidInput(task.name + ": task arguments out of range");
  }
  if (seed > 0xFFFFFFFFULL) {
    return Status::InvalidInput(task.name + ": seed " + std::to_string(seed) +
                                " is out of numpy's range for np.random.seed (0 .. 2**32 - 1), "
                                "which RULER's scripts call with it");
  }
  EVALRUN_RETURN_IF_ERROR(RulerTaskAvailable(inputs, task));
  if (length - task.max_tokens <= 0) {
    return Status::InvalidInput(task.name + ": length " + std::to_string(length) +
                                " leaves no room for a prompt after the " +
                                std::to_string(task.max_tokens) + "-token answer budget");
  }
  if (n == 0) return Status::Ok();
  const int calls_at_start = tok->calls();

  RulerEssayCache essay(&inputs);
  RulerBuildContext ctx;
  ctx.inputs = &inputs;
  ctx.task = &task;
  ctx.length = length;
  ctx.seed = seed;
  ctx.essay = &essay;
  ctx.python_exceptions = task.profile == RulerProfile::kNvidia;
  if (task.family == RulerFamily::kCommonWords) {
    // common_words_extraction.py: sorted(set(words)), then Random(seed).shuffle.
    ctx.cwe_pool = inputs.cwe_words;
    PyRandom(seed).Shuffle(&ctx.cwe_pool);
  }
  RulerGenEnv env;
  env.inputs = &inputs;
  env.task = &task;
  env.length = length;
  env.n = n;
  env.seed = seed;
  env.tok = tok;
  env.sink = &sink;
  env.stats = stats;
  env.ctx = &ctx;
  const Status st = task.profile == RulerProfile::kNvidia ? GenerateRulerNvidia(env)
                                                          : GenerateRulerFit(env);
  stats->tokenizer_calls = tok->calls() - calls_at_start;
  return st;
}

Status GenerateRulerSamples(const RulerInputs& inputs, const RulerTaskConfig& task, int length,
                            int n, uint64_t seed, Tokenizer* tok, std::vector<RulerSample>* out,
                            RulerGenStats* stats) {
  std::vector<RulerSample> samples;
  RulerGenStats local;
  RulerGenStats* st_out = stats ? stats : &local;
  const RulerSampleSink sink = [&samples](RulerSample s) {
    samples.push_back(std::move(s));
    return Status::Ok();
  };
  EVALRUN_RETURN_IF_ERROR(GenerateRulerSamples(inputs, task, length, n, seed, tok, sink, st_out));
  if (st_out->cannot_prepare) {
    out->clear();
    if (!stats) return Status::InvalidInput(st_out->reason);
    return Status::Ok();
  }
  *out = std::move(samples);
  return Status::Ok();
}

}  // namespace evalrun
