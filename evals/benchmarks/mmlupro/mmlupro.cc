// MMLU-Pro (TIGER-Lab). Prompts and the `official` extraction follow
// TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py (preprocess, format_example,
// single_request, extract_answer); `letter` is the published zero-shot method.
#include <charconv>
#include <map>

#include "datasets/manifest.h"
#include "evals/base/json_fields.h"
#include "evals/base/json_top_fields.h"
#include "evals/base/jsonl.h"
#include "evals/base/mapped_file.h"
#include "evals/run/prepare_steps.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/base/sha256.h"
#include "scorers/choice_extract.h"
#include "scorers/mmlupro/mmlupro_extract.h"

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

Status ParseRow(const nlohmann::json& j, const std::string& where, Row* r) {
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(j, where, ""));
  JsonFields f(j, where, "");
  std::vector<std::string> options;
  EVALRUN_RETURN_IF_ERROR(f.Int("question_id", &r->id, true));
  EVALRUN_RETURN_IF_ERROR(f.String("question", &r->question, true));
  EVALRUN_RETURN_IF_ERROR(f.StringList("options", &options, true));
  EVALRUN_RETURN_IF_ERROR(f.String("answer", &r->answer, true));
  EVALRUN_RETURN_IF_ERROR(f.String("category", &r->category, true));
  EVALRUN_RETURN_IF_ERROR(f.String("cot_content", &r->cot_content));
  for (auto& o : options)
    if (o != "N/A") r->options.push_back(std::move(o));
  if (r->options.empty() || r->options.size() > 10)
    return f.Error("options", "expected 1..10 options, got " + std::to_string(r->options.size()));
  if (r->answer.size() != 1 || r->answer[0] < 'A' || r->answer[0] > 'J')
    return f.Error("answer", "expected a letter A..J, got \"" + r->answer + "\"");
  return Status::Ok();
}

// Every row, parsed whole (the validation split: 70 rows).
Status LoadRows(const std::string& path, std::vector<Row>* rows) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseJsonl(text, path, [&](int line, const nlohmann::json& j) {
    Row r;
    EVALRUN_RETURN_IF_ERROR(ParseRow(j, path + ":" + std::to_string(line), &r));
    rows->push_back(std::move(r));
    return Status::Ok();
  });
}

// The test split is read in two passes: every row scanned for its id and
// category (what the selection needs), then only the chosen rows parsed
// whole (json_top_fields.h). Parsing all 12,032 rows to ask 600 was most of
// evalrun's start-up CPU (measured: 0.2 s of 0.26 s).
class RowIndex {
 public:
  Status Open(const std::string& path) {
    path_ = path;
    EVALRUN_RETURN_IF_ERROR(file_.Open(path));
    return ForEachJsonlLine(file_.text(), [this](int number, std::string_view line) { return AddLine(line, number); });
  }

  const std::vector<std::string>& ids() const { return ids_; }
  const std::vector<std::string>& categories() const { return categories_; }

  // Row i parsed whole, its errors naming path:line.
  Status Parse(size_t i, Row* r) const {
    const std::string where = path_ + ":" + std::to_string(lines_[i].number);
    nlohmann::json j;
    EVALRUN_RETURN_IF_ERROR(ParseJsonLine(lines_[i].text, where, &j));
    EVALRUN_RETURN_IF_ERROR(ParseRow(j, where, r));
    if (std::to_string(r->id) != ids_[i] || r->category != categories_[i])
      return Status::InvalidInput(where + ": question_id or category read differently by the scan and the parser");
    return Status::Ok();
  }

 private:
  struct Line {
    std::string_view text;
    int number = 0;
  };

  // The two fields decoded as the whole-row parse decodes them: a plain
  // integer and a string without escapes directly (every row of the real
  // file), anything else through JsonFields.
  Status AddLine(std::string_view line, int number) {
    static const std::vector<std::string_view> kKeys = {"question_id", "category"};
    std::string error;
    if (!ScanTopLevelFields(line, kKeys, &raw_, &error))
      return Status::InvalidInput(path_ + ":" + std::to_string(number) + ": " + error);
    int64_t id = 0;
    const std::string_view id_text = raw_[0], cat = raw_[1];
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    const bool plain = !id_text.empty() && ec == std::errc() && end == id_text.data() + id_text.size() &&
                       cat.size() >= 2 && cat.front() == '"' && cat.back() == '"' &&
                       cat.find('\\') == std::string_view::npos;
    std::string category;
    if (plain) {
      category.assign(cat.substr(1, cat.size() - 2));
    } else {
      EVALRUN_RETURN_IF_ERROR(DecodeFields(raw_, path_ + ":" + std::to_string(number), &id, &category));
    }
    ids_.push_back(std::to_string(id));
    categories_.push_back(std::move(category));
    lines_.push_back({line, number});
    return Status::Ok();
  }

  static Status DecodeFields(const std::vector<std::string_view>& raw, const std::string& where, int64_t* id,
                             std::string* category) {
    nlohmann::json j = nlohmann::json::object();
    const char* names[] = {"question_id", "category"};
    for (size_t k = 0; k < 2; ++k) {
      if (raw[k].empty()) continue;
      nlohmann::json v = nlohmann::json::parse(raw[k], nullptr, false);
      if (v.is_discarded()) return Status::InvalidInput(where + ": " + names[k] + ": not JSON");
      j[names[k]] = std::move(v);
    }
    JsonFields f(j, where, "");
    EVALRUN_RETURN_IF_ERROR(f.Int("question_id", id, true));
    return f.String("category", category, true);
  }

  std::string path_;
  MappedFile file_;
  std::vector<std::string_view> raw_;  // AddLine's scratch
  std::vector<std::string> ids_, categories_;
  std::vector<Line> lines_;
};

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
    RowIndex rows;
    EVALRUN_RETURN_IF_ERROR(rows.Open(path));

    std::map<std::string, std::vector<const Row*>> shots;
    std::vector<Row> val;
    if (prompt_ == "cot-5shot") {
      std::string vpath;
      EVALRUN_RETURN_IF_ERROR(VerifyDataFile(ctx.data_dir, "mmlu-pro/validation.jsonl", &vpath));
      EVALRUN_RETURN_IF_ERROR(LoadRows(vpath, &val));
      for (const Row& v : val)
        if (shots[v.category].size() < 5) shots[v.category].push_back(&v);
    }

    const std::vector<std::string>& ids = rows.ids();
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const std::vector<size_t> chosen = SelectQuestions(ctx, ids, rows.categories(), seed, cfg.Int("questions", -1));

    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", prompt_ == "letter" ? 1024 : 4000));
    for (size_t i : chosen) {
      Row r;
      EVALRUN_RETURN_IF_ERROR(rows.Parse(i, &r));
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
    out->info["dataset"] = {{"file", "mmlu-pro/" + split + ".jsonl"}, {"sha256", sha}, {"rows", ids.size()}};
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

Benchmark MmluProBenchmark() {
  Benchmark b;
  b.name = "mmlupro";
  b.title = "MMLU-Pro";
  b.about = "ten-option multiple choice over 14 subjects (TIGER-Lab), a seeded subset stratified by category";
  b.parts = {MmluProDefinition()};
  b.datasets = {"mmlu-pro"};
  b.scorer = "the answer's letter, `first-letter` or `official` (TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py "
             "extract_answer); accuracy";
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(MmluProBenchmark());

namespace {

}  // namespace

}  // namespace evalrun
