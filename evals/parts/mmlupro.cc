// MMLU-Pro (TIGER-Lab). Prompts and the `official` extraction follow
// TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py (preprocess, format_example,
// single_request, extract_answer); `letter` is the published zero-shot method.
#include <map>

#include "datasets/manifest.h"
#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "evals/parts/prepare_steps.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/base/sha256.h"
#include "scorers/choice_extract.h"

namespace evalrun {
namespace {

constexpr char kLetters[] = "ABCDEFGHIJ";

struct Row {
  int64_t id = 0;
  std::string question;
  std::vector<std::string> options;  // "N/A" dropped, as preprocess() does
  std::string answer;
  std::string cot_content;
  std::string category;
};

Status LoadRows(const std::string& path, std::vector<Row>* rows) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseJsonl(text, path, [&](int line, const nlohmann::json& j) {
    std::string where = path + ":" + std::to_string(line);
    EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(j, where, ""));
    JsonFields f(j, where, "");
    Row r;
    std::vector<std::string> options;
    EVALRUN_RETURN_IF_ERROR(f.Int("question_id", &r.id, true));
    EVALRUN_RETURN_IF_ERROR(f.String("question", &r.question, true));
    EVALRUN_RETURN_IF_ERROR(f.StringList("options", &options, true));
    EVALRUN_RETURN_IF_ERROR(f.String("answer", &r.answer, true));
    EVALRUN_RETURN_IF_ERROR(f.String("category", &r.category, true));
    EVALRUN_RETURN_IF_ERROR(f.String("cot_content", &r.cot_content));
    for (auto& o : options)
      if (o != "N/A") r.options.push_back(std::move(o));
    if (r.options.empty() || r.options.size() > 10)
      return f.Error("options", "expected 1..10 options, got " + std::to_string(r.options.size()));
    if (r.answer.size() != 1 || r.answer[0] < 'A' || r.answer[0] > 'J')
      return f.Error("answer", "expected a letter A..J, got \"" + r.answer + "\"");
    rows->push_back(std::move(r));
    return Status::Ok();
  });
}

// evaluate_from_api.py format_example(): "Question: ...\nOptions: A. ..\n"
// then "Answer: " + cot (the exemplar's without "A: ", or "Let's think step
// by step.") + "\n\n".
std::string FormatExample(const Row& r, bool exemplar) {
  std::string cot = exemplar ? r.cot_content : "";
  if (cot.empty()) cot = "Let's think step by step.";
  if (cot.rfind("A: ", 0) == 0) cot = cot.substr(3);
  std::string s = "Question: " + r.question + "\nOptions: ";
  for (size_t i = 0; i < r.options.size(); ++i) s += std::string(1, kLetters[i]) + ". " + r.options[i] + "\n";
  s += "Answer: " + cot + "\n\n";
  return s;
}

std::string CotPrompt(const Row& r, const std::vector<const Row*>& shots) {
  std::string p = "The following are multiple choice questions (with answers) about " + r.category +
                  ". Think step by step and then output the answer in the format of \"The answer is (X)\" "
                  "at the end.\n\n";
  for (const Row* s : shots) p += FormatExample(*s, true);
  return p + FormatExample(r, false);
}

// The published zero-shot method: the options lettered, the letter only.
std::string LetterPrompt(const Row& r) {
  std::string p = "The following is a multiple choice question about " + r.category + ".\n\n";
  p += "Question: " + r.question + "\n\nOptions:\n";
  for (size_t i = 0; i < r.options.size(); ++i) p += std::string(1, kLetters[i]) + ". " + r.options[i] + "\n";
  char last = kLetters[r.options.size() - 1];
  p += "\nAnswer with only the letter (A-" + std::string(1, last) + ") of the correct option.";
  return p;
}

class MmluProPart : public Part {
 public:

  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    prompt_ = cfg.String("prompt");
    extract_ = cfg.String("extract");
    const std::string split = cfg.String("split");
    std::string path, sha;
    EVALRUN_RETURN_IF_ERROR(FindDataFile(ctx, "mmlu-pro/" + split + ".jsonl", &path, &sha));
    std::vector<Row> rows;
    EVALRUN_RETURN_IF_ERROR(LoadRows(path, &rows));

    std::map<std::string, std::vector<const Row*>> shots;
    std::vector<Row> val;
    if (prompt_ == "cot-5shot") {
      std::string vpath;
      EVALRUN_RETURN_IF_ERROR(VerifyDataFile(ctx.data_dir, "mmlu-pro/validation.jsonl", &vpath));
      EVALRUN_RETURN_IF_ERROR(LoadRows(vpath, &val));
      for (const Row& v : val)
        if (shots[v.category].size() < 5) shots[v.category].push_back(&v);
    }

    std::vector<std::string> ids, cats;
    for (const Row& r : rows) {
      ids.push_back(std::to_string(r.id));
      cats.push_back(r.category);
    }
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const std::vector<size_t> chosen = SelectQuestions(ctx, ids, cats, seed, cfg.Int("questions", -1));

    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", prompt_ == "letter" ? 1024 : 4000));
    for (size_t i : chosen) {
      const Row& r = rows[i];
      Item it;
      it.id = ids[i];
      it.category = r.category;
      std::string text;
      if (prompt_ == "cot-5shot") {
        auto s = shots.find(r.category);
        if (s == shots.end())
          return Status::InvalidInput("mmlu-pro/validation.jsonl: no 5-shot exemplars for category \"" +
                                      r.category + "\"");
        text = CotPrompt(r, s->second);
      } else {
        text = LetterPrompt(r);
      }
      it.prompt.messages.push_back({"user", text});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(text);
      it.fields = {{"gold", r.answer}, {"num_options", static_cast<int64_t>(r.options.size())}};
      it.scorer_index = static_cast<int>(gold_.size());
      gold_.push_back({r.answer, static_cast<int>(r.options.size())});
      out->items.push_back(std::move(it));
    }
    out->info["dataset"] = {{"file", "mmlu-pro/" + split + ".jsonl"}, {"sha256", sha}, {"rows", rows.size()}};
    out->info["prompt"] = prompt_;
    out->info["extract"] = extract_;
    out->info["questions_requested"] = cfg.Int("questions", -1);
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const Gold& g = gold_[item.scorer_index];
    char letter = 0;
    if (!a.unclosed_think) {
      letter = extract_ == "official" ? ExtractOfficialMmluPro(a.content) : ExtractFirstLetter(a.content, g.options);
    }
    return ScoreChoice(letter, g.letter, a.finish_reason);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart&) const override {
    return AggregateChoice(records, failed);
  }

 private:
  struct Gold {
    std::string letter;
    int options = 0;
  };
  std::vector<Gold> gold_;  // by Item::scorer_index
  std::string prompt_ = "letter";
  std::string extract_ = "first-letter";
};

PartDefinition MmluProDefinition() {
  PartDefinition d;
  d.name = "mmlupro";
  d.display_name = "MMLU-Pro";
  d.run_order = 10;
  d.verdict = VerdictKind::kChoice;
  d.keys = {
      QuestionCountKey("questions", "all 12,032 by default: a seeded sample stratified by category (the same ids "
                                    "on every machine)"),
      MaxTokensKey("the answer limit (default 1,024 for `letter`, 4,000 for `cot-5shot`); finish_reason `length` "
                   "= cut off = wrong"),
      CardKey::Enum("prompt", {"letter", "cot-5shot"},
                    "`letter`: zero-shot, lettered options, the letter only (the published method); `cot-5shot`: "
                    "TIGER-Lab's API prompt with the 5 validation exemplars of the category")
          .Default(std::string("letter")),
      CardKey::Enum("extract", {"first-letter", "official"},
                    "`first-letter`: the first standalone option letter after reasoning and markdown emphasis are "
                    "removed; `official`: TIGER-Lab evaluate_from_api.py's regex chain")
          .Default(std::string("first-letter")),
      SeedKey("selection seed (default sampling.seed)"),
      CardKey::Enum("split", {"test", "validation"}, "the dataset split").Default(std::string("test")),
  };
  d.make_part = [] { return std::make_unique<MmluProPart>(); };
  return d;
}

EVALRUN_REGISTER_PART(MmluProDefinition());

}  // namespace

}  // namespace evalrun
