// The "instruction" verdict kind, which IFEval brings (so it lives in its
// folder): one verdict per instruction of
// the prompt, strict and loose (InstructionVerdict, evals/run/verdict.h).
// Its codec (instruction_id_list, strict, loose, cut_off, correct), headline
// (strict, all followed), compare units (prompt- and instruction-level,
// strict and, when every record has it, loose) and report section (the four
// accuracies, instruction-level strict accuracy per instruction).
#include <cmath>
#include <map>

#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"
#include "evals/run/verdict_kind.h"

namespace evalrun {
namespace {

using nlohmann::json;
using compare_internal::Metric;
using compare_internal::PartUnits;
using compare_internal::Unit;

json LevelJson(const InstructionLevel& l) {
  return {{"follow_all_instructions", l.all}, {"follow_instruction_list", l.per_instruction}};
}

// strict / loose: {follow_all_instructions, follow_instruction_list}, one
// flag per instruction id.
Status DecodeLevel(const SampleLineReader& in, const std::string& mode, size_t ids, InstructionLevel* out) {
  const json* v = in.Find(mode);
  if (!v || !v->is_object()) return in.Expected(mode, "an object", v);
  auto all = v->find("follow_all_instructions");
  if (all == v->end() || !all->is_boolean())
    return in.Expected(mode + ".follow_all_instructions", "true or false", all == v->end() ? nullptr : &*all);
  out->all = all->get<bool>();
  auto list = v->find("follow_instruction_list");
  if (list == v->end() || !list->is_array() || list->size() != ids)
    return in.Error(mode + ".follow_instruction_list", "expected " + std::to_string(ids) +
                                                           " booleans (one per instruction_id_list entry)");
  out->per_instruction.clear();
  for (size_t j = 0; j < list->size(); ++j) {
    const json& f = (*list)[j];
    if (!f.is_boolean())
      return in.Expected(mode + ".follow_instruction_list[" + std::to_string(j) + "]", "true or false", &f);
    out->per_instruction.push_back(f.get<bool>());
  }
  return Status::Ok();
}

class InstructionKind : public VerdictKindDefinition {
 public:
  VerdictKind Kind() const override { return VerdictKind::kInstruction; }

  const std::vector<std::string>& Keys() const override {
    static const std::vector<std::string> kKeys = {"instruction_id_list", "strict", "loose", "cut_off", "correct"};
    return kKeys;
  }

  void Encode(const Verdict& v, json* line) const override {
    const InstructionVerdict& i = std::get<InstructionVerdict>(v);
    (*line)["instruction_id_list"] = i.instruction_ids;
    (*line)["strict"] = LevelJson(i.strict);
    (*line)["loose"] = LevelJson(i.loose ? *i.loose : i.strict);
    (*line)["cut_off"] = i.cut_off;
    (*line)["correct"] = i.strict.all;
  }

  Status Decode(const SampleLineReader& in, Verdict* out) const override {
    InstructionVerdict i;
    EVALRUN_RETURN_IF_ERROR(in.Strings("instruction_id_list", &i.instruction_ids, true));
    EVALRUN_RETURN_IF_ERROR(DecodeLevel(in, "strict", i.instruction_ids.size(), &i.strict));
    if (in.Find("loose")) {
      InstructionLevel loose;
      EVALRUN_RETURN_IF_ERROR(DecodeLevel(in, "loose", i.instruction_ids.size(), &loose));
      i.loose = std::move(loose);
    }
    EVALRUN_RETURN_IF_ERROR(in.Bool("cut_off", &i.cut_off));
    *out = std::move(i);
    return Status::Ok();
  }

  double Headline(const Verdict& v) const override { return std::get<InstructionVerdict>(v).strict.all ? 1.0 : 0.0; }
  bool CutOff(const Verdict& v) const override { return std::get<InstructionVerdict>(v).cut_off; }
  void MarkTooLong(Verdict* v) const override { std::get<InstructionVerdict>(*v).cut_off = false; }
};

// Unit::answer of a prompt: the instructions it did not follow.
std::string NotFollowed(const InstructionVerdict& v, const InstructionLevel& level) {
  std::vector<std::string> missed;
  for (size_t j = 0; j < v.instruction_ids.size() && j < level.per_instruction.size(); ++j)
    if (!level.per_instruction[j]) missed.push_back(v.instruction_ids[j]);
  if (missed.empty()) return v.cut_off ? "all followed (cut off)" : "all followed";
  return "not followed: " + Join(missed, ", ") + (v.cut_off ? " (cut off)" : "");
}

// Prompt-level and instruction-level units of one mode (strict or loose).
void LevelUnits(const SampleRecord& r, const InstructionVerdict& v, const InstructionLevel& level, Metric* prompt,
                Metric* inst) {
  Unit u;
  u.id = u.key = r.id;
  u.label = Join(v.instruction_ids, ", ");
  u.score = level.all ? 1.0 : 0.0;
  u.prompt_sha256 = r.prompt_sha256;
  u.answer = NotFollowed(v, level);
  prompt->units.push_back(std::move(u));
  for (size_t j = 0; j < v.instruction_ids.size(); ++j) {
    Unit iu;
    iu.key = r.id + "#" + std::to_string(j) + "#" + v.instruction_ids[j];
    iu.id = r.id;
    iu.label = v.instruction_ids[j];
    if (!inst->dims.empty()) iu.groups = {v.instruction_ids[j]};
    iu.score = level.per_instruction[j] ? 1.0 : 0.0;
    inst->units.push_back(std::move(iu));
  }
}

PartUnits InstructionUnits(const std::vector<SampleRecord>& records) {
  // Strict always; loose metrics appear when every record has them.
  bool all_loose = !records.empty();
  for (const auto& r : records) all_loose = all_loose && std::get<InstructionVerdict>(r.verdict).loose.has_value();
  Metric ps{"prompt_strict", "prompt-level strict", {}, {}};
  Metric is{"inst_strict", "instruction-level strict", {"instruction"}, {}};
  Metric pl{"prompt_loose", "prompt-level loose", {}, {}};
  Metric il{"inst_loose", "instruction-level loose", {}, {}};
  for (const auto& r : records) {
    const InstructionVerdict& v = std::get<InstructionVerdict>(r.verdict);
    LevelUnits(r, v, v.strict, &ps, &is);
    if (all_loose) LevelUnits(r, v, *v.loose, &pl, &il);
  }
  PartUnits out;
  out.label_title = "instructions";
  out.metrics.push_back(std::move(ps));
  out.metrics.push_back(std::move(is));
  if (all_loose) {
    out.metrics.push_back(std::move(pl));
    out.metrics.push_back(std::move(il));
  }
  return out;
}

// Instruction-level strict accuracy per instruction id: from the records,
// else from results.json's `instructions`.
std::map<std::string, std::pair<int, int>> PerInstruction(const json& p, const std::vector<SampleRecord>& records) {
  std::map<std::string, std::pair<int, int>> per;  // n, followed
  for (const auto& s : records) {
    const InstructionVerdict& v = std::get<InstructionVerdict>(s.verdict);
    for (size_t i = 0; i < v.instruction_ids.size(); ++i) {
      auto& c = per[v.instruction_ids[i]];
      ++c.first;
      c.second += v.strict.per_instruction[i];
    }
  }
  const json& listed = JsonAt(p, {"instructions"});
  if (per.empty() && listed.is_object()) {
    for (auto it = listed.begin(); it != listed.end(); ++it) {
      std::optional<double> in = ResultNumber(*it, {"n"}), strict = ResultNumber(*it, {"strict"});
      if (in && strict) per[it.key()] = {static_cast<int>(*in), static_cast<int>(std::lround(*strict * *in))};
    }
  }
  return per;
}

std::string Num(const json& v) { return v.is_number() ? FormatDouble("%.2f", v.get<double>()) : "—"; }

// The four accuracies (percent) under the results table: prompt and
// instruction level, strict and loose.
std::string AccuraciesMarkdown(const json& acc) {
  return "### " + MarkdownCell(JsonText(acc["title"])) + "\n\n" +
         MarkdownTable({"level", "strict (%)", "loose (%)"}, "lrr",
                       {{"prompt", Num(acc["prompt_strict"]), Num(acc["prompt_loose"])},
                        {"instruction", Num(acc["inst_strict"]), Num(acc["inst_loose"])}}) +
         "\n";
}

std::string AccuraciesHtml(const json& acc) {
  auto td = [](const json& v) { return "<td class=\"num\">" + Num(v) + "</td>"; };
  return "<h3>" + HtmlEscape(JsonText(acc["title"])) +
         " accuracies</h3><div class=\"wide\"><table class=\"compact\"><thead><tr><th>level</th><th class=\"num\">strict %</th>"
         "<th class=\"num\">loose %</th></tr></thead><tbody><tr><td>prompt</td>" +
         td(acc["prompt_strict"]) + td(acc["prompt_loose"]) + "</tr><tr><td>instruction</td>" +
         td(acc["inst_strict"]) + td(acc["inst_loose"]) + "</tr></tbody></table></div>";
}

class InstructionView : public KindView {
 public:
  VerdictKind Kind() const override { return VerdictKind::kInstruction; }
  // The name evalrun.compare/1 has had for these parts from the start.
  std::string CompareKindName() const override { return "ifeval"; }

  PartUnits Units(const FolderPart&, const std::vector<SampleRecord>& records) const override {
    return InstructionUnits(records);
  }

  // The four accuracies (results.json, fractions 0..1) and instruction-level
  // strict accuracy per instruction id.
  void Report(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
              ReportSection* out) const override {
    std::optional<double> n = ResultNumber(p, {"n"}), ps = ResultNumber(p, {"prompt_strict"});
    out->metric = "prompt-level strict";
    out->score = Percent(ps);
    if (ps && n && *n > 0) out->stderr_pct = 100 * std::sqrt(*ps * (1 - *ps) / *n);
    json acc = {{"title", part.display_name}};
    for (const char* k : {"prompt_strict", "inst_strict", "prompt_loose", "inst_loose"})
      acc[k] = OptJson(Percent(ResultNumber(p, {k})));
    out->under_table_markdown = AccuraciesMarkdown(acc);
    out->under_table_html = AccuraciesHtml(acc);
    json rows = json::array();
    for (const auto& [name, c] : PerInstruction(p, records))
      rows.push_back({{"name", name}, {"n", c.first}, {"correct", c.second},
                      {"score", c.first ? 100.0 * c.second / c.first : 0.0}});
    if (!rows.empty())
      out->categories.push_back({{"part", part.name},
                                 {"title", part.display_name + ": instruction-level strict accuracy by instruction"},
                                 {"dimension", "instruction"},
                                 {"rows", rows}});
  }

  void Browse(const FolderPart&, const SampleRecord& s, int max_chars, json* sample) const override {
    const auto& v = std::get<InstructionVerdict>(s.verdict);
    json& o = *sample;
    json extra = json::array();
    o["category"] = Join(v.instruction_ids, ", ");
    for (size_t i = 0; i < v.instruction_ids.size(); ++i)
      extra.push_back({v.instruction_ids[i], v.strict.per_instruction[i] ? "followed (strict)" : "not followed (strict)"});
    if (v.loose) extra.push_back({"loose: all followed", v.loose->all ? "yes" : "no"});
    bool cut_p = false;
    o["prompt"] = Utf8Prefix(s.Text("prompt"), static_cast<size_t>(max_chars), &cut_p);
    o["gold"] = "";
    o["extracted"] = "";
    o["extra"] = extra;
  }
};

EVALRUN_REGISTER_VERDICT_KIND(InstructionKind);
EVALRUN_REGISTER_KIND_VIEW(InstructionView);

}  // namespace
}  // namespace evalrun
