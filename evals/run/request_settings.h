// What a part asks the server with, besides its prompts: sampling, the
// thinking switch and its reasoning budget, and the prompt cache. The card's
// top-level `sampling`, `thinking`, `reasoning_budget` and `cache_prompt`
// are the defaults; `parts.<name>` may set each of them again (the same
// keys, the same shapes), so one job can ask one part with thinking off and
// another with thinking on and a budget. The runner applies a part's settings
// to every request of that part and never overwrites them; run.json and
// results.json record each part's effective settings (ToJson).
//
//   "thinking": false | true | "off" | "on"
//   "reasoning_budget": N   tokens of reasoning (thinking on only); the
//                           request's max_tokens is then N + the part's
//                           answer limit, as llama-server counts both
//   "cache_prompt": false   (default) llama-server's prompt cache off, so
//                           a pass does not depend on what the server did
//                           before (the A/A noise floor measures batching,
//                           not cache effects)
//
// Parsing names the card and the JSON path ("parts.<name>.reasoning_budget:
// only with thinking on").
//
// Thread-safety: plain values.
#ifndef EVALRUN_EVALS_RUN_REQUEST_SETTINGS_H_
#define EVALRUN_EVALS_RUN_REQUEST_SETTINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/server/types.h"

namespace evalrun {

struct SamplingConfig {
  double temperature = 0.0;
  int top_k = 1;
  double top_p = 1.0;
  int64_t seed = 42;
};

// The request setting that switches the chat template's thinking
// (chat_template_kwargs.enable_thinking): a key of the card, of a part's
// request and of results.json. It shares its word with a benchmark's part
// but is not it (tests/engine/benchmark_names_test.cc allows the word
// here alone).
inline constexpr const char* kThinkingKey = "thinking";

struct RequestSettings {
  SamplingConfig sampling;
  bool thinking = false;
  std::optional<int> reasoning_budget;  // tokens; only with thinking on
  bool cache_prompt = false;

  // Sets sampling, chat_template_kwargs.enable_thinking, the budget and
  // cache_prompt on `p`; with a budget, max_tokens grows by it.
  void ApplyTo(GenParams* p) const;
  // {"sampling": {...}, "thinking": "off"|"on", "reasoning_budget": N|null,
  //  "cache_prompt": bool}
  nlohmann::json ToJson() const;
  bool operator==(const RequestSettings& o) const { return ToJson() == o.ToJson(); }
};

// The keys above, as they may appear at the card's top level and in every
// parts.<name>.
const std::vector<std::string>& RequestSettingKeys();

// Reads the keys of RequestSettingKeys() present in `obj` (the card's root,
// path "", or parts.<name>) over `*out`, which holds the defaults. Other
// keys are left for the caller. Errors name `source: path.key`.
Status ParseRequestSettings(const nlohmann::json& obj, const std::string& source, const std::string& path,
                            RequestSettings* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_REQUEST_SETTINGS_H_
