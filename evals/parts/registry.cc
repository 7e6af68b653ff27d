#include <functional>
#include <map>

#include "evals/run/part.h"
#include "evals/parts/parts.h"

namespace evalrun {

std::unique_ptr<Part> MakePart(const std::string& name) {
  static const std::map<std::string, std::function<std::unique_ptr<Part>()>> kParts = {
      {"mmlupro", MakeMmluProPart},
      {"gpqa", MakeGpqaPart},
      {"ruler", MakeRulerPart},
      {"ifeval", MakeIfevalPart},
  };
  auto it = kParts.find(name);
  return it == kParts.end() ? nullptr : it->second();
}

std::vector<std::pair<std::string, std::string>> Part::Summary(const nlohmann::json& r) const {
  std::vector<std::pair<std::string, std::string>> rows;
  if (r.contains("score")) rows.push_back({"score", r["score"].dump()});
  return rows;
}

}  // namespace evalrun

namespace evalrun {

Status LoadItemPrompt(const PreparedPart& part, const Item& item, Prompt* out) {
  *out = item.prompt;
  if (!item.spooled.valid()) return Status::Ok();
  if (!part.spool || out->messages.empty()) return Status::Internal(item.id + ": spooled prompt without a spool");
  return part.spool->Read(item.spooled, &out->messages[0].content);
}

int Part::FindItem(const nlohmann::json& line, const PreparedPart&,
                   const std::unordered_map<std::string, int>& index_by_id) const {
  auto it = line.find("id");
  if (it == line.end()) return -1;
  std::string id = it->is_string() ? it->get<std::string>() : it->dump();
  auto f = index_by_id.find(id);
  return f == index_by_id.end() ? -1 : f->second;
}

}  // namespace evalrun
