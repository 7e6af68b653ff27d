// GSM8K as a task file (tasks/gsm8k.json) scores as lm-evaluation-harness's
// gsm8k task does, verdict for verdict, under both of its filters:
// lm_eval/tasks/gsm8k/gsm8k.yaml (commit 47f16bf6a68ec19467e728ce52ac6c5937d5b3da)
// "strict-match" (regex "#### (\-?[0-9\.\,]+)", take_first) and
// "flexible-extract" (regex "(-?[$0-9.,]{2,})|(-?[0-9]+)", group_select -1,
// take_first), each then compared by exact_match with ignore_case and
// regexes_to_ignore [",", "\$", "(?s).*#### ", "\.$"]
// (lm_eval/filters/extraction.py RegexFilter, lm_eval/api/metrics.py
// exact_match_hf_evaluate). The expected verdicts in
// tests/fixtures/gsm8k/answers.jsonl come from make_answers.py beside it,
// which restates those rules with Python's re; the rows in test.jsonl are
// written in the dataset's exact format.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "evals/kinds/match.h"
#include "evals/run/card.h"
#include "evals/run/part.h"
#include "evals/tasks/file_part.h"
#include "evals/tasks/task_file.h"
#include "tests/support/jsonl_file.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

struct Prepared {
  std::unique_ptr<Part> part;
  PreparedPart items;
};

// The task's part with parts.gsm8k.extract = `extract`, prepared on the
// fixture rows as `score --input` prepares it.
Prepared Prepare(const std::string& extract) {
  auto spec = std::make_shared<TaskSpec>();
  Status st = LoadTaskFile(SourceDir() + "/tasks/gsm8k.json", spec.get());
  EXPECT_TRUE(st.ok()) << st.message();
  static Card card;  // outlives the parts: settings point at the definition's keys
  static std::vector<std::unique_ptr<PartDefinition>> defs;
  defs.push_back(std::make_unique<PartDefinition>(FilePartDefinition(spec)));
  PartSettings settings;
  st = ParsePartSettings(defs.back()->keys, {{"extract", extract}}, "card.json", "parts.gsm8k", &settings);
  EXPECT_TRUE(st.ok()) << st.message();
  PartContext ctx;
  ctx.card = &card;
  ctx.settings = &settings;
  ctx.all_items = true;
  ctx.input_override = FixturePath("gsm8k/test.jsonl");
  Prepared p{defs.back()->make_part(), {}};
  st = p.part->Prepare(ctx, &p.items);
  EXPECT_TRUE(st.ok()) << st.message();
  return p;
}

// The item whose gold solution ends in "#### <number>".
const Item* ItemOf(const PreparedPart& part, const std::string& number) {
  for (const Item& it : part.items)
    for (const ItemField& f : it.fields) {
      const std::string* gold = std::get_if<std::string>(&f.value);
      const std::string tail = "#### " + number;
      if (f.name == "gold" && gold && gold->size() >= tail.size() &&
          gold->compare(gold->size() - tail.size(), tail.size(), tail) == 0)
        return &it;
    }
  return nullptr;
}

void ExpectParity(const std::string& extract, const std::string& field) {
  const Prepared p = Prepare(extract);
  ASSERT_EQ(p.items.items.size(), 5u);
  int n = 0, right = 0;
  for (const auto& line : ReadJsonLines(FixturePath("gsm8k/answers.jsonl"))) {
    const Item* item = ItemOf(p.items, line["gold"].get<std::string>());
    ASSERT_NE(item, nullptr) << line.dump();
    Completion c;
    c.content = line["response"].get<std::string>();
    c.finish_reason = "stop";
    const Verdict v = p.part->Score(*item, c);
    const MatchVerdict* m = OtherVerdictValue<MatchVerdict>(v);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->correct, line[field].get<bool>()) << extract << ": " << line.dump();
    ++n;
    right += m->correct;
  }
  EXPECT_EQ(n, 20);
  EXPECT_GT(right, 0);
  EXPECT_LT(right, n);
}

TEST(TaskGsm8kParity, StrictMatchAsLmEvaluationHarness) { ExpectParity("strict-match", "strict_match"); }

TEST(TaskGsm8kParity, FlexibleExtractAsLmEvaluationHarness) { ExpectParity("flexible-extract", "flexible_extract"); }

TEST(TaskGsm8kParity, ACutOffAnswerIsWrongAndCountedApart) {
  const Prepared p = Prepare("strict-match");
  Completion c;
  c.content = "9 * 2 = 18\n#### 18";
  c.finish_reason = "length";
  const Verdict v = p.part->Score(*ItemOf(p.items, "18"), c);
  const MatchVerdict* m = OtherVerdictValue<MatchVerdict>(v);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->correct);
  EXPECT_TRUE(m->cut_off);
  EXPECT_FALSE(m->no_answer);
}

}  // namespace
}  // namespace evalrun::testing
