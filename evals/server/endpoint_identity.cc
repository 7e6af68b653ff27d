#include "evals/server/endpoint_identity.h"

namespace evalrun {

std::string ServedModelIds(const nlohmann::json& models) {
  std::string s;
  if (models.is_object() && models.contains("data") && models["data"].is_array())
    for (const auto& e : models["data"])
      if (e.is_object() && e.contains("id") && e["id"].is_string()) {
        if (!s.empty()) s += ",";
        s += e["id"].get<std::string>();
      }
  return s;
}

std::vector<IdentityDifference> EndpointIdentityDiff(const ServerProps& a, const ServerProps& b) {
  std::vector<IdentityDifference> d;
  auto field = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) d.push_back({name, x, y});
  };
  if (a.has_props != b.has_props) field("/props", a.has_props ? "answers" : "absent", b.has_props ? "answers" : "absent");
  if (a.has_props || b.has_props) {
    field("model_path", a.model_path, b.model_path);
    field("build_info", a.build_info, b.build_info);
    field("n_ctx", std::to_string(a.n_ctx), std::to_string(b.n_ctx));
    field("chat_template_sha256", a.chat_template_sha256, b.chat_template_sha256);
  }
  // The served ids: llama-server's alias (-a), vLLM's and SGLang's model.
  field("models", ServedModelIds(a.models), ServedModelIds(b.models));
  return d;
}

std::string DescribeDifferences(const std::vector<IdentityDifference>& diffs) {
  std::string s;
  for (const auto& d : diffs) {
    if (!s.empty()) s += ", ";
    s += d.field + " (\"" + d.first + "\" vs \"" + d.other + "\")";
  }
  return s;
}

}  // namespace evalrun
