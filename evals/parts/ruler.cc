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
#include "evals/parts/parts.h"
#include "evals/parts/ruler_inputs.h"
#include "evals/parts/ruler_tasks.h"
#include "evals/run/results.h"
#include "scorers/ruler_metrics.h"

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

class RulerPart : public Part {
 public:
  std::string name() const override { return "ruler"; }
  bool NeedsTokenizer() const override { return true; }

  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartConfig& cfg = *ctx.config;
    if (!ctx.tokenizer) return Status::Internal("ruler: no tokenizer");
    std::vector<std::string> tasks = cfg.tasks.empty() ? DefaultTasks() : cfg.tasks;
    if (!cfg.task_samples.empty() && cfg.tasks.empty()) {
      tasks.clear();
      for (const auto& t : DefaultTasks())
        if (cfg.task_samples.count(t)) tasks.push_back(t);
      for (const auto& [t, n] : cfg.task_samples)
        if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
    }
    for (const auto& [t, n] : cfg.task_samples)
      if (std::find(tasks.begin(), tasks.end(), t) == tasks.end())
        return Status::InvalidInput("parts.ruler.samples_per_task." + t + ": not one of parts.ruler.tasks");
    RulerProfile profile = RulerProfile::kNvidia;
    if (!cfg.profile.empty()) {
      Status st = RulerProfileByName(cfg.profile, &profile);
      if (!st.ok()) return Status::InvalidInput("parts.ruler.profile: " + st.message());
    }
    std::vector<RulerTaskConfig> configs;
    for (const auto& t : tasks) {
      RulerTaskConfig c;
      Status st = RulerTaskByName(t, &c);
      if (!st.ok()) return Status::InvalidInput("parts.ruler.tasks: " + st.message());
      c.profile = profile;
      auto o = cfg.task_max_tokens.find(t);
      if (o != cfg.task_max_tokens.end()) c.max_tokens = o->second;
      configs.push_back(c);
    }
    for (const auto& [t, n] : cfg.task_max_tokens)
      if (std::find(tasks.begin(), tasks.end(), t) == tasks.end())
        return Status::InvalidInput("parts.ruler.task_max_tokens." + t + ": not one of parts.ruler.tasks");
    std::vector<int64_t> lengths = cfg.lengths.empty() ? std::vector<int64_t>{4096} : cfg.lengths;

    // The required inputs, checked against the manifest.
    std::map<std::string, std::string> shas;
    for (const char* f : {"ruler/PaulGrahamEssays.json", "ruler/wonderwords/nounlist.txt",
                          "ruler/wonderwords/adjectivelist.txt", "ruler/wonderwords/verblist.txt",
                          "punkt-english/abbrev_types.txt", "punkt-english/collocations.tab",
                          "punkt-english/sent_starters.txt", "punkt-english/ortho_context.tab"}) {
      std::string path;
      EVALRUN_RETURN_IF_ERROR(VerifyDataFile(ctx.data_dir, f, &path));
      shas[f] = FindManifestFile(f)->sha256;
    }
    RulerLoadOptions lo;
    lo.tasks = tasks;
    lo.punkt_dir = ctx.data_dir + "/punkt-english";
    RulerInputs inputs;
    EVALRUN_RETURN_IF_ERROR(LoadRulerInputs(ctx.data_dir + "/ruler", lo, &inputs));

    const int64_t seed = cfg.seed.value_or(ctx.card->sampling.seed);
    const int default_n = cfg.samples_per_task > 0 ? cfg.samples_per_task : 10;
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
      auto tn = cfg.task_samples.find(task.name);
      const int n = tn != cfg.task_samples.end() ? tn->second : default_n;
      for (int64_t length : lengths) {
        const size_t first_item = out->items.size();
        const RulerSampleSink sink = [&](RulerSample s) -> Status {
          if (ctx.limit >= 0 && static_cast<int>(out->items.size()) >= ctx.limit) return Status::Ok();
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
          it.fields["task"] = s.task;
          it.fields["length"] = s.length;
          it.fields["gold"] = s.gold;
          it.fields["prompt_tokens_counted"] = s.exact_prompt_tokens;
          it.score_data = {{"metric", static_cast<int>(task.metric)}, {"gold", s.gold}};
          out->items.push_back(std::move(it));
          return Status::Ok();
        };
        RulerGenStats stats;
        Status st = GenerateRulerSamples(inputs, task, static_cast<int>(length), n, static_cast<uint64_t>(seed),
                                         ctx.tokenizer, sink, &stats);
        if (!st.ok()) return st.Prefixed("ruler " + task.name + " at " + std::to_string(length));
        tokenizer_calls += stats.tokenizer_calls;
        if (stats.cannot_prepare) {
          // NVIDIA's script writes nothing here: drop what came before the stop.
          out->items.erase(out->items.begin() + static_cast<std::ptrdiff_t>(first_item), out->items.end());
          out->notes.push_back("task " + task.name + " at " + std::to_string(length) + " skipped: " + stats.reason);
          skipped.push_back({{"task", task.name}, {"length", length}, {"reason", stats.reason}});
        }
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

  void Score(const Item& item, const Completion& a, nlohmann::json* s) const override {
    auto metric = static_cast<RulerMetric>(item.score_data.at("metric").get<int>());
    std::vector<std::string> gold = item.score_data.at("gold");
    (*s)["score"] = a.unclosed_think ? 0.0 : RulerSampleScore(metric, a.content, gold);
    (*s)["cut_off"] = a.finish_reason == "length";
    (*s)["null"] = RulerPostprocess(a.unclosed_think ? "" : a.content).empty();
  }

  nlohmann::json Aggregate(const std::vector<nlohmann::json>& samples, int failed,
                           const PreparedPart& prepared) const override {
    // length -> task -> per-sample scores (in sample order), nulls, cut-offs.
    struct Acc { std::vector<double> scores; int nulls = 0, cut = 0; };
    std::map<int, std::map<std::string, Acc>> acc;
    int cut = 0;
    for (const auto& s : samples) {
      Acc& a = acc[s.value("length", 0)][s.value("task", std::string())];
      a.scores.push_back(s.value("score", 0.0));
      a.nulls += s.value("null", false);
      a.cut += s.value("cut_off", false);
      cut += s.value("cut_off", false);
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
    r["n"] = samples.size();
    r["cut_off"] = cut;
    r["failed"] = failed;
    AddSpeeds(samples, &r);
    (void)prepared;
    return r;
  }
};

}  // namespace

std::unique_ptr<Part> MakeRulerPart() { return std::make_unique<RulerPart>(); }

}  // namespace evalrun
