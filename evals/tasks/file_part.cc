#include "evals/tasks/file_part.h"

#include <algorithm>
#include <map>

#include "evals/base/sha256.h"
#include "evals/kinds/match.h"
#include "evals/run/prepare_steps.h"
#include "evals/run/results.h"
#include "evals/run/verdict_kind.h"
#include "evals/tasks/task_rows.h"

namespace evalrun {
namespace {

constexpr char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// What Score needs of one item.
struct Gold {
  std::string text;  // the letter, the number's text, the exact string
  int options = 0;   // choice
};

class FilePart : public Part {
 public:
  explicit FilePart(std::shared_ptr<const TaskSpec> spec) : spec_(std::move(spec)) {}

  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    prompt_name_ = cfg.String("prompt", spec_->default_prompt);
    extract_name_ = cfg.String("extract", spec_->default_extract);
    const TaskPrompt& prompt = spec_->prompts.at(prompt_name_);
    extract_ = &spec_->extracts.at(extract_name_);
    std::string path, sha;
    EVALRUN_RETURN_IF_ERROR(FindSource(ctx, spec_->data, &path, &sha));
    std::vector<TaskRow> rows;
    EVALRUN_RETURN_IF_ERROR(ReadTaskRows(path, ctx.input_override.empty() ? spec_->data.shown : path, &rows));
    std::vector<std::string> ids, cats;
    EVALRUN_RETURN_IF_ERROR(IdsAndCategories(rows, &ids, &cats));
    EVALRUN_RETURN_IF_ERROR(LoadShots(ctx));
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", prompt.max_tokens));
    for (size_t i : SelectQuestions(ctx, ids, cats, seed, cfg.Int("questions", -1))) {
      Item it;
      it.id = ids[i];
      it.category = cats[i];
      EVALRUN_RETURN_IF_ERROR(BuildItem(rows[i], prompt, max_tokens, &it));
      out->items.push_back(std::move(it));
    }
    out->info["dataset"] = {{"file", spec_->data.shown}, {"sha256", sha}, {"rows", ids.size()}};
    out->info["prompt"] = prompt_name_;
    out->info["extract"] = extract_name_;
    out->info["questions_requested"] = cfg.Int("questions", -1);
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const Gold& g = gold_[item.scorer_index];
    if (spec_->kind == AnswerKind::kChoice) {
      char letter = a.unclosed_think ? 0 : Letter(a.content, g.options);
      return ScoreChoice(letter, g.text, a.finish_reason);
    }
    std::optional<std::string> got;
    if (!a.unclosed_think) got = Extract(a.content);
    bool correct = false;
    if (got) {
      correct = spec_->kind == AnswerKind::kNumber
                    ? NumbersMatch(CleanNumber(*got), g.text, spec_->tolerance)
                    : Normalise(spec_->normalise, *got) == Normalise(spec_->normalise, g.text);
    }
    return ScoreMatch(std::move(got), correct, a.finish_reason);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed, const PreparedPart&) const override {
    if (spec_->kind == AnswerKind::kChoice) return AggregateChoice(records, failed);
    return VerdictKindOf(kMatchKind).Aggregate(records, failed);
  }

 private:
  // The data file: a manifest's (checked by FindDataFile), else the local
  // file (checked against its pin); `score --input` replaces either.
  static Status FindSource(const PartContext& ctx, const TaskSource& s, std::string* path, std::string* sha) {
    if (!s.dataset.empty() || !ctx.input_override.empty()) return FindDataFile(ctx, s.dataset, path, sha);
    *path = s.file;
    EVALRUN_RETURN_IF_ERROR(Sha256File(s.file, sha));
    if (!s.sha256.empty() && *sha != s.sha256)
      return Status::InvalidInput(s.file + ": sha256 mismatch: the task file pins " + s.sha256 + ", found " + *sha);
    return Status::Ok();
  }

  Status IdsAndCategories(const std::vector<TaskRow>& rows, std::vector<std::string>* ids,
                          std::vector<std::string>* cats) const {
    for (size_t i = 0; i < rows.size(); ++i) {
      std::string id = std::to_string(i), cat;
      const std::string where = spec_->path + ": " + spec_->data.shown + ":" + std::to_string(rows[i].line);
      if (!spec_->id_field.empty() && !FieldText(rows[i].fields, spec_->id_field, &id))
        return Status::InvalidInput(where + ": no field \"" + spec_->id_field + "\" (data.id)");
      if (!spec_->category_field.empty() && !FieldText(rows[i].fields, spec_->category_field, &cat))
        return Status::InvalidInput(where + ": no field \"" + spec_->category_field + "\" (data.category)");
      ids->push_back(std::move(id));
      cats->push_back(std::move(cat));
    }
    return Status::Ok();
  }

  Status LoadShots(const PartContext& ctx) {
    const TaskFewshot& f = spec_->fewshot;
    if (f.count == 0) return Status::Ok();
    std::string path, sha;
    PartContext plain = ctx;
    plain.input_override.clear();
    EVALRUN_RETURN_IF_ERROR(FindSource(plain, f.source, &path, &sha));
    return ReadTaskRows(path, f.source.shown, &shots_);
  }

  // The few-shot rows for a question of `category`.
  std::vector<const TaskRow*> ShotsFor(const std::string& category) const {
    std::vector<const TaskRow*> out;
    for (const TaskRow& r : shots_) {
      if (static_cast<int>(out.size()) == spec_->fewshot.count) break;
      std::string c;
      if (spec_->fewshot.same_category && (!FieldText(r.fields, spec_->category_field, &c) || c != category)) continue;
      out.push_back(&r);
    }
    return out;
  }

  Status BuildItem(const TaskRow& row, const TaskPrompt& prompt, int max_tokens, Item* it) {
    const std::string where = spec_->path + ": " + spec_->data.shown + ":" + std::to_string(row.line);
    Gold gold;
    std::vector<std::pair<std::string, std::string>> extra;
    EVALRUN_RETURN_IF_ERROR(ReadGold(row, where, &gold, &extra));
    std::string text;
    if (!prompt.system.empty()) {
      EVALRUN_RETURN_IF_ERROR(RenderTemplate(prompt.system, row.fields, extra, where + ": prompt.system", &text));
      it->prompt.messages.push_back({"system", text});
    }
    for (const TaskRow* s : ShotsFor(it->category)) {
      const std::string at = spec_->path + ": " + spec_->fewshot.source.shown + ":" + std::to_string(s->line);
      Gold unused;
      std::vector<std::pair<std::string, std::string>> shot_extra;
      EVALRUN_RETURN_IF_ERROR(ReadGold(*s, at, &unused, &shot_extra));
      EVALRUN_RETURN_IF_ERROR(RenderTemplate(prompt.user, s->fields, shot_extra, at + ": prompt.user", &text));
      it->prompt.messages.push_back({"user", text});
      EVALRUN_RETURN_IF_ERROR(RenderTemplate(spec_->fewshot.answer, s->fields, shot_extra, at + ": fewshot.answer", &text));
      it->prompt.messages.push_back({"assistant", text});
    }
    EVALRUN_RETURN_IF_ERROR(RenderTemplate(prompt.user, row.fields, extra, where + ": prompt.user", &text));
    it->prompt.messages.push_back({"user", text});
    it->prompt.params.max_tokens = max_tokens;
    it->prompt.params.stop = prompt.stop;
    it->prompt_sha256 = Sha256Hex(it->prompt.messages.size() == 1 ? text : PromptText(it->prompt));
    if (spec_->kind == AnswerKind::kChoice)
      it->fields = {{"gold", gold.text}, {"num_options", static_cast<int64_t>(gold.options)}};
    else
      it->fields = {{"gold", gold.text}};
    it->scorer_index = static_cast<int>(gold_.size());
    gold_.push_back(std::move(gold));
    return Status::Ok();
  }

  // Every message, role and text, for the prompt's sha256.
  static std::string PromptText(const Prompt& p) {
    std::string s;
    for (const Message& m : p.messages) s += m.role + "\n" + m.content + "\n\n";
    return s;
  }

  Status ReadGold(const TaskRow& row, const std::string& where, Gold* g,
                  std::vector<std::pair<std::string, std::string>>* extra) const {
    const nlohmann::json& r = row.fields;
    if (spec_->kind != AnswerKind::kChoice) {
      if (!FieldText(r, spec_->gold_field, &g->text))
        return Status::InvalidInput(where + ": no field \"" + spec_->gold_field + "\" (answer.gold)");
      if (spec_->kind == AnswerKind::kNumber) {
        auto n = ExtractNumber(g->text, spec_->gold_extract.empty() ? NumberFrom::kLast : NumberFrom::kMarker,
                               spec_->gold_extract);
        if (!n) return Status::InvalidInput(where + ": answer.gold: no number in \"" + g->text + "\"");
        g->text = *n;
      }
      return Status::Ok();
    }
    return ReadChoice(r, where, g, extra);
  }

  Status ReadChoice(const nlohmann::json& r, const std::string& where, Gold* g,
                    std::vector<std::pair<std::string, std::string>>* extra) const {
    auto it = r.find(spec_->options_field);
    if (it == r.end() || !it->is_array())
      return Status::InvalidInput(where + ": no list \"" + spec_->options_field + "\" (answer.options)");
    std::string options;
    for (const auto& o : *it) {
      if (!o.is_string()) return Status::InvalidInput(where + ": " + spec_->options_field + ": expected strings");
      const std::string opt = o.get<std::string>();
      if (std::find(spec_->drop_options.begin(), spec_->drop_options.end(), opt) != spec_->drop_options.end()) continue;
      if (g->options == 26) return Status::InvalidInput(where + ": more than 26 options");
      std::string line;
      EVALRUN_RETURN_IF_ERROR(RenderTemplate(spec_->option_format, nlohmann::json::object(),
                                             {{"letter", std::string(1, kLetters[g->options])}, {"option", opt}},
                                             where + ": answer.option_format", &line));
      options += line;
      ++g->options;
    }
    if (g->options == 0) return Status::InvalidInput(where + ": " + spec_->options_field + ": no options");
    auto gv = r.find(spec_->gold_field);
    if (gv != r.end() && gv->is_number_integer() && gv->get<int64_t>() >= 0 && gv->get<int64_t>() < g->options)
      g->text = std::string(1, kLetters[gv->get<int64_t>()]);
    else if (gv != r.end() && gv->is_string() && gv->get<std::string>().size() == 1 &&
             gv->get<std::string>()[0] >= 'A' && gv->get<std::string>()[0] < 'A' + g->options)
      g->text = gv->get<std::string>();
    else
      return Status::InvalidInput(where + ": answer.gold: \"" + spec_->gold_field +
                                  "\" is not an option's letter or 0-based index");
    *extra = {{"options", options}, {"last_letter", std::string(1, kLetters[g->options - 1])}};
    return Status::Ok();
  }

  char Letter(const std::string& content, int options) const {
    char letter = 0;
    if (!extract_->chain.empty()) {
      letter = (*FindLetterChain(extract_->chain))(content, options);
    } else if (auto got = RunRegexChain(extract_->regexes, content); got && !got->empty()) {
      letter = (*got)[0];
    }
    return letter >= 'A' && letter < 'A' + options ? letter : 0;
  }

  std::optional<std::string> Extract(const std::string& content) const {
    if (!extract_->regexes.empty()) return RunRegexChain(extract_->regexes, content);
    if (spec_->kind == AnswerKind::kNumber) return ExtractNumber(content, extract_->number_from, extract_->marker);
    size_t b = content.find_first_not_of(" \t\r\n"), e = content.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? std::string() : content.substr(b, e - b + 1);
  }

  static std::string CleanNumber(const std::string& s) {
    std::string out;
    for (char c : s)
      if (c != ',' && c != '$') out += c;
    while (!out.empty() && out.back() == '.') out.pop_back();
    return out;
  }

  std::shared_ptr<const TaskSpec> spec_;
  std::string prompt_name_, extract_name_;
  const TaskExtract* extract_ = nullptr;
  std::vector<TaskRow> shots_;
  std::vector<Gold> gold_;  // by Item::scorer_index
};

std::vector<std::string> Names(const auto& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

}  // namespace

PartDefinition FilePartDefinition(std::shared_ptr<const TaskSpec> spec) {
  PartDefinition d;
  d.name = spec->name;
  d.display_name = spec->title;
  d.run_order = spec->run_order;
  d.verdict = spec->kind == AnswerKind::kChoice ? VerdictKind::kChoice : kMatchKind;
  d.keys = {
      QuestionCountKey("questions", "all rows by default: a seeded sample stratified by category"),
      MaxTokensKey("the answer limit (default: the prompt's max_tokens); finish_reason `length` = cut off = wrong"),
      CardKey::Enum("prompt", Names(spec->prompts), "the task file's prompt profile").Default(spec->default_prompt),
      CardKey::Enum("extract", Names(spec->extracts), "the task file's extraction profile")
          .Default(spec->default_extract),
      SeedKey("selection seed (default sampling.seed)"),
  };
  d.make_part = [spec] { return std::make_unique<FilePart>(spec); };
  return d;
}

}  // namespace evalrun
