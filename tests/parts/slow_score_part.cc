// A part only the tests need, built into `evalrun-test-parts` (the real
// evalrun program with the parts of tests/parts/ beside the product's):
// "slowscore", 40 multiple-choice questions whose scorer takes
// `score_seconds` in a child process (/bin/sleep, as a code grader runs a
// program per answer) before it extracts the letter. It shows that the
// scoring stage keeps the request pool as busy as an instant scorer does,
// and that a run killed while it scores resumes without asking again.
#include <cstdio>
#include <string>

#include "evals/base/sha256.h"
#include "evals/run/prepare_steps.h"
#include "evals/proc/process_runner.h"
#include "evals/run/part.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "scorers/choice_extract.h"

namespace evalrun::testing {
namespace {

constexpr int kQuestions = 40;

std::string IdOf(int i) {
  char b[8];
  std::snprintf(b, sizeof b, "q%02d", i + 1);
  return b;
}
char GoldOf(int i) { return static_cast<char>('A' + i % 4); }

// /bin/sleep for `seconds` as a child process, through the process runner
// (evals/proc/process_runner.h) as a code grader runs its programs.
void SleepInChild(double seconds) {
  if (seconds <= 0) return;
  ProcessSpec spec;
  spec.argv = {"/bin/sleep", std::to_string(seconds)};
  spec.limits.wall_s = seconds + 30;
  ProcessResult result;
  RealProcessRunner().Run(spec, &result);
}

class SlowScorePart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    score_seconds_ = ctx.settings->Number("score_seconds", 1.0);
    std::vector<std::string> ids, cats;
    for (int i = 0; i < kQuestions; ++i) {
      ids.push_back(IdOf(i));
      cats.push_back(i % 2 ? "odd" : "even");
    }
    const int64_t seed = ctx.settings->Int("seed", ctx.card->request.sampling.seed);
    const int max_tokens = static_cast<int>(ctx.settings->Int("max_tokens", 8));
    for (size_t i : SelectQuestions(ctx, ids, cats, seed, ctx.settings->Int("questions", -1))) {
      const std::string text = "Question " + ids[i] + ": pick the letter " + std::string(1, GoldOf(int(i))) +
                               ".\nA) a\nB) b\nC) c\nD) d\n";
      Item it;
      it.id = ids[i];
      it.category = cats[i];
      it.prompt.messages.push_back({"user", text});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(text);
      it.fields = {{"gold", std::string(1, GoldOf(int(i)))}};
      it.scorer_index = static_cast<int>(i);
      out->items.push_back(std::move(it));
    }
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    SleepInChild(score_seconds_);
    const char letter = ExtractFirstLetter(a.content, 4);
    return ScoreChoice(letter, std::string(1, GoldOf(item.scorer_index)), a.finish_reason);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed, const PreparedPart&) const override {
    return AggregateChoice(records, failed);
  }

 private:
  double score_seconds_ = 1.0;
};

PartDefinition SlowScoreDefinition() {
  PartDefinition d;
  d.name = "slowscore";
  d.display_name = "Slow scorer (test)";
  d.run_order = 95;
  d.verdict = VerdictKind::kChoice;
  d.keys = {
      QuestionCountKey("questions", "all 40 by default"),
      MaxTokensKey("the answer limit (default 8)"),
      CardKey::Number("score_seconds", 0, 60, false, "seconds each answer's scorer takes in a child process")
          .Default(1.0),
      SeedKey("selection seed"),
  };
  d.make_part = [] { return std::make_unique<SlowScorePart>(); };
  return d;
}

}  // namespace

EVALRUN_BENCHMARK(Benchmark{.name = "slowscore",
                            .title = "Slow scorer (test)",
                            .about = "a scorer that takes seconds per answer, for the tests",
                            .parts = {SlowScoreDefinition()}});

}  // namespace evalrun::testing
