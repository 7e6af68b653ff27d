#include "evals/publish/compare_units.h"

#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/run_folder.h"
#include "evals/publish/table_text.h"
#include "evals/run/part_registry.h"

namespace evalrun::compare_internal {
namespace {

// Where a sample is, for messages: "runs/a/mmlupro/samples.jsonl: sample 12 (id \"q7\")".
std::string Where(const std::string& path, size_t index, const nlohmann::json& s) {
  return path + ": sample " + std::to_string(index + 1) + " (id \"" + SampleId(s) + "\")";
}

Status ChoiceUnits(const std::string& path, const std::vector<nlohmann::json>& samples, PartUnits* out) {
  Metric m{"accuracy", "accuracy", {"category"}, {}};
  // GPQA's samples also carry a subdomain.
  bool subdomain = !samples.empty();
  for (const auto& s : samples) subdomain = subdomain && s.contains("subdomain") && s["subdomain"].is_string();
  if (subdomain) m.dims.push_back("subdomain");
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    auto it = s.find("correct");
    if (it == s.end() || !it->is_boolean())
      return Status::InvalidInput(Where(path, i, s) + ": correct: expected true or false");
    Unit u;
    u.id = u.key = SampleId(s);
    u.label = JsonText(s.value("category", nlohmann::json()));
    u.groups = {u.label};
    if (subdomain) u.groups.push_back(s["subdomain"].get<std::string>());
    u.score = it->get<bool>() ? 1.0 : 0.0;
    u.prompt_sha256 = s.value("prompt_sha256", std::string());
    m.units.push_back(std::move(u));
  }
  out->metrics.push_back(std::move(m));
  return Status::Ok();
}

Status IfevalUnits(const std::string& path, const std::vector<nlohmann::json>& samples, PartUnits* out) {
  // Strict is required; loose metrics appear when every sample has them.
  bool all_loose = !samples.empty();
  for (const auto& s : samples) all_loose = all_loose && s.contains("loose") && s["loose"].is_object();
  Metric ps{"prompt_strict", "prompt-level strict", {}, {}};
  Metric is{"inst_strict", "instruction-level strict", {"instruction"}, {}};
  Metric pl{"prompt_loose", "prompt-level loose", {}, {}};
  Metric il{"inst_loose", "instruction-level loose", {}, {}};
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    const std::string where = Where(path, i, s);
    auto ids_it = s.find("instruction_id_list");
    if (ids_it == s.end() || !ids_it->is_array())
      return Status::InvalidInput(where + ": instruction_id_list: expected an array of strings");
    std::vector<std::string> ids;
    for (const auto& x : *ids_it) {
      if (!x.is_string())
        return Status::InvalidInput(where + ": instruction_id_list: expected an array of strings");
      ids.push_back(x.get<std::string>());
    }
    const std::string id = SampleId(s);
    const std::string label = Join(ids, ", ");
    auto verdict = [&](const char* mode, Metric* prompt, Metric* inst) -> Status {
      auto v = s.find(mode);
      if (v == s.end() || !v->is_object())
        return Status::InvalidInput(where + ": " + mode + ": expected an object");
      auto all = v->find("follow_all_instructions");
      if (all == v->end() || !all->is_boolean())
        return Status::InvalidInput(where + ": " + mode + ".follow_all_instructions: expected true or false");
      auto list = v->find("follow_instruction_list");
      if (list == v->end() || !list->is_array() || list->size() != ids.size())
        return Status::InvalidInput(where + ": " + mode + ".follow_instruction_list: expected " +
                                    std::to_string(ids.size()) + " booleans (one per instruction_id_list entry)");
      Unit u;
      u.id = u.key = id;
      u.label = label;
      u.score = all->get<bool>() ? 1.0 : 0.0;
      u.prompt_sha256 = s.value("prompt_sha256", std::string());
      prompt->units.push_back(std::move(u));
      for (size_t j = 0; j < ids.size(); ++j) {
        const auto& f = (*list)[j];
        if (!f.is_boolean())
          return Status::InvalidInput(where + ": " + mode + ".follow_instruction_list[" + std::to_string(j) +
                                      "]: expected true or false");
        Unit iu;
        iu.key = id + "#" + std::to_string(j) + "#" + ids[j];
        iu.id = id;
        iu.label = ids[j];
        if (!inst->dims.empty()) iu.groups = {ids[j]};
        iu.score = f.get<bool>() ? 1.0 : 0.0;
        inst->units.push_back(std::move(iu));
      }
      return Status::Ok();
    };
    EVALRUN_RETURN_IF_ERROR(verdict("strict", &ps, &is));
    if (all_loose) EVALRUN_RETURN_IF_ERROR(verdict("loose", &pl, &il));
  }
  out->metrics.push_back(std::move(ps));
  out->metrics.push_back(std::move(is));
  if (all_loose) {
    out->metrics.push_back(std::move(pl));
    out->metrics.push_back(std::move(il));
  }
  return Status::Ok();
}

Status FractionUnits(const std::string& path, const std::vector<nlohmann::json>& samples, PartUnits* out) {
  bool task_length = !samples.empty();
  for (const auto& s : samples) task_length = task_length && s.contains("task") && s.contains("length");
  Metric m{"score", "mean score", {}, {}};
  if (task_length) m.dims = {"length", "task @ length"};
  else m.dims = {"category"};
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    auto it = s.find("score");
    if (it == s.end() || !it->is_number() || it->get<double>() < 0 || it->get<double>() > 1)
      return Status::InvalidInput(Where(path, i, s) + ": score: expected a number in [0, 1]");
    Unit u;
    u.id = SampleId(s);
    if (task_length) {
      const std::string task = JsonText(s["task"]), length = JsonText(s["length"]);
      u.key = task + "@" + length + "/" + u.id;
      u.label = task + " @ " + length;
      u.groups = {length, u.label};
    } else {
      u.key = u.id;
      u.label = JsonText(s.value("category", nlohmann::json()));
      u.groups = {u.label};
    }
    u.score = it->get<double>();
    u.prompt_sha256 = s.value("prompt_sha256", std::string());
    m.units.push_back(std::move(u));
  }
  out->metrics.push_back(std::move(m));
  return Status::Ok();
}

}  // namespace

std::string GuessKind(const std::string& part, const std::vector<nlohmann::json>& samples) {
  const PartDefinition* def = FindPartDefinition(part);
  if (def && def->verdict) {
    switch (*def->verdict) {
      case VerdictKind::kChoice: return "choice";
      case VerdictKind::kInstruction: return "ifeval";
      case VerdictKind::kFraction: return "fraction";
    }
  }
  for (const auto& s : samples) {
    if (s.contains("strict") && s["strict"].is_object()) return "ifeval";
    if (s.contains("correct") && s["correct"].is_boolean()) return "choice";
    if (s.contains("score") && s["score"].is_number()) return "fraction";
  }
  return "";
}

Status ExtractUnits(const std::string& kind, const std::string& path,
                    const std::vector<nlohmann::json>& samples, PartUnits* out) {
  out->kind = kind;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].is_object())
      return Status::InvalidInput(path + ": sample " + std::to_string(i + 1) + ": expected a JSON object");
    if (SampleId(samples[i]).empty())
      return Status::InvalidInput(path + ": sample " + std::to_string(i + 1) + ": id: expected a string");
  }
  if (kind == "choice") return ChoiceUnits(path, samples, out);
  if (kind == "ifeval") return IfevalUnits(path, samples, out);
  return FractionUnits(path, samples, out);
}

}  // namespace evalrun::compare_internal
