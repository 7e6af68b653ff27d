// The example benchmark of docs/architecture.md ("Adding a benchmark"): a
// folder and one line in the table. A multiple-choice part "capitals" with
// its own card keys, items, prompt and scorer, and its row of the benchmark
// table (EVALRUN_BENCHMARK, at the end). Nothing outside this folder names
// it: tests/CMakeLists.txt builds every tests/benchmarks/<name>/*.cc that is
// not a test into evalrun-test-parts (evalrun with the tests' benchmarks),
// and capitals_test.cc drives that binary through --list, run, score,
// report and compare; tests/engine/benchmark_names_test.cc greps the tree
// for the name.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "evals/benchmarks/table.h"
#include "evals/run/prepare_steps.h"
#include "evals/run/part.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "scorers/choice_extract.h"

namespace evalrun {
namespace {

struct Capital {
  const char* id;
  const char* region;
  const char* country;
  std::array<const char*, 4> options;
  char gold;
};

constexpr std::array<Capital, 10> kCapitals = {{
    {"c01", "europe", "France", {"Lyon", "Paris", "Nice", "Lille"}, 'B'},
    {"c02", "europe", "Italy", {"Rome", "Milan", "Turin", "Naples"}, 'A'},
    {"c03", "europe", "Spain", {"Seville", "Valencia", "Madrid", "Bilbao"}, 'C'},
    {"c04", "europe", "Norway", {"Bergen", "Oslo", "Tromso", "Stavanger"}, 'B'},
    {"c05", "europe", "Poland", {"Krakow", "Gdansk", "Lodz", "Warsaw"}, 'D'},
    {"c06", "asia", "Japan", {"Osaka", "Kyoto", "Tokyo", "Nagoya"}, 'C'},
    {"c07", "asia", "India", {"New Delhi", "Mumbai", "Chennai", "Kolkata"}, 'A'},
    {"c08", "asia", "Vietnam", {"Hue", "Hanoi", "Da Nang", "Hai Phong"}, 'B'},
    {"c09", "asia", "Thailand", {"Chiang Mai", "Phuket", "Pattaya", "Bangkok"}, 'D'},
    {"c10", "asia", "Nepal", {"Kathmandu", "Pokhara", "Lalitpur", "Biratnagar"}, 'A'},
}};

class CapitalsPart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    std::vector<std::string> ids, regions;
    for (const Capital& c : kCapitals) {
      ids.push_back(c.id);
      regions.push_back(c.region);
    }
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", 16));
    const bool terse = cfg.String("prompt") == "terse";
    for (size_t i : SelectQuestions(ctx, ids, regions, seed, cfg.Int("questions", -1))) {
      const Capital& c = kCapitals[i];
      std::string text = terse ? "" : "Answer with the letter of the right option.\n";
      text += "Question " + std::string(c.id) + ": what is the capital of " + c.country + "?\n";
      for (int k = 0; k < 4; ++k) text += std::string(1, static_cast<char>('A' + k)) + ") " + c.options[k] + "\n";
      Item it;
      it.id = c.id;
      it.category = c.region;
      it.prompt.messages.push_back({"user", text});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(text);
      it.fields = {{"gold", std::string(1, c.gold)}};
      it.scorer_index = static_cast<int>(i);
      out->items.push_back(std::move(it));
    }
    out->info["dataset"] = {{"rows", kCapitals.size()}};
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const char letter = a.unclosed_think ? 0 : ExtractFirstLetter(a.content, 4);
    return ScoreChoice(letter, std::string(1, kCapitals[item.scorer_index].gold), a.finish_reason);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart&) const override {
    nlohmann::json r = AggregateChoice(records, failed);
    r["regions"] = r["categories"];
    return r;
  }
};

PartDefinition CapitalsDefinition() {
  PartDefinition d;
  d.name = "capitals";
  d.display_name = "World Capitals";
  d.run_order = 90;
  d.verdict = VerdictKind::kChoice;
  d.keys = {
      QuestionCountKey("questions", "all 10 by default, stratified by region"),
      MaxTokensKey("the answer limit (default 16)"),
      CardKey::Enum("prompt", {"plain", "terse"}, "`plain` (with an instruction line) or `terse`")
          .Default(std::string("plain")),
      SeedKey("selection seed (default sampling.seed)"),
  };
  d.make_part = [] { return std::make_unique<CapitalsPart>(); };
  return d;
}

}  // namespace

EVALRUN_BENCHMARK(Benchmark{.name = "capitals",
                            .title = "World Capitals",
                            .about = "ten four-option questions on capital cities, the example benchmark",
                            .parts = {CapitalsDefinition()},
                            .scorer = "the first letter (scorers/choice_extract.h); accuracy"});

}  // namespace evalrun

