#include "evals/publish/compare_units.h"

#include <string>
#include <vector>

#include "evals/publish/html_text.h"
#include "evals/publish/table_text.h"

namespace evalrun::compare_internal {
namespace {

const std::vector<GroupDimension>& DefaultGroups() {
  static const std::vector<GroupDimension> kGroups = {{"category", {"category"}}};
  return kGroups;
}

// Whether every record has every field of `fields` ("category" always).
bool AllHave(const std::vector<SampleRecord>& records, const std::vector<std::string>& fields) {
  if (records.empty()) return false;
  for (const auto& r : records)
    for (const auto& f : fields)
      if (f != "category" && !r.Field(f)) return false;
  return true;
}

std::string Joined(const SampleRecord& r, const std::vector<std::string>& fields) {
  std::string s;
  for (const auto& f : fields) s += (s.empty() ? "" : " @ ") + r.Text(f);
  return s;
}

constexpr size_t kAnswerShownBytes = 80;

// Unit::answer of a choice, code or fraction record.
std::string AnswerText(const SampleRecord& r) {
  if (const auto* c = std::get_if<ChoiceVerdict>(&r.verdict)) {
    std::string s = c->extracted ? std::string(1, *c->extracted) : "(no answer)";
    return c->cut_off ? s + " (cut off)" : s;
  }
  if (const auto* c = std::get_if<CodeVerdict>(&r.verdict)) {  // passed, or the failure and its message
    std::string s = c->passed ? "passed" : c->failure + (c->message.empty() ? "" : ": " + c->message);
    return Utf8Shortened(c->cut_off && c->passed ? s + " (cut off)" : s, kAnswerShownBytes);
  }
  std::string s = Utf8Shortened(r.response, kAnswerShownBytes);
  for (char& ch : s)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  return s;
}

// Unit::answer of a prompt: the instructions it did not follow.
std::string NotFollowed(const InstructionVerdict& v, const InstructionLevel& level) {
  std::vector<std::string> missed;
  for (size_t j = 0; j < v.instruction_ids.size() && j < level.per_instruction.size(); ++j)
    if (!level.per_instruction[j]) missed.push_back(v.instruction_ids[j]);
  if (missed.empty()) return v.cut_off ? "all followed (cut off)" : "all followed";
  return "not followed: " + Join(missed, ", ") + (v.cut_off ? " (cut off)" : "");
}

// Every record names its endpoint, and there are at least two.
bool BySeveralEndpoints(const std::vector<SampleRecord>& records) {
  if (records.empty()) return false;
  for (const auto& r : records)
    if (r.endpoint.empty()) return false;
  for (const auto& r : records)
    if (r.endpoint != records[0].endpoint) return true;
  return false;
}

// Choice, code and fraction: one unit per record, scored by its headline.
PartUnits ScoredUnits(const FolderPart& part, const std::vector<SampleRecord>& records, Metric m) {
  const PartDefinition* def = part.definition;
  std::vector<GroupDimension> dims;
  for (const auto& g : def && !def->groups.empty() ? def->groups : DefaultGroups())
    if (AllHave(records, g.fields)) dims.push_back(g);
  if (dims.empty()) dims = DefaultGroups();
  std::vector<std::string> label = def && !def->label.empty() ? def->label : std::vector<std::string>{"category"};
  if (!AllHave(records, label)) label = {"category"};
  for (const auto& d : dims) m.dims.push_back(d.title);
  // Several server endpoints (server.endpoints, e.g. two builds on purpose):
  // also split by the one that answered, when every record names one.
  const bool by_endpoint = BySeveralEndpoints(records);
  if (by_endpoint) m.dims.push_back("endpoint");
  for (const auto& r : records) {
    Unit u;
    u.id = u.key = r.id;
    u.label = Joined(r, label);
    for (const auto& d : dims) u.groups.push_back(Joined(r, d.fields));
    if (by_endpoint) u.groups.push_back(r.endpoint);
    u.score = HeadlineScore(r.verdict);
    u.prompt_sha256 = r.prompt_sha256;
    u.answer = AnswerText(r);
    m.units.push_back(std::move(u));
  }
  PartUnits out;
  out.metrics.push_back(std::move(m));
  for (const auto& f : label) out.label_title += (out.label_title.empty() ? "" : " @ ") + f;
  return out;
}

// Prompt-level and instruction-level units of one mode (strict or loose).
void LevelUnits(const SampleRecord& r, const InstructionVerdict& v, const InstructionLevel& level,
                Metric* prompt, Metric* inst) {
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

}  // namespace

PartUnits ExtractUnits(const FolderPart& part, const std::vector<SampleRecord>& records) {
  switch (*part.kind) {
    case VerdictKind::kInstruction:
      return InstructionUnits(records);
    case VerdictKind::kChoice:
      return ScoredUnits(part, records, Metric{"accuracy", "accuracy", {}, {}});
    case VerdictKind::kCode:  // pass/fail units: McNemar on the flips
      return ScoredUnits(part, records, Metric{"pass_at_1", "pass@1", {}, {}});
    case VerdictKind::kFraction:
    case VerdictKind::kLogprobs:  // compared by compare_probe.h, never by units
      break;
  }
  return ScoredUnits(part, records, Metric{"score", "mean score", {}, {}});
}

}  // namespace evalrun::compare_internal
