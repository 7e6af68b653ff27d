#include "evals/publish/compare_setup.h"

#include <algorithm>

#include "evals/base/json_fields.h"
#include "evals/publish/run_folder.h"
#include "evals/run/request_settings.h"

namespace evalrun {
namespace {

std::string Shown(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(not recorded)";
  return v.dump();
}

nlohmann::json SetupValue(const RunFolder& r, bool from_run, const std::vector<const char*>& path) {
  if (path.size() == 1 && std::string(path[0]) == "evalrun") {
    const auto& e = JsonAt(r.run, {"evalrun"});
    if (!e.is_object()) return nullptr;
    return JsonText(e.value("version", nlohmann::json())) + " (" + JsonText(e.value("git_sha", nlohmann::json())) +
           ")";
  }
  return JsonAt(from_run ? r.run : r.results, path);
}

void DiffInto(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, bool has_a, bool has_b,
              nlohmann::json* out) {
  if (has_a && has_b && a.is_object() && b.is_object()) {
    std::vector<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.push_back(it.key());
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    for (const auto& k : keys) {
      const std::string p = path.empty() ? k : path + "." + k;
      bool in_a = a.contains(k), in_b = b.contains(k);
      DiffInto(in_a ? a[k] : nlohmann::json(), in_b ? b[k] : nlohmann::json(), p, in_a, in_b, out);
    }
    return;
  }
  if (has_a && has_b && a.is_array() && b.is_array()) {
    size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      bool in_a = i < a.size(), in_b = i < b.size();
      DiffInto(in_a ? a[i] : nlohmann::json(), in_b ? b[i] : nlohmann::json(),
               path + "[" + std::to_string(i) + "]", in_a, in_b, out);
    }
    return;
  }
  if (has_a == has_b && a == b) return;
  nlohmann::json d = {{"path", path.empty() ? std::string("(whole card)") : path}};
  if (has_a) d["a"] = a;
  if (has_b) d["b"] = b;
  out->push_back(std::move(d));
}

// One row per part with its request settings (run.json part_requests:
// sampling, thinking, reasoning budget, cache_prompt), so that a part asked
// otherwise in one run is named ("request settings: <name>").
void AddRequestRows(const RunFolder& a, const RunFolder& b, nlohmann::json* out) {
  const nlohmann::json& ra = JsonAt(a.run, {"part_requests"});
  const nlohmann::json& rb = JsonAt(b.run, {"part_requests"});
  std::vector<std::string> names;
  for (const nlohmann::json* r : {&ra, &rb})
    if (r->is_object())
      for (auto it = r->begin(); it != r->end(); ++it)
        if (std::find(names.begin(), names.end(), it.key()) == names.end()) names.push_back(it.key());
  for (const std::string& n : names) {
    const nlohmann::json va = ra.is_object() ? ra.value(n, nlohmann::json()) : nlohmann::json();
    const nlohmann::json vb = rb.is_object() ? rb.value(n, nlohmann::json()) : nlohmann::json();
    out->push_back({{"field", "request settings: " + n}, {"a", Shown(va)}, {"b", Shown(vb)}, {"differs", va != vb}});
  }
}

}  // namespace

nlohmann::json JsonDiff(const nlohmann::json& a, const nlohmann::json& b) {
  nlohmann::json out = nlohmann::json::array();
  DiffInto(a, b, "", true, true, &out);
  return out;
}

namespace compare_internal {

nlohmann::json SetupRows(const RunFolder& a, const RunFolder& b) {
  struct Row {
    const char* field;
    bool from_run;  // run.json, else results.json
    std::vector<const char*> path;
  };
  static const std::vector<Row> rows = {
      {"engine build", true, {"server", "build_info"}},
      {"model file", true, {"server", "model_path"}},
      {"model (card)", false, {"model"}},
      {"engine (card)", false, {"engine"}},
      {"slots", true, {"slots"}},
      {"sampling", false, {"sampling"}},
      {kThinkingKey, false, {kThinkingKey}},
      {"card sha256", false, {"card", "sha256"}},
      {"card name", false, {"card", "name"}},
      {"context per slot (n_ctx)", true, {"server", "n_ctx"}},
      {"chat template sha256", true, {"server", "chat_template_sha256"}},
      {"hardware (card)", false, {"hardware"}},
      {"host", true, {"host", "hostname"}},
      {"evalrun", true, {"evalrun"}},
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json va = SetupValue(a, r.from_run, r.path), vb = SetupValue(b, r.from_run, r.path);
    out.push_back({{"field", r.field}, {"a", Shown(va)}, {"b", Shown(vb)}, {"differs", va != vb}});
  }
  AddRequestRows(a, b, &out);
  return out;
}

nlohmann::json RunHeader(const RunFolder& r) {
  return {{"dir", r.dir},
          {"job", JsonAt(r.results, {"job"})},
          {"card", JsonAt(r.results, {"card", "name"})},
          {"card_sha256", JsonAt(r.results, {"card", "sha256"})},
          {"finished_utc", JsonAt(r.results, {"finished_utc"})},
          {"has_run_json", !r.run.is_null()}};
}

}  // namespace compare_internal
}  // namespace evalrun
