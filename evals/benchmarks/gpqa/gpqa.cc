// GPQA Diamond. The questions are read from the original password-protected
// zip in memory at run time and never written out (the authors ask that they
// not appear in plain text online). The answer order is shuffled per question
// from (seed, record id): the same on every run and machine, whatever the
// concurrency.
#include "evals/benchmarks/gpqa/gpqa_data.h"
#include "evals/run/prepare_steps.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/base/sha256.h"
#include "scorers/choice_extract.h"

namespace evalrun {
namespace {

class GpqaPart : public Part {
 public:

  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    prompt_ = cfg.String("prompt");
    extract_ = cfg.String("extract");
    std::string zip, sha;
    EVALRUN_RETURN_IF_ERROR(FindDataFile(ctx, "gpqa/dataset.zip", &zip, &sha));
    const std::string password = GpqaZipPassword();
    std::vector<GpqaQuestion> qs;
    EVALRUN_RETURN_IF_ERROR(LoadGpqa(zip, kGpqaDiamondMember, password, &qs));

    std::vector<std::string> ids, domains;
    for (const auto& q : qs) {
      ids.push_back(q.record_id);
      domains.push_back(q.domain);
    }
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const std::vector<size_t> chosen = SelectQuestions(ctx, ids, domains, seed, cfg.Int("questions", -1));
    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", prompt_ == "letter" ? 1024 : 4096));
    for (size_t i : chosen) {
      const GpqaQuestion& q = qs[i];
      std::array<int, 4> order = GpqaChoiceOrder(static_cast<uint64_t>(seed), q.record_id);
      Item it;
      it.id = q.record_id;
      it.category = q.domain;
      std::string text = GpqaPrompt(q, order, prompt_);
      it.prompt.messages.push_back({"user", text});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(text);
      const std::string gold(1, GpqaCorrectLetter(order));
      it.fields = {{"subdomain", q.subdomain},
                   {"choice_order", std::vector<int64_t>(order.begin(), order.end())},
                   {"gold", gold}};
      it.scorer_index = static_cast<int>(gold_.size());
      gold_.push_back(gold);
      out->items.push_back(std::move(it));
    }
    out->info["dataset"] = {{"file", "gpqa/dataset.zip"}, {"member", kGpqaDiamondMember},
                            {"sha256", sha}, {"rows", qs.size()}};
    out->info["prompt"] = prompt_;
    out->info["extract"] = extract_;
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    char letter = 0;
    if (!a.unclosed_think)
      letter = extract_ == "simple-evals" ? ExtractSimpleEvalsLetter(a.content) : ExtractFirstLetter(a.content, 4);
    // simple-evals compares the letter as written ("d" is not "D").
    return ScoreChoice(letter, gold_[item.scorer_index], a.finish_reason);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart&) const override {
    nlohmann::json r = AggregateChoice(records, failed, "category");
    r["domains"] = r["categories"];
    r["subdomains"] = AggregateChoice(records, failed, "subdomain")["categories"];
    return r;
  }

 private:
  std::vector<std::string> gold_;  // the gold letter by Item::scorer_index
  std::string prompt_ = "letter";
  std::string extract_ = "first-letter";
};

PartDefinition GpqaDefinition() {
  PartDefinition d;
  d.name = "gpqa";
  d.display_name = "GPQA";
  d.run_order = 20;
  d.verdict = VerdictKind::kChoice;
  d.keys = {
      QuestionCountKey("questions", "all 198 of GPQA Diamond by default, stratified by domain"),
      MaxTokensKey("the answer limit (default 1,024 for `letter`, 4,096 for `simple-evals`)"),
      CardKey::Enum("prompt", {"letter", "simple-evals"},
                    "`letter` or `simple-evals` (openai/simple-evals' template with its `Answer: $LETTER` line)")
          .Default(std::string("letter")),
      CardKey::Enum("extract", {"first-letter", "simple-evals"}, "`first-letter` or `simple-evals` (its regex, first match)")
          .Default(std::string("first-letter")),
      SeedKey("selection seed, and the seed of each question's answer order (default sampling.seed)"),
  };
  d.groups = {{"category", {"category"}}, {"subdomain", {"subdomain"}}};
  d.make_part = [] { return std::make_unique<GpqaPart>(); };
  return d;
}

Benchmark GpqaBenchmark() {
  Benchmark b;
  b.name = "gpqa";
  b.title = "GPQA Diamond";
  b.about = "198 graduate-level four-option questions, read from the protected zip in memory, options shuffled by seed";
  b.parts = {GpqaDefinition()};
  b.datasets = {"gpqa"};
  b.scorer = "the answer's letter, `first-letter` or `simple-evals` (openai/simple-evals gpqa_eval.py's regex); "
             "accuracy";
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(GpqaBenchmark());

namespace {

}  // namespace

}  // namespace evalrun
