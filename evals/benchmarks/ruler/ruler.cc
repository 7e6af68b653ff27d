// RULER (NVIDIA): the synthetic long-context tasks, generated in C++ at the
// card's lengths and sized with the server's own tokenizer. Metrics as
// RULER's scripts/eval/synthetic/constants.py; a cut-off answer is scored as
// it stands (RULER scores partial answers) but counted as `cut_off`.
//
// The answer prefix RULER appends to its input ("Answer: The special magic
// number for X is") ends the user message (ruler_tasks.h documents the
// choice). parts.ruler.profile picks how prompts are sized: "nvidia" (the
// default: NVIDIA's prepare.py, byte for byte) or "fit". A task that
// NVIDIA's script cannot prepare at a length (it would loop forever or
// crash) is skipped there with a note and an info.skipped entry
// {task, length, reason}; the part fails before any request only when no
// task can run at any length.
#include <map>

#include "datasets/manifest.h"
#include "evals/base/near_miss.h"
#include "evals/run/prepare_steps.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "evals/run/context_check.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "scorers/ruler/ruler_metrics.h"

namespace evalrun {
namespace {

// The 11 synthetic tasks run by default (qa_1 and qa_2 need user-supplied
// SQuAD / HotpotQA files and are run only when listed).
const std::vector<std::string>& DefaultTasks() {
  static const std::vector<std::string> kTasks = {
      "niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2", "niah_multikey_3",
      "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe"};
  return kTasks;
}

// A task name of the card: "" when known, else the message (card_keys.h NameCheck).
std::string CheckTaskName(const std::string& task) {
  const std::vector<std::string> known = RulerTaskNames();
  if (std::find(known.begin(), known.end(), task) != known.end()) return "";
  std::string list;
  for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
  return "unknown RULER task \"" + task + "\"" + DidYouMean(task, known) + "; known tasks: " + list;
}

// The card's tasks in run order: parts.ruler.tasks, else those of
// samples_per_task (the defaults first), else the defaults.
Status ChooseTasks(const PartSettings& cfg, std::vector<std::string>* out) {
  const std::vector<std::string> card_tasks = cfg.NameList("tasks");
  const std::map<std::string, int64_t> task_samples = cfg.Counts("samples_per_task");
  std::vector<std::string> tasks = card_tasks.empty() ? DefaultTasks() : card_tasks;
  if (!task_samples.empty() && card_tasks.empty()) {
    tasks.clear();
    for (const auto& t : DefaultTasks())
      if (task_samples.count(t)) tasks.push_back(t);
    for (const auto& [t, n] : task_samples)
      if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
  }
  for (const auto& [t, n] : task_samples)
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end())
      return Status::InvalidInput("parts.ruler.samples_per_task." + t + ": not one of parts.ruler.tasks");
  *out = std::move(tasks);
  return Status::Ok();
}

// Each task's configuration under the card's profile and task_max_tokens.
Status TaskConfigs(const PartSettings& cfg, const std::vector<std::string>& tasks, RulerProfile* profile,
                   std::vector<RulerTaskConfig>* configs) {
  const std::map<std::string, int64_t> task_max_tokens = cfg.Counts("task_max_tokens");
  *profile = RulerProfile::kNvidia;
  Status pst = RulerProfileByName(cfg.String("profile"), profile);
  if (!pst.ok()) return Status::InvalidInput("parts.ruler.profile: " + pst.message());
  for (const auto& t : tasks) {
    RulerTaskConfig c;
    Status st = RulerTaskByName(t, &c);
    if (!st.ok()) return Status::InvalidInput("parts.ruler.tasks: " + st.message());
    c.profile = *profile;
    auto o = task_max_tokens.find(t);
    if (o != task_max_tokens.end()) c.max_tokens = static_cast<int>(o->second);
    configs->push_back(c);
  }
  for (const auto& [t, n] : task_max_tokens)
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end())
      return Status::InvalidInput("parts.ruler.task_max_tokens." + t + ": not one of parts.ruler.tasks");
  return Status::Ok();
}

// The required inputs, checked against the manifest: their sha256 by path.
Status VerifyRulerFiles(const std::string& data_dir, std::map<std::string, std::string>* shas) {
  for (const char* f : {"ruler/PaulGrahamEssays.json", "ruler/wonderwords/nounlist.txt",
                        "ruler/wonderwords/adjectivelist.txt", "ruler/wonderwords/verblist.txt",
                        "punkt-english/abbrev_types.txt", "punkt-english/collocations.tab",
                        "punkt-english/sent_starters.txt", "punkt-english/ortho_context.tab"}) {
    std::string path;
    EVALRUN_RETURN_IF_ERROR(VerifyDataFile(data_dir, f, &path));
    (*shas)[f] = FindManifestFile(f)->sha256;
  }
  return Status::Ok();
}

class RulerPart : public Part {
 public:
  // The card's lengths a request cannot hold are refused, or left out with
  // over_context "skip" (then items over are left out too).
  Status FitToContext(int64_t request_ctx, PartSettings* settings, ContextFit* fit) const override {
    const bool skip = settings->String("over_context") == "skip";
    fit->skip_items = skip;
    if (!settings->Has("lengths")) return Status::Ok();  // the default's items are checked one by one
    std::vector<int64_t> kept;
    EVALRUN_RETURN_IF_ERROR(
        CheckLengths("ruler", settings->IntList("lengths"), request_ctx, skip, &kept, &fit->skipped));
    if (kept.empty())
      return Status::InvalidInput("parts.ruler: no length fits the server's context (" + std::to_string(request_ctx) +
                                  " tokens a request)");
    settings->Set("lengths", kept);
    return Status::Ok();
  }

  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    if (!ctx.tokenizer) return Status::Internal("ruler: no tokenizer");
    std::vector<std::string> tasks;
    EVALRUN_RETURN_IF_ERROR(ChooseTasks(cfg, &tasks));
    RulerProfile profile = RulerProfile::kNvidia;
    std::vector<RulerTaskConfig> configs;
    EVALRUN_RETURN_IF_ERROR(TaskConfigs(cfg, tasks, &profile, &configs));
    const std::vector<int64_t> lengths = cfg.IntList("lengths");
    std::map<std::string, std::string> shas;
    EVALRUN_RETURN_IF_ERROR(VerifyRulerFiles(ctx.data_dir, &shas));
    RulerLoadOptions lo;
    lo.tasks = tasks;
    lo.punkt_dir = ctx.data_dir + "/punkt-english";
    RulerInputs inputs;
    EVALRUN_RETURN_IF_ERROR(LoadRulerInputs(ctx.data_dir + "/ruler", lo, &inputs));

    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const std::map<std::string, int64_t> task_samples = cfg.Counts("samples_per_task");
    const int default_n = static_cast<int>(cfg.Int("samples_per_task", 10));
    int tokenizer_calls = 0;
    out->spool = std::make_shared<PromptSpool>();
    EVALRUN_RETURN_IF_ERROR(out->spool->Open());
    nlohmann::json skipped = nlohmann::json::array();
    for (const RulerTaskConfig& task : configs) {
      Status avail = RulerTaskAvailable(inputs, task);
      if (!avail.ok()) {
        out->notes.push_back("task " + task.name + " skipped: " + avail.message());
        skipped.push_back({{"task", task.name}, {"reason", avail.message()}});
        continue;
      }
      auto tn = task_samples.find(task.name);
      const int n = tn != task_samples.end() ? static_cast<int>(tn->second) : default_n;
      for (int64_t length : lengths) {
        EVALRUN_RETURN_IF_ERROR(
            GenerateAtLength(ctx, inputs, task, length, n, seed, out, &skipped, &tokenizer_calls));
      }
    }
    if (out->items.empty()) {
      std::string why;
      for (const auto& sk : skipped) why += "; " + sk["reason"].get<std::string>();
      return Status::InvalidInput("parts.ruler: no task can run at any length" + why);
    }
    out->info["dataset"] = {{"files", shas}, {"sha256", shas["ruler/PaulGrahamEssays.json"]}};
    out->info["seed"] = seed;
    out->info["profile"] = RulerProfileName(profile);
    out->info["lengths"] = lengths;
    out->info["tasks"] = tasks;
    out->info["skipped"] = skipped;
    out->info["tokenizer_calls"] = tokenizer_calls;
    out->info["answer_prefix"] = "end of the user message";
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const Gold& g = gold_[item.scorer_index];
    FractionVerdict v;
    v.score = a.unclosed_think ? 0.0 : RulerSampleScore(g.metric, a.content, g.gold);
    v.cut_off = a.finish_reason == "length";
    v.null = RulerPostprocess(a.unclosed_think ? "" : a.content).empty();
    return v;
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart& prepared) const override {
    // length -> task -> per-sample scores (in sample order), nulls, cut-offs.
    struct Acc { std::vector<double> scores; int nulls = 0, cut = 0; };
    std::map<int64_t, std::map<std::string, Acc>> acc;
    int cut = 0;
    for (const auto& s : records) {
      const FractionVerdict& v = std::get<FractionVerdict>(s.verdict);
      Acc& a = acc[s.Int("length")][s.Text("task")];
      a.scores.push_back(v.score);
      a.nulls += v.null;
      a.cut += v.cut_off;
      cut += v.cut_off;
    }
    nlohmann::json r;
    nlohmann::json per_len = nlohmann::json::object();
    double total = 0;
    int lens = 0;
    for (auto& [len, tasks] : acc) {
      nlohmann::json t = nlohmann::json::object();
      double sum = 0;
      for (auto& [task, a] : tasks) {
        double sc = RulerTaskScoreFromSamples(a.scores);
        t[task] = {{"score", sc}, {"n", a.scores.size()}, {"nulls", a.nulls}, {"cut_off", a.cut}};
        sum += sc;
      }
      double mean = tasks.empty() ? 0 : sum / tasks.size();
      per_len[std::to_string(len)] = {{"score", Round(mean, 2)}, {"tasks", t}};
      total += mean;
      ++lens;
    }
    r["score"] = lens ? Round(total / lens, 2) : 0.0;
    r["score_scale"] = "0-100 (RULER: per-task string_match_all / string_match_part, mean over tasks per length)";
    r["lengths"] = per_len;
    r["n"] = records.size();
    r["cut_off"] = cut;
    r["failed"] = failed;
    AddSpeeds(records, &r);
    (void)prepared;
    return r;
  }

 private:
  // `task`'s n samples at `length` into out->items (up to ctx.limit items
  // in all); a length NVIDIA's script cannot prepare is skipped with a
  // note and an entry in *skipped.
  Status GenerateAtLength(const PartContext& ctx, const RulerInputs& inputs, const RulerTaskConfig& task,
                          int64_t length, int n, int64_t seed, PreparedPart* out, nlohmann::json* skipped,
                          int* tokenizer_calls) {
    const size_t first_item = out->items.size();
    const RulerSampleSink sink = [&](RulerSample s) -> Status {
      if (ctx.limit >= 0 && static_cast<int>(out->items.size()) >= ctx.limit) return Status::Ok();
      return AddItem(task, std::move(s), out);
    };
    RulerGenStats stats;
    Status st = GenerateRulerSamples(inputs, task, static_cast<int>(length), n, static_cast<uint64_t>(seed),
                                     ctx.tokenizer, sink, &stats);
    if (!st.ok()) return st.Prefixed("ruler " + task.name + " at " + std::to_string(length));
    *tokenizer_calls += stats.tokenizer_calls;
    if (stats.cannot_prepare) {
      // NVIDIA's script writes nothing here: drop what came before the stop.
      out->items.erase(out->items.begin() + static_cast<std::ptrdiff_t>(first_item), out->items.end());
      out->notes.push_back("task " + task.name + " at " + std::to_string(length) + " skipped: " + stats.reason);
      skipped->push_back({{"task", task.name}, {"length", length}, {"reason", stats.reason}});
    }
    return Status::Ok();
  }

  // One sample as an item, its gold kept for Score.
  Status AddItem(const RulerTaskConfig& task, RulerSample s, PreparedPart* out) {
    Item it;
    it.id = s.id;
    it.category = s.task;
    // The text goes to disk at once (13 tasks x 500 samples at 128K
    // are gigabytes); the pool reads it back when it sends it.
    SpoolRef ref;
    EVALRUN_RETURN_IF_ERROR(out->spool->Append(s.prompt, &ref));
    it.spooled = ref;
    it.prompt.messages.push_back({"user", std::string()});
    if (!s.assistant_prefix.empty()) it.prompt.messages.push_back({"assistant", s.assistant_prefix});
    it.prompt.params.max_tokens = s.max_tokens;
    it.prompt_sha256 = s.prompt_sha256;
    it.fields = {{"task", s.task},
                 {"length", static_cast<int64_t>(s.length)},
                 {"gold", s.gold},
                 {"prompt_tokens_counted", static_cast<int64_t>(s.exact_prompt_tokens)}};
    it.counted_prompt_tokens = s.exact_prompt_tokens;
    it.scorer_index = static_cast<int>(gold_.size());
    gold_.push_back({task.metric, s.gold});
    out->items.push_back(std::move(it));
    return Status::Ok();
  }

  struct Gold {
    RulerMetric metric;
    std::vector<std::string> gold;
  };
  std::vector<Gold> gold_;  // by Item::scorer_index
};

PartDefinition RulerDefinition() {
  PartDefinition d;
  d.name = "ruler";
  d.display_name = "RULER";
  d.run_order = 40;
  d.verdict = VerdictKind::kFraction;
  d.needs_tokenizer = true;
  d.keys = {
      CardKey::IntList("lengths", 256, 1 << 24, "length", " tokens",
                       "the sequence lengths, each once: prompt tokens after the chat template + answer budget <= "
                       "length, counted by the server's own tokenizer")
          .Default(std::vector<int64_t>{4096}),
      CardKey::NameList("tasks", "task", CheckTaskName,
                        "the tasks, each once (default: the 11 synthetic ones; qa_1 and qa_2 need the user's "
                        "SQuAD / HotpotQA files)"),
      CardKey::Count("samples_per_task", "task", CheckTaskName,
                     "samples of every task (default 10), or {task: count}")
          .OutOfRunKey(),
      SeedKey("same seed, byte-identical prompts on every machine and engine (default sampling.seed)"),
      CardKey::NameCounts("task_max_tokens", "task", CheckTaskName,
                          "{task: budget} overrides of RULER's answer budgets (niah 128, vt 30, cwe 120, fwe 50, qa 32)"),
      CardKey::Bool("allow_estimated_tokens",
                    "when the server cannot count tokens, use a byte-based estimate with a safety margin instead of "
                    "failing")
          .Default(false),
      CardKey::Enum("over_context", {"fail", "skip"},
                    "a length (or sample) over the server's context of one request: refused before any request, "
                    "or left out")
          .Default(std::string("fail")),
      CardKey::Enum("profile", {kRulerNvidiaProfile, kRulerFitProfile},
                    "how prompts are sized: `nvidia` (NVIDIA's prepare.py, byte for byte) or `fit` (each sample "
                    "fitted on its own)")
          .Default(std::string(kRulerNvidiaProfile)),
  };
  d.groups = {{"length", {"length"}}, {"task @ length", {"task", "length"}}};
  d.label = {"task", "length"};
  d.make_part = [] { return std::make_unique<RulerPart>(); };
  return d;
}

Benchmark RulerBenchmark() {
  Benchmark b;
  b.name = "ruler";
  b.title = "RULER";
  b.about = "NVIDIA's synthetic long-context tasks (needles, variable tracking, aggregation, QA) at the card's lengths";
  b.parts = {RulerDefinition()};
  b.datasets = {"ruler"};
  b.scorer = "string match all / part per task (NVIDIA/RULER scripts/eval/synthetic/constants.py), in scorers/ruler/; "
             "mean per task and length";
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(RulerBenchmark());

namespace {

}  // namespace

}  // namespace evalrun
