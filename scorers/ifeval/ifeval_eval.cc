#include "scorers/ifeval/ifeval_eval.h"

#include <algorithm>
#include <utility>

#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

std::string RemoveStars(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '*') out.push_back(c);
  }
  return out;
}

}  // namespace

Status ParseIfevalPromptSpec(const nlohmann::json& row, const std::string& where,
                             IfevalPromptSpec* out) {
  auto bad = [&](const std::string& field, const std::string& what) {
    return Status::InvalidInput(where + ": " + field + ": " + what);
  };
  if (!row.is_object()) return Status::InvalidInput(where + ": expected a JSON object");
  const auto key = row.find("key");
  if (key == row.end() || !key->is_number_integer()) return bad("key", "expected an integer");
  out->key = key->get<int64_t>();
  const auto prompt = row.find("prompt");
  if (prompt == row.end() || !prompt->is_string()) return bad("prompt", "expected a string");
  out->prompt = prompt->get<std::string>();
  const auto ids = row.find("instruction_id_list");
  if (ids == row.end() || !ids->is_array()) {
    return bad("instruction_id_list", "expected a list of strings");
  }
  out->instruction_ids.clear();
  for (const auto& id : *ids) {
    if (!id.is_string()) return bad("instruction_id_list", "expected a list of strings");
    out->instruction_ids.push_back(id.get<std::string>());
  }
  const auto kwargs = row.find("kwargs");
  if (kwargs == row.end() || !kwargs->is_array()) {
    return bad("kwargs", "expected a list of objects");
  }
  out->kwargs.assign(kwargs->begin(), kwargs->end());
  return Status::Ok();
}

Status IfevalPrompt::Compile(const IfevalPromptSpec& spec, std::unique_ptr<const IfevalPrompt>* out) {
  const std::string where = "prompt " + std::to_string(spec.key);
  if (spec.kwargs.size() != spec.instruction_ids.size()) {
    return Status::InvalidInput(where + ": " + std::to_string(spec.instruction_ids.size()) +
                                " instruction ids but " + std::to_string(spec.kwargs.size()) +
                                " kwargs objects");
  }
  std::unique_ptr<IfevalPrompt> p(new IfevalPrompt());
  p->key_ = spec.key;
  p->prompt_ = spec.prompt;
  p->ids_ = spec.instruction_ids;
  for (size_t i = 0; i < spec.instruction_ids.size(); ++i) {
    std::unique_ptr<const IfevalInstruction> instr;
    const Status st = BuildIfevalInstruction(spec.instruction_ids[i], spec.kwargs[i], &instr);
    if (!st.ok()) return st.Prefixed(where + ": instruction " + std::to_string(i + 1));
    p->instructions_.push_back(std::move(instr));
  }
  *out = std::move(p);
  return Status::Ok();
}

IfevalVerdict IfevalPrompt::EvaluateStrict(const IfevalResources& res,
                                           std::string_view response) const {
  IfevalVerdict v;
  const bool non_blank = !py::PyStrip(response).empty();
  for (const auto& instr : instructions_) {
    v.follow_list.push_back(non_blank && instr->Check(res, response));
  }
  v.follow_all = std::find(v.follow_list.begin(), v.follow_list.end(), false) == v.follow_list.end();
  return v;
}

IfevalVerdict IfevalPrompt::EvaluateLoose(const IfevalResources& res,
                                          std::string_view response) const {
  const std::vector<std::string> variants = IfevalLooseVariants(response);
  std::vector<bool> non_blank;
  for (const std::string& r : variants) non_blank.push_back(!py::PyStrip(r).empty());
  IfevalVerdict v;
  for (const auto& instr : instructions_) {
    bool followed = false;
    for (size_t k = 0; k < variants.size() && !followed; ++k) {
      followed = non_blank[k] && instr->Check(res, variants[k]);
    }
    v.follow_list.push_back(followed);
  }
  v.follow_all = std::find(v.follow_list.begin(), v.follow_list.end(), false) == v.follow_list.end();
  return v;
}

std::vector<std::string> IfevalLooseVariants(std::string_view response) {
  // r = response.split("\n"); "\n".join(r[1:]) is everything after the first
  // "\n" ("" when there is none); "\n".join(r[:-1]) everything before the last.
  const size_t first_nl = response.find('\n');
  const size_t last_nl = response.rfind('\n');
  std::string_view remove_first, remove_last, remove_both;
  if (first_nl != std::string_view::npos) {
    remove_first = response.substr(first_nl + 1);
    remove_last = response.substr(0, last_nl);
    if (last_nl > first_nl) remove_both = response.substr(first_nl + 1, last_nl - first_nl - 1);
  }
  remove_first = py::PyStrip(remove_first);
  remove_last = py::PyStrip(remove_last);
  remove_both = py::PyStrip(remove_both);
  return {std::string(response),     RemoveStars(response),    std::string(remove_first),
          std::string(remove_last),  std::string(remove_both), RemoveStars(remove_first),
          RemoveStars(remove_last),  RemoveStars(remove_both)};
}

void IfevalAccuracy::Add(const std::vector<std::string>& ids, const IfevalVerdict& verdict) {
  ++prompt_total;
  bool all = true;
  for (size_t i = 0; i < ids.size() && i < verdict.follow_list.size(); ++i) {
    const bool followed = verdict.follow_list[i];
    all = all && followed;
    ++instruction_total;
    instruction_correct += followed;
    const std::string category = ids[i].substr(0, ids[i].find(':'));
    ++by_category[category].total;
    by_category[category].followed += followed;
    ++by_instruction[ids[i]].total;
    by_instruction[ids[i]].followed += followed;
  }
  prompt_correct += all;
}

double IfevalAccuracy::PromptLevel() const {
  return prompt_total ? static_cast<double>(prompt_correct) / static_cast<double>(prompt_total) : 0.0;
}

double IfevalAccuracy::InstructionLevel() const {
  return instruction_total ? static_cast<double>(instruction_correct) /
                                 static_cast<double>(instruction_total)
                           : 0.0;
}

}  // namespace evalrun
