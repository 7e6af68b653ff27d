// Does the thinking switch reach the chat template? The thinking part's
// check before any item: the same short prompt is asked with
// chat_template_kwargs {"enable_thinking": false} and then true, and the
// server's prompt token counts (usage.prompt_tokens) are compared; where the
// server has /apply-template the two rendered prompts are compared too, and
// /props says whether its chat template names enable_thinking at all.
//
//   chat prompts differ                       "the switch reaches the template"
//   chat prompts equal, and the template
//     renders the two differently, or names
//     enable_thinking                         "the switch is dropped on the way"
//                                             (a gateway that strips
//                                             chat_template_kwargs)
//   chat prompts equal, nothing names it      "the template has no thinking switch"
//   no prompt token counts                    "the switch could not be checked"
//
// Qwen3's template, for one: with the switch off the prompt ends with an
// empty think block (4 more tokens); with it on, as without it.
//
// Thread-safety: ProbeThinkingSwitch uses the transport it is given (one
// thread); the rest are pure.
#ifndef EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_SWITCH_H_
#define EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_SWITCH_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/server/http.h"
#include "evals/server/server_config.h"

namespace evalrun {

// What the server said to the two requests of each kind.
struct SwitchProbe {
  int chat_tokens_off = -1;   // usage.prompt_tokens of the chat request; -1: not said
  int chat_tokens_on = -1;
  std::string chat_error;     // why a chat request gave no count ("" when both did)
  bool rendered = false;      // /apply-template answered both
  std::string rendered_off, rendered_on;
  bool template_shown = false;           // /props has chat_template
  bool template_names_switch = false;    // and it mentions enable_thinking
  // The server-wide reasoning budget where /props shows one (llama-server's
  // --reasoning-budget), else null.
  nlohmann::json server_budget;
};

enum class SwitchVerdict { kReaches, kNoSwitch, kDropped, kUnchecked };

SwitchVerdict JudgeSwitch(const SwitchProbe& p);
// The verdict in plain words, as above.
const char* SwitchVerdictText(SwitchVerdict v);
// "reaches", "no_switch", "dropped", "unchecked".
const char* SwitchVerdictName(SwitchVerdict v);

// Asks the server behind `t` (the chat requests at server.PathPrefix():
// max_tokens 1, greedy, no prompt cache). A failed request is recorded in
// the probe, not an error: the verdict then says it could not be checked.
void ProbeThinkingSwitch(HttpTransport* t, const ServerConfig& server, SwitchProbe* out);

// results.json's parts.thinking.switch: {verdict, text, chat_prompt_tokens
// {off, on}, rendered {differ, off_tail, on_tail} or null, template_names_switch,
// server_reasoning_budget, error}.
nlohmann::json SwitchJson(const SwitchProbe& p);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_SWITCH_H_
