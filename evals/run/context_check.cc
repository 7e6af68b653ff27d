#include "evals/run/context_check.h"

#include <algorithm>

namespace evalrun {
namespace {

constexpr const char* kServerFigure = "GET /props default_generation_settings.n_ctx, the context of one slot";

}  // namespace

Status CheckLengths(const std::string& part, const std::vector<int64_t>& lengths, int64_t request_ctx, bool skip,
                    std::vector<int64_t>* kept, nlohmann::json* skipped) {
  kept->clear();
  for (int64_t len : lengths) {
    if (request_ctx <= 0 || len <= request_ctx) {
      kept->push_back(len);
      continue;
    }
    const std::string reason = "length " + std::to_string(len) + " needs up to " + std::to_string(len) +
                               " tokens (prompt + answer budget) in one request, but the server gives a request " +
                               std::to_string(request_ctx) + " (" + kServerFigure + ")";
    if (!skip)
      return Status::InvalidInput("parts." + part + ".lengths: " + reason +
                                  ". Start the server with a larger context per slot (llama-server -c / -np), "
                                  "remove the length, or set parts." + part + ".over_context to \"skip\"");
    skipped->push_back({{"task", "*"}, {"length", len}, {"reason", reason}});
  }
  return Status::Ok();
}

Status CheckItemsFit(const std::string& part, int64_t request_ctx, bool skip, std::vector<Item>* items,
                     nlohmann::json* skipped) {
  if (request_ctx <= 0) return Status::Ok();
  auto too_long = [&](const Item& item, std::string* reason) {
    const int counted = item.counted_prompt_tokens;
    const int64_t need = counted + static_cast<int64_t>(item.prompt.params.max_tokens);
    if (counted < 0 || need <= request_ctx) return false;
    *reason = std::to_string(counted) + " prompt tokens + " + std::to_string(item.prompt.params.max_tokens) +
              " answer tokens = " + std::to_string(need) + ", more than the " + std::to_string(request_ctx) +
              " a request can have (" + kServerFigure + ")";
    return true;
  };
  std::string reason;
  if (!skip) {
    for (const Item& item : *items)
      if (too_long(item, &reason))
        return Status::InvalidInput("part " + part + ": " + item.id + ": " + reason + "; nothing was asked");
    return Status::Ok();
  }
  std::vector<Item> kept;
  kept.reserve(items->size());
  for (Item& item : *items) {
    if (too_long(item, &reason)) {
      skipped->push_back({{"task", item.category}, {"id", item.id}, {"reason", reason}});
    } else {
      kept.push_back(std::move(item));
    }
  }
  *items = std::move(kept);
  return Status::Ok();
}

int64_t ReserveTokens(const Item& item) {
  const int counted = item.counted_prompt_tokens;
  int64_t prompt = counted;
  if (counted < 0) {
    prompt = 64;  // the chat template's own tokens, generously
    for (const auto& m : item.prompt.messages) prompt += static_cast<int64_t>(m.content.size()) + 8;
    if (item.spooled.valid()) prompt += item.spooled.bytes;
  }
  return prompt + std::max(0, item.prompt.params.max_tokens);
}

}  // namespace evalrun
