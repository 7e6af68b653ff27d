#include "evals/benchmarks/thinking/thinking_switch.h"

#include "evals/server/openai_wire.h"

namespace evalrun {
namespace {

constexpr const char* kProbeText = "Reply with the word OK.";
constexpr double kTimeoutS = 120;

// usage.prompt_tokens of one chat request with the switch at `on`.
int ChatPromptTokens(HttpTransport* t, const ServerConfig& server, bool on, std::string* error) {
  Prompt p;
  p.messages.push_back({"user", kProbeText});
  p.params.max_tokens = 1;
  p.params.temperature = 0;
  p.params.top_k = 1;
  p.params.enable_thinking = on;
  p.params.cache_prompt = false;
  const HttpResponse r = t->Post(server.PathPrefix() + "/chat/completions", ChatRequestBody(p, server.model), kTimeoutS);
  const std::string which = on ? "on" : "off";
  if (!r.transport_ok() || r.status != 200) {
    *error = "the chat request with the switch " + which + " failed: " +
             (r.transport_ok() ? "HTTP " + std::to_string(r.status) + " " + ErrorMessageOf(r.body) : r.error);
    return -1;
  }
  Completion c;
  Status st = ParseChatReply(r.body, &c);
  if (!st.ok()) *error = "the chat request with the switch " + which + ": " + st.message();
  else if (c.prompt_tokens < 0) *error = "the server's reply has no usage.prompt_tokens";
  return st.ok() ? c.prompt_tokens : -1;
}

// The prompt /apply-template renders with the switch at `on`; false when
// the server has no such endpoint.
bool Rendered(HttpTransport* t, bool on, std::string* out) {
  const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", kProbeText}}}},
                               {"chat_template_kwargs", {{"enable_thinking", on}}}};
  const HttpResponse r = t->Post("/apply-template", body.dump(), kTimeoutS);
  if (!r.transport_ok() || r.status != 200) return false;
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("prompt") || !j["prompt"].is_string()) return false;
  *out = j["prompt"].get<std::string>();
  return true;
}

// The server-wide budget, under any of the names llama-server has used.
nlohmann::json ServerBudget(const nlohmann::json& props) {
  static const char* kKeys[] = {"reasoning_budget", "reasoning_budget_tokens", "thinking_budget_tokens"};
  std::vector<const nlohmann::json*> places = {&props};
  if (props.contains("default_generation_settings") && props["default_generation_settings"].is_object()) {
    const auto& d = props["default_generation_settings"];
    places.push_back(&d);
    if (d.contains("params") && d["params"].is_object()) places.push_back(&d["params"]);
  }
  for (const auto* o : places)
    for (const char* k : kKeys)
      if (o->contains(k) && (*o)[k].is_number()) return (*o)[k];
  return nullptr;
}

void ReadProps(HttpTransport* t, SwitchProbe* out) {
  const HttpResponse r = t->Get("/props", kTimeoutS);
  if (!r.transport_ok() || r.status != 200) return;
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  if (j.contains("chat_template") && j["chat_template"].is_string()) {
    out->template_shown = true;
    out->template_names_switch = j["chat_template"].get<std::string>().find("enable_thinking") != std::string::npos;
  }
  out->server_budget = ServerBudget(j);
}

// Where two texts part, the rest of each (what the switch added).
std::string TailAfterCommon(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return a.substr(i);
}

}  // namespace

SwitchVerdict JudgeSwitch(const SwitchProbe& p) {
  if (p.chat_tokens_off < 0 || p.chat_tokens_on < 0) return SwitchVerdict::kUnchecked;
  if (p.chat_tokens_off != p.chat_tokens_on) return SwitchVerdict::kReaches;
  const bool template_switches = (p.rendered && p.rendered_off != p.rendered_on) || p.template_names_switch;
  return template_switches ? SwitchVerdict::kDropped : SwitchVerdict::kNoSwitch;
}

const char* SwitchVerdictText(SwitchVerdict v) {
  switch (v) {
    case SwitchVerdict::kReaches: return "the switch reaches the template";
    case SwitchVerdict::kNoSwitch: return "the template has no thinking switch";
    case SwitchVerdict::kDropped: return "the switch is dropped on the way";
    case SwitchVerdict::kUnchecked: break;
  }
  return "the switch could not be checked";
}

const char* SwitchVerdictName(SwitchVerdict v) {
  switch (v) {
    case SwitchVerdict::kReaches: return "reaches";
    case SwitchVerdict::kNoSwitch: return "no_switch";
    case SwitchVerdict::kDropped: return "dropped";
    case SwitchVerdict::kUnchecked: break;
  }
  return "unchecked";
}

void ProbeThinkingSwitch(HttpTransport* t, const ServerConfig& server, SwitchProbe* out) {
  std::string err_off, err_on;
  out->chat_tokens_off = ChatPromptTokens(t, server, false, &err_off);
  out->chat_tokens_on = ChatPromptTokens(t, server, true, &err_on);
  out->chat_error = !err_off.empty() ? err_off : err_on;
  out->rendered = Rendered(t, false, &out->rendered_off) && Rendered(t, true, &out->rendered_on);
  ReadProps(t, out);
}

nlohmann::json SwitchJson(const SwitchProbe& p) {
  const SwitchVerdict v = JudgeSwitch(p);
  auto count = [](int n) { return n < 0 ? nlohmann::json() : nlohmann::json(n); };
  nlohmann::json rendered;
  if (p.rendered)
    rendered = {{"differ", p.rendered_off != p.rendered_on},
                {"off_tail", TailAfterCommon(p.rendered_off, p.rendered_on)},
                {"on_tail", TailAfterCommon(p.rendered_on, p.rendered_off)}};
  return {{"verdict", SwitchVerdictName(v)},
          {"text", SwitchVerdictText(v)},
          {"chat_prompt_tokens", {{"off", count(p.chat_tokens_off)}, {"on", count(p.chat_tokens_on)}}},
          {"rendered", rendered},
          {"template_names_switch", p.template_shown ? nlohmann::json(p.template_names_switch) : nlohmann::json()},
          {"server_reasoning_budget", p.server_budget},
          {"error", p.chat_error.empty() ? nlohmann::json() : nlohmann::json(p.chat_error)}};
}

}  // namespace evalrun
