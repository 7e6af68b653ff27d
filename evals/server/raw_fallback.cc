#include "evals/server/raw_fallback.h"

#include <nlohmann/json.hpp>

#include "evals/base/json_bounds.h"
#include "evals/base/redact.h"
#include "evals/server/openai_wire.h"

namespace evalrun {

const char kAcceptAnythingParser[] = R"({"parsers":[{"type":"epsilon"}],"rules":{},"root":0})";

std::string RawCompletionBody(const Prompt& prompt, const std::string& prompt_text) {
  const GenParams& p = prompt.params;
  nlohmann::json j;
  j["prompt"] = prompt_text;
  if (p.max_tokens > 0) j["n_predict"] = p.max_tokens;
  if (p.temperature) j["temperature"] = *p.temperature;
  if (p.top_k) j["top_k"] = *p.top_k;
  if (p.top_p) j["top_p"] = *p.top_p;
  if (p.seed) j["seed"] = *p.seed;
  if (p.cache_prompt) j["cache_prompt"] = *p.cache_prompt;
  if (!p.stop.empty()) j["stop"] = p.stop;
  j["chat_parser"] = kAcceptAnythingParser;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status ParseAppliedTemplate(std::string_view body, std::string* prompt_text) {
  const nlohmann::json j = ParseJsonOrDiscarded(body);
  if (j.is_discarded() || !j.is_object() || !j.contains("prompt") || !j["prompt"].is_string())
    return Status::ServerError("/apply-template: expected {\"prompt\": \"...\"}");
  *prompt_text = j["prompt"].get<std::string>();
  return Status::Ok();
}

bool TemplateOpensThink(const std::string& prompt_text) {
  const size_t open = prompt_text.rfind("<think>");
  return open != std::string::npos && prompt_text.find("</think>", open) == std::string::npos;
}

void TakeRawCompletionTotals(const nlohmann::json& reply, Completion* out) {
  auto count = [&](const char* key) {
    auto it = reply.find(key);
    return it != reply.end() && it->is_number_integer() ? it->get<int>() : -1;
  };
  out->finish_reason = reply.value("stop_type", std::string()) == "limit" ? "length" : "stop";
  out->prompt_tokens = count("tokens_evaluated");
  out->completion_tokens = count("tokens_predicted");
  if (auto t = reply.find("timings"); t != reply.end() && t->is_object()) out->timings = TimingsOf(*t);
}

Status ParseRawCompletionReply(std::string_view body, const std::string& prompt_text, Completion* out) {
  const nlohmann::json j = ParseJsonOrDiscarded(body);
  if (j.is_discarded() || !j.is_object()) return Status::ServerError("/completion: the reply is not a JSON object");
  if (j.contains("error")) return Status::ServerError("/completion: the reply carries an error: " + ErrorMessageOf(body));
  if (!j.contains("content") || !j["content"].is_string())
    return Status::ServerError("/completion: the reply has no \"content\" string");
  *out = Completion();
  std::string text = j["content"].get<std::string>();
  if (TemplateOpensThink(prompt_text)) text = "<think>" + text;
  std::string think, answer;
  bool unclosed = false;
  if (SplitThinkBlock(text, &think, &answer, &unclosed)) {
    out->reasoning = std::move(think);
    out->content = std::move(answer);
    out->unclosed_think = unclosed;
  } else {
    out->content = std::move(text);
  }
  TakeRawCompletionTotals(j, out);
  return Status::Ok();
}

Status ApplyTemplate(HttpTransport* transport, const std::string& chat_body, double timeout_s,
                     std::string* prompt_text, int* http_status) {
  HttpResponse t = transport->Post("/apply-template", chat_body, timeout_s);
  if (http_status) *http_status = t.status;
  return !t.transport_ok() ? Status::Unavailable(t.error)
         : t.status != 200  ? Status::ServerError("HTTP " + std::to_string(t.status) + ": " + ErrorMessageOf(t.body))
                            : ParseAppliedTemplate(t.body, prompt_text);
}

RawFallbackResult AskRawText(HttpTransport* transport, const Prompt& prompt, const std::string& model,
                             double timeout_s) {
  RawFallbackResult r;
  std::string prompt_text;
  Status st = ApplyTemplate(transport, ChatRequestBody(prompt, model), timeout_s, &prompt_text, &r.http_status);
  if (!st.ok()) {
    r.error = Redact("raw fallback: POST /apply-template: " + st.message());
    return r;
  }
  HttpResponse c = transport->Post("/completion", RawCompletionBody(prompt, prompt_text), timeout_s);
  r.http_status = c.status;
  st = !c.transport_ok() ? Status::Unavailable(c.error)
       : c.status != 200  ? Status::ServerError("HTTP " + std::to_string(c.status) + ": " + ErrorMessageOf(c.body))
                          : ParseRawCompletionReply(c.body, prompt_text, &r.completion);
  if (!st.ok()) {
    r.error = Redact("raw fallback: POST /completion: " + st.message());
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace evalrun
