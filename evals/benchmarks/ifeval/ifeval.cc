// IFEval (google-research instruction_following_eval): each prompt is one
// user message; the verdicts are those of the official checker (strict and
// loose, evaluation_lib.py), ported in scorers/ifeval/.
#include <dirent.h>

#include <map>

#include "datasets/manifest.h"
#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "evals/run/prepare_steps.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/base/sha256.h"
#include "scorers/ifeval/ifeval_checkers.h"
#include "scorers/ifeval/ifeval_eval.h"
#include "scorers/ifeval/langdetect.h"
#include "scorers/punkt.h"

namespace evalrun {
namespace {

class IfevalPart : public Part {
 public:

  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    std::string path, sha;
    EVALRUN_RETURN_IF_ERROR(FindDataFile(ctx, "ifeval/input_data.jsonl", &path, &sha));
    // The sentence splitter and the language detector the checker needs.
    for (const char* m : {"punkt-english", "langdetect"}) {
      for (const auto& f : FindManifest(m)->files) {
        std::string abs;
        EVALRUN_RETURN_IF_ERROR(VerifyDataFile(ctx.data_dir, f.path, &abs));
      }
    }
    EVALRUN_RETURN_IF_ERROR(PunktModel::Load(ctx.data_dir + "/punkt-english", &punkt_));
    EVALRUN_RETURN_IF_ERROR(LangDetector::Load(ctx.data_dir + "/langdetect", &lang_));

    std::string text;
    EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
    std::vector<std::unique_ptr<const IfevalPrompt>> all;
    EVALRUN_RETURN_IF_ERROR(ParseJsonl(text, path, [&](int line, const nlohmann::json& row) {
      IfevalPromptSpec spec;
      const std::string where = path + ":" + std::to_string(line);
      EVALRUN_RETURN_IF_ERROR(ParseIfevalPromptSpec(row, where, &spec));
      std::unique_ptr<const IfevalPrompt> p;
      Status st = IfevalPrompt::Compile(spec, &p);
      if (!st.ok()) return st.Prefixed(where);
      all.push_back(std::move(p));
      return Status::Ok();
    }));

    std::vector<std::string> ids, cats;
    for (const auto& p : all) {
      ids.push_back(std::to_string(p->key()));
      cats.push_back("all");
    }
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const std::vector<size_t> chosen = SelectQuestions(ctx, ids, cats, seed, cfg.Int("prompts", -1));
    const int max_tokens = static_cast<int>(cfg.Int("max_tokens"));
    for (size_t i : chosen) {
      const IfevalPrompt& p = *all[i];
      Item it;
      it.id = ids[i];
      const std::string& first = p.instruction_ids().empty() ? std::string() : p.instruction_ids()[0];
      it.category = first.substr(0, first.find(':'));
      it.prompt.messages.push_back({"user", p.prompt()});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(p.prompt());
      it.fields = {{"prompt", p.prompt()}};  // instruction_id_list comes with the verdict
      it.scorer_index = static_cast<int>(prompts_.size());
      by_prompt_[p.prompt()] = static_cast<int>(out->items.size());
      prompts_.push_back(std::move(all[i]));
      out->items.push_back(std::move(it));
    }
    input_path_ = ctx.input_override.empty() ? ctx.data_dir + "/ifeval/input_data.jsonl" : path;
    out->info["dataset"] = {{"file", ctx.input_override.empty() ? "ifeval/input_data.jsonl" : path},
                            {"sha256", sha}, {"rows", ids.size()}};
    out->info["langdetect_seed"] = 0;
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  // Recorded answers may carry the dataset key as "id" or, in the official
  // response format, only the prompt text.
  int FindItem(const nlohmann::json& line, const std::unordered_map<std::string, int>& index_by_id,
               std::string* why) const override {
    if (line.contains("id") || line.contains("key")) {
      const auto& v = line.contains("id") ? line["id"] : line["key"];
      std::string id = v.is_string() ? v.get<std::string>() : v.dump();
      auto f = index_by_id.find(id);
      if (f != index_by_id.end()) return f->second;
    }
    if (line.contains("prompt") && line["prompt"].is_string()) {
      auto f = by_prompt_.find(line["prompt"].get<std::string>());
      if (f != by_prompt_.end()) return f->second;
    }
    if (!line.contains("id") && !line.contains("key") && line.contains("prompt")) {
      // Matched by prompt text (the official IFEval format): a prompt
      // worded otherwise comes from another revision of the dataset.
      *why = "no prompt of " + input_path_ + " has this line's prompt text (lines without an id are matched by "
             "exact prompt text, as the official evaluation_lib does), so the responses were made from another "
             "revision of the dataset: pass that revision's file with --input FILE (for upstream's GPT-4 responses "
             "of 2023-11-07: instruction_following_eval/data/input_data_gpt4_20231107_145030.jsonl)";
    }
    return -1;
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const IfevalPrompt& p = *prompts_[item.scorer_index];
    const bool cut = a.finish_reason == "length";
    IfevalVerdict strict, loose;
    if (cut || a.unclosed_think) {
      // A cut-off answer fails all its instructions.
      strict.follow_list.assign(p.instruction_ids().size(), false);
      loose = strict;
    } else {
      IfevalResources res{punkt_.get(), lang_.get()};
      strict = p.EvaluateStrict(res, a.content);
      loose = p.EvaluateLoose(res, a.content);
    }
    InstructionVerdict v;
    v.instruction_ids = p.instruction_ids();
    v.strict = {strict.follow_all, strict.follow_list};
    v.loose = InstructionLevel{loose.follow_all, loose.follow_list};
    v.cut_off = cut;
    return v;
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart&) const override {
    IfevalAccuracy strict, loose;
    int cut = 0;
    auto verdict = [](const InstructionLevel& l) {
      IfevalVerdict r;
      r.follow_all = l.all;
      r.follow_list = l.per_instruction;
      return r;
    };
    for (const auto& s : records) {
      const InstructionVerdict& v = std::get<InstructionVerdict>(s.verdict);
      strict.Add(v.instruction_ids, verdict(v.strict));
      loose.Add(v.instruction_ids, verdict(v.loose ? *v.loose : v.strict));
      cut += v.cut_off;
    }
    nlohmann::json r;
    r["prompt_strict"] = Round(strict.PromptLevel(), 6);
    r["inst_strict"] = Round(strict.InstructionLevel(), 6);
    r["prompt_loose"] = Round(loose.PromptLevel(), 6);
    r["inst_loose"] = Round(loose.InstructionLevel(), 6);
    // The headline score of the table: prompt-level strict accuracy.
    r["score"] = r["prompt_strict"];
    r["stderr"] = Round(BinomialStderr(strict.PromptLevel(), static_cast<int>(records.size())), 6);
    nlohmann::json per = nlohmann::json::object();
    for (const auto& [id, c] : strict.by_instruction) {
      const auto& l = loose.by_instruction.at(id);
      per[id] = {{"n", c.total},
                 {"strict", Round(c.total ? static_cast<double>(c.followed) / c.total : 0.0, 6)},
                 {"loose", Round(l.total ? static_cast<double>(l.followed) / l.total : 0.0, 6)}};
    }
    r["instructions"] = per;
    r["n"] = records.size();
    r["instructions_n"] = strict.instruction_total;
    r["cut_off"] = cut;
    r["failed"] = failed;
    AddSpeeds(records, &r);
    return r;
  }

 private:
  std::unique_ptr<PunktModel> punkt_;
  std::unique_ptr<LangDetector> lang_;
  std::vector<std::unique_ptr<const IfevalPrompt>> prompts_;
  std::unordered_map<std::string, int> by_prompt_;
  std::string input_path_;  // the dataset file, for messages
};

PartDefinition IfevalDefinition() {
  PartDefinition d;
  d.name = "ifeval";
  d.display_name = "IFEval";
  d.run_order = 30;
  d.verdict = VerdictKind::kInstruction;
  d.keys = {
      QuestionCountKey("prompts", "all 541 by default: a seeded subset"),
      MaxTokensKey("the answer limit; a cut-off answer fails all its instructions").Default(int64_t{4096}),
      SeedKey("selection seed (default sampling.seed)"),
  };
  d.make_part = [] { return std::make_unique<IfevalPart>(); };
  return d;
}

Benchmark IfevalBenchmark() {
  Benchmark b;
  b.name = "ifeval";
  b.title = "IFEval";
  b.about = "541 prompts with verifiable instructions (google-research instruction_following_eval)";
  b.parts = {IfevalDefinition()};
  b.datasets = {"ifeval"};
  b.scorer = "the official checkers, strict and loose (evaluation_lib.py), ported in scorers/ifeval/; prompt- and "
             "instruction-level accuracy";
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(IfevalBenchmark());

namespace {

}  // namespace

}  // namespace evalrun
