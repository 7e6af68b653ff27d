#include "evals/run/prepare_steps.h"

#include "datasets/manifest.h"
#include "evals/base/selection.h"
#include "evals/base/sha256.h"

namespace evalrun {

Status FindDataFile(const PartContext& ctx, const std::string& rel_path, std::string* path,
                    std::string* sha256) {
  if (!ctx.input_override.empty()) {
    *path = ctx.input_override;
    return Sha256File(*path, sha256);
  }
  EVALRUN_RETURN_IF_ERROR(VerifyDataFile(ctx.data_dir, rel_path, path));
  *sha256 = FindManifestFile(rel_path)->sha256;
  return Status::Ok();
}

std::vector<size_t> SelectQuestions(const PartContext& ctx, const std::vector<std::string>& ids,
                                    const std::vector<std::string>& categories, int64_t seed, int64_t count) {
  std::vector<size_t> chosen = StratifiedSample(ids, categories, ctx.all_items ? -1 : static_cast<int>(count), seed);
  if (ctx.limit >= 0 && chosen.size() > static_cast<size_t>(ctx.limit)) chosen.resize(ctx.limit);
  return chosen;
}

void RecordSelection(int64_t seed, int max_tokens, PreparedPart* out) {
  out->info["seed"] = seed;
  out->info["max_tokens"] = max_tokens;
  nlohmann::json chosen_ids = nlohmann::json::array();
  for (const Item& it : out->items) chosen_ids.push_back(it.id);
  out->info["ids"] = chosen_ids;
}

CardKey QuestionCountKey(const std::string& name, const std::string& doc) {
  return CardKey::Int(name, 1, CardKey::kNoMax, doc).OutOfRunKey();
}

CardKey MaxTokensKey(const std::string& doc) { return CardKey::Int("max_tokens", 1, CardKey::kNoMax, doc); }

// 32 bits: a part may seed numpy's legacy RNG (np.random.seed) with it.
CardKey SeedKey(const std::string& doc) { return CardKey::Int("seed", 0, 4294967295LL, doc); }

}  // namespace evalrun
