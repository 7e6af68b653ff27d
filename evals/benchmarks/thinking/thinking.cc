// The thinking test: the questions of other multiple-choice parts
// (GPQA Diamond and a seeded MMLU-Pro subset by default) asked in two arms,
//   on   thinking on with a reasoning budget (reasoning_budget_tokens; the
//        request's max_tokens is the budget + the benchmark's answer limit),
//   off  the same questions with the switch off,
// after a check, before any item, that the switch reaches the chat template
// (evals/benchmarks/thinking/thinking_switch.h). Each item carries its arm's request
// settings (Item::request); its id is "<arm>/<benchmark>/<question id>", so
// one samples.jsonl holds both arms and resume works as for every part.
// Answers are scored by the benchmark's own Score on the answer only (the
// reasoning kept apart); reasoning left in the answer (a stray or unclosed
// think tag) is wrong and counted apart. Aggregate: accuracy on vs off per
// benchmark with McNemar on the paired questions, reasoning tokens, cut-offs
// by where they fell, budget ends, the off arm's share without reasoning
// (evals/benchmarks/thinking/thinking_measures.h), the switch verdict.
#include <array>
#include <map>
#include <mutex>

#include "evals/benchmarks/thinking/thinking_measures.h"
#include "evals/benchmarks/thinking/thinking_switch.h"
#include "evals/benchmarks/thinking/thinking_view.h"
#include "evals/benchmarks/table.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/server/server_tokenizer.h"

namespace evalrun {
namespace {

constexpr const char* kArms[] = {"on", "off"};

// The benchmarks asked by default, with their question counts.
const std::map<std::string, int64_t>& DefaultBenchmarks() {
  static const std::map<std::string, int64_t> kDefault = {{"gpqa", 198}, {"mmlupro", 140}};
  return kDefault;
}

std::string CheckBenchmark(const std::string& name) {
  const PartDefinition* def = FindPartDefinition(name);
  if (!def || !def->question_set() || def->name == "thinking")
    return "not a question part";
  if (def->verdict != VerdictKind::kChoice) return "not a multiple-choice part (its answers are not letters)";
  return "";
}

class ThinkingPart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    budget_ = static_cast<int>(cfg.Int("budget", 4096));
    std::map<std::string, int64_t> benchmarks = cfg.Counts("benchmarks");
    if (benchmarks.empty()) benchmarks = DefaultBenchmarks();
    RequestSettings on = ctx.request ? *ctx.request : ctx.card->request, off = on;
    on.thinking = true;
    on.reasoning_budget = budget_;
    off.thinking = false;
    off.reasoning_budget.reset();
    std::vector<std::vector<Item>> per_arm(2);
    for (const auto& [name, count] : benchmarks)
      EVALRUN_RETURN_IF_ERROR(PrepareBenchmark(ctx, name, count, {&on, &off}, &per_arm, out));
    for (auto& arm : per_arm)
      for (Item& it : arm) out->items.push_back(std::move(it));
    out->info["budget"] = budget_;
    if (ctx.server) CheckSwitch(ctx, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const Inner& in = inner_[item.scorer_index];
    Verdict v = subs_[in.bench]->Score(in.item, a);
    auto* c = std::get_if<ChoiceVerdict>(&v);
    if (c && ReasoningLeftInContent(a.content, a.unclosed_think, a.finish_reason)) {
      c->correct = false;
      c->extracted.reset();
      c->no_answer = !c->cut_off;
    }
    return v;
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart& prepared) const override;

 private:
  struct Inner {
    int bench = 0;
    Item item;  // as the benchmark prepared it
  };

  Status PrepareBenchmark(const PartContext& ctx, const std::string& name, int64_t count,
                          std::array<const RequestSettings*, 2> arms, std::vector<std::vector<Item>>* per_arm,
                          PreparedPart* out);
  void CheckSwitch(const PartContext& ctx, PreparedPart* out);
  int CountAnswer(const std::string& text) const;
  nlohmann::json BenchmarkJson(const std::string& name, const std::vector<SampleRecord>& records,
                               const std::vector<ThinkingFacts>& facts, std::vector<std::string>* lines) const;

  int budget_ = 4096;
  std::vector<std::unique_ptr<Part>> subs_;
  std::vector<std::unique_ptr<PartSettings>> sub_settings_;
  std::vector<std::string> bench_names_;
  std::vector<Inner> inner_;  // by Item::scorer_index: one per question, both arms
  // The server's tokenizer for the answers' own token counts (null: an
  // estimate, 4 bytes a token); a cache, under mu_.
  mutable std::mutex mu_;
  std::unique_ptr<Tokenizer> counter_;
  mutable std::map<std::string, int> counted_;
};

Status ThinkingPart::PrepareBenchmark(const PartContext& ctx, const std::string& name, int64_t count,
                                      std::array<const RequestSettings*, 2> arms,
                                      std::vector<std::vector<Item>>* per_arm, PreparedPart* out) {
  const PartDefinition* def = FindPartDefinition(name);
  const std::string path = "parts.thinking.benchmarks." + name;
  nlohmann::json obj = {{"questions", count}};
  if (ctx.settings->Has("seed")) obj["seed"] = ctx.settings->Int("seed");
  if (ctx.settings->Has("answer_tokens")) obj["max_tokens"] = ctx.settings->Int("answer_tokens");
  auto settings = std::make_unique<PartSettings>();
  EVALRUN_RETURN_IF_ERROR(ParsePartSettings(def->keys, obj, ctx.card ? ctx.card->path : "card", path, settings.get()));
  PartContext sub_ctx = ctx;
  sub_ctx.settings = settings.get();
  PreparedPart sub;
  std::unique_ptr<Part> part = def->make_part();
  EVALRUN_RETURN_IF_ERROR(part->Prepare(sub_ctx, &sub).Prefixed(path));
  const int bench = static_cast<int>(subs_.size());
  for (Item& it : sub.items) {
    if (it.spooled.valid()) return Status::InvalidInput(path + ": its prompts are spooled; not supported here");
    for (size_t a = 0; a < 2; ++a) {
      Item x = it;
      x.id = std::string(kArms[a]) + "/" + name + "/" + it.id;
      x.fields.push_back({"benchmark", name});
      x.fields.push_back({"arm", std::string(kArms[a])});
      x.fields.push_back({"question", it.id});
      x.request = *arms[a];
      x.scorer_index = static_cast<int>(inner_.size());
      (*per_arm)[a].push_back(std::move(x));
    }
    inner_.push_back({bench, std::move(it)});
  }
  out->info["benchmarks"][name] = sub.info;
  for (const auto& n : sub.notes) out->notes.push_back(name + ": " + n);
  subs_.push_back(std::move(part));
  sub_settings_.push_back(std::move(settings));
  bench_names_.push_back(name);
  return Status::Ok();
}

void ThinkingPart::CheckSwitch(const PartContext& ctx, PreparedPart* out) {
  std::unique_ptr<HttpTransport> t = ctx.server();
  SwitchProbe probe;
  ProbeThinkingSwitch(t.get(), ctx.card->server, &probe);
  out->info["switch"] = SwitchJson(probe);
  std::string line = std::string("thinking switch: ") + SwitchVerdictText(JudgeSwitch(probe));
  if (probe.chat_tokens_off >= 0 && probe.chat_tokens_on >= 0)
    line += " (prompt tokens: " + std::to_string(probe.chat_tokens_off) + " off, " +
            std::to_string(probe.chat_tokens_on) + " on)";
  if (!probe.chat_error.empty()) line += " (" + probe.chat_error + ")";
  out->notes.insert(out->notes.begin(), line);
  std::lock_guard<std::mutex> l(mu_);
  counter_ = MakeServerTokenizer(ctx.server(), ctx.card->server, false);
}

int ThinkingPart::CountAnswer(const std::string& text) const {
  std::lock_guard<std::mutex> l(mu_);
  if (!counter_) return static_cast<int>((text.size() + 3) / 4);
  auto it = counted_.find(text);
  if (it != counted_.end()) return it->second;
  int n = -1;
  if (!counter_->Count(text, &n).ok()) n = -1;
  counted_[text] = n;
  return n;
}

nlohmann::json ThinkingPart::BenchmarkJson(const std::string& name, const std::vector<SampleRecord>& records,
                                           const std::vector<ThinkingFacts>& facts,
                                           std::vector<std::string>* lines) const {
  std::vector<const SampleRecord*> recs[2];
  std::vector<ThinkingFacts> fs[2];
  for (size_t i = 0; i < records.size(); ++i) {
    if (name != "" && records[i].Text("benchmark") != name) continue;
    const int a = records[i].Text("arm") == "on" ? 0 : 1;
    recs[a].push_back(&records[i]);
    fs[a].push_back(facts[i]);
  }
  nlohmann::json j = {{"on", ArmJson(recs[0], fs[0], budget_)},
                      {"off", ArmJson(recs[1], fs[1], std::nullopt)},
                      {"paired", PairedJson(recs[0], recs[1])}};
  j["on"]["by_reasoning_tokens"] = ReasoningBucketsJson(recs[0], fs[0], budget_);
  j["off"]["by_reasoning_tokens"] = ReasoningBucketsJson(recs[1], fs[1], budget_);
  if (lines && !recs[0].empty()) {
    const auto& on = j["on"];
    char buf[400];
    std::snprintf(buf, sizeof buf, "%s: thinking on %.1f%% vs off %.1f%% (%d pairs, McNemar p = %s)", name.c_str(),
                  100 * on["accuracy"].get<double>(), 100 * j["off"]["accuracy"].get<double>(),
                  j["paired"]["n"].get<int>(), j["paired"]["p_text"].get<std::string>().c_str());
    std::string line = buf;
    if (!on["reasoning_tokens"].is_null())
      line += "; reasoning tokens median " + on["reasoning_tokens"]["median"].dump() + ", p90 " +
              on["reasoning_tokens"]["p90"].dump() + ", max " + on["reasoning_tokens"]["max"].dump();
    lines->push_back(line);
  }
  return j;
}

// The off arm's switch, in plain words.
std::string OffSwitchLine(const nlohmann::json& off, std::string* state) {
  const int n = off["n"], reasoned = off["reasoned"];
  if (n == 0) {
    *state = "not asked";
    return "thinking off: not asked yet";
  }
  *state = reasoned == 0 ? "obeyed" : reasoned == n ? "ignored" : "partly ignored";
  if (reasoned == 0) return "thinking off: no reply reasoned";
  return "thinking off was " + *state + ": " + std::to_string(reasoned) + " of " + std::to_string(n) +
         " replies reasoned (scored on the answer text only)";
}

nlohmann::json ThinkingPart::Aggregate(const std::vector<SampleRecord>& records, int failed,
                                       const PreparedPart& prepared) const {
  std::vector<ThinkingFacts> facts;
  const AnswerCounter count = [this](const std::string& t) { return CountAnswer(t); };
  for (const SampleRecord& r : records) facts.push_back(ReadThinkingFacts(r, count));
  std::vector<SampleRecord> on_records;
  for (const SampleRecord& r : records)
    if (r.Text("arm") == "on") on_records.push_back(r);
  // The headline figures are the on arm's.
  nlohmann::json result = AggregateChoice(on_records, failed, "benchmark");
  std::vector<std::string> lines;
  if (prepared.info.contains("switch")) lines.push_back(std::string("thinking switch: ") +
                                                        prepared.info["switch"]["text"].get<std::string>());
  result["switch"] = prepared.info.contains("switch") ? prepared.info["switch"] : nlohmann::json();
  result["budget"] = budget_;
  {
    std::lock_guard<std::mutex> l(mu_);
    result["reasoning_tokens_counted"] = counter_ ? "completion_tokens - the answer's tokens (server /tokenize)"
                                                  : "completion_tokens - the answer's tokens (estimate: 4 bytes a token)";
  }
  for (const auto& name : bench_names_) result["benchmarks"][name] = BenchmarkJson(name, records, facts, &lines);
  const nlohmann::json all = BenchmarkJson("", records, facts, nullptr);
  result["arms"] = all;
  std::string state;
  lines.push_back(OffSwitchLine(all["off"], &state));
  result["off_switch"] = state;
  result["headline"] = lines;
  return result;
}

PartDefinition ThinkingDefinition() {
  PartDefinition d;
  d.name = "thinking";
  d.display_name = "Thinking";
  d.run_order = 35;
  d.verdict = VerdictKind::kChoice;
  d.needs_tokenizer = true;  // prepared once the server answers: the switch check, the answers' token counts
  d.keys = {
      CardKey::NameCounts("benchmarks", "benchmark", CheckBenchmark,
                          "the multiple-choice parts whose questions are asked, with how many of each "
                          "(default {\"gpqa\": 198, \"mmlupro\": 140}: all of GPQA Diamond, a seeded "
                          "MMLU-Pro subset stratified by category)"),
      CardKey::Int("budget", 1, 10'000'000, "the on arm's reasoning budget in tokens (reasoning_budget_tokens); "
                   "its max_tokens is the budget + the answer limit (default 4,096)")
          .Default(int64_t{4096}),
      CardKey::Int("answer_tokens", 1, CardKey::kNoMax,
                   "the answer limit after the reasoning, for both arms (default: each benchmark's max_tokens default)"),
      CardKey::Int("seed", 0, 4294967295LL, "selection seed of each benchmark (default sampling.seed)"),
  };
  d.groups = {{"arm @ benchmark", {"arm", "benchmark"}}, {"category", {"category"}}};
  d.label = {"arm", "benchmark", "category"};
  d.make_part = [] { return std::make_unique<ThinkingPart>(); };
  return d;
}

Benchmark ThinkingBenchmark() {
  Benchmark b;
  b.name = "thinking";
  b.title = "Thinking test";
  b.about = "other multiple-choice parts' questions asked with thinking on (a reasoning budget) and off, paired";
  b.parts = {ThinkingDefinition()};
  b.datasets = {"gpqa", "mmlu-pro"};  // the questions it asks by default
  b.uses = {"gpqa", "mmlupro"};        // their parts, asked by name
  b.scorer = "each asked benchmark's own scorer on the answer alone; reasoning left in the answer is wrong and "
             "counted apart; on vs off with McNemar";
  b.page_sections = {ThinkingPageSection()};
  b.compare_sections = {ThinkingCompareSection()};
  return b;
}

}  // namespace

EVALRUN_BENCHMARK(ThinkingBenchmark());

}  // namespace evalrun
