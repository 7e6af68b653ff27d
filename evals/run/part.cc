#include "evals/run/part.h"

namespace evalrun {

Status LoadItemPrompt(const PreparedPart& part, const Item& item, Prompt* out) {
  *out = item.prompt;
  if (!item.spooled.valid()) return Status::Ok();
  if (!part.spool || out->messages.empty()) return Status::Internal(item.id + ": spooled prompt without a spool");
  return part.spool->Read(item.spooled, &out->messages[0].content);
}

Status Part::FitToContext(int64_t, PartSettings*, ContextFit*) const { return Status::Ok(); }

int Part::FindItem(const nlohmann::json& line, const std::unordered_map<std::string, int>& index_by_id,
                   std::string*) const {
  auto it = line.find("id");
  if (it == line.end()) return -1;
  std::string id = it->is_string() ? it->get<std::string>() : it->dump();
  auto f = index_by_id.find(id);
  return f == index_by_id.end() ? -1 : f->second;
}

}  // namespace evalrun
