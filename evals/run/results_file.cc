// results.json (docs/results-schema.md), rewritten atomically each time a
// part finishes, and the short table on stdout.
#include <algorithm>
#include <map>

#include "evals/base/json_fields.h"
#include "evals/base/json_bounds.h"
#include "evals/run/request_settings.h"
#include "evals/run/results.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"

namespace evalrun::run_internal {

std::vector<SampleRecord> InItemOrder(const PartRun& r, std::vector<SampleRecord> records) {
  std::map<int, SampleRecord> by_index;
  for (SampleRecord& rec : records) {
    auto it = r.index_by_id.find(rec.id);
    if (it != r.index_by_id.end()) by_index[it->second] = std::move(rec);
  }
  std::vector<SampleRecord> out;
  out.reserve(by_index.size());
  for (auto& [i, rec] : by_index) out.push_back(std::move(rec));
  return out;
}

void AddPartKeys(const PartRun& r, nlohmann::json* result) {
  if (r.def->verdict) (*result)["kind"] = VerdictKindName(*r.def->verdict);
  (*result)["info"] = r.prepared.info;
  (*result)["request"] = r.request.ToJson();
  if (!r.shard.is_null()) (*result)["shard"] = r.shard;
}

Status WriteResults(const std::string& job_dir, const Card& card, const std::string& job,
                    const nlohmann::json& parts_done, const nlohmann::json& extra) {
  nlohmann::json res;
  std::string old_text;
  const std::string path = job_dir + "/results.json";
  if (ReadFileToString(path, &old_text).ok()) {
    auto old = ParseJsonOrDiscarded(old_text);
    if (!old.is_discarded() && old.is_object()) res = old;
  }
  res["schema"] = kResultsSchema;
  res["job"] = job;
  res["card"] = {{"name", card.name}, {"path", card.path}, {"sha256", card.sha256}};
  res["model"] = card.model;
  res["engine"] = card.engine;
  res["hardware"] = card.hardware_raw;
  res["sampling"] = {{"temperature", card.request.sampling.temperature}, {"top_k", card.request.sampling.top_k},
                     {"top_p", card.request.sampling.top_p}, {"seed", card.request.sampling.seed}};
  res[kThinkingKey] = card.request.thinking;  // the card's default; each part's own: parts.<name>.request
  res["cache_prompt"] = card.request.cache_prompt;
  if (!res.contains("parts") || !res["parts"].is_object()) res["parts"] = nlohmann::json::object();
  for (auto& [k, v] : parts_done.items()) res["parts"][k] = v;
  for (auto& [k, v] : extra.items()) res[k] = v;
  return WriteFileAtomically(path, res.dump(2) + "\n");
}

void PrintTable(FILE* out, const std::vector<PartRun>& runs, const nlohmann::json& parts) {
  int name_width = 10;  // the part column as wide as its longest name (10 at least)
  for (const auto& r : runs)
    if (parts.contains(r.name)) name_width = std::max(name_width, static_cast<int>(r.name.size()));
  std::fprintf(out, "\n%-*s %8s %6s %8s %8s %8s %7s\n", name_width, "part", "score", "n", "stderr", "cut_off",
               "no_ans", "failed");
  for (const auto& r : runs) {
    if (!parts.contains(r.name)) continue;
    const auto& p = parts[r.name];
    auto num = [&](const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<double>() : 0.0; };
    // A part that says its scale (score_scale: 0-100) is shown as it is; the
    // others are fractions.
    const double scale = p.contains("score_scale") ? 1.0 : 100.0;
    std::fprintf(out, "%-*s %7.2f%% %6d %7.2f%% %8d %8d %7d\n", name_width, r.name.c_str(), scale * num("score"),
                 static_cast<int>(num("n")), scale * num("stderr"), static_cast<int>(num("cut_off")),
                 static_cast<int>(num("no_answer")), static_cast<int>(num("failed")));
    // A part's own plain-words lines (a verdict on the thinking switch, say).
    if (p.contains("headline") && p["headline"].is_array())
      for (const auto& line : p["headline"])
        if (line.is_string()) std::fprintf(out, "  %s\n", line.get<std::string>().c_str());
  }
}

}  // namespace evalrun::run_internal
