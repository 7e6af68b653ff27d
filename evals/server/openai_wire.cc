#include "evals/server/openai_wire.h"
#include "evals/base/json_bounds.h"

#include <nlohmann/json.hpp>

namespace evalrun {

namespace {

// A JSON string as nlohmann dumps one (its escapes, invalid UTF-8 replaced).
void AppendJsonString(std::string* out, std::string_view s) {
  *out += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// Written directly, keys in the order nlohmann's object dumps them (sorted),
// so the bytes are those of an nlohmann object built and dumped: such an
// object would cost a slot worker a fifth of its CPU per request (a node per key,
// a copy of every string, strlen of every key).
std::string ChatRequestBody(const Prompt& prompt, const std::string& model) {
  const GenParams& p = prompt.params;
  std::string b = "{";
  b.reserve(256 + (prompt.messages.empty() ? 0 : prompt.messages[0].content.size()));
  auto key = [&](const char* k) {
    if (b.size() > 1) b += ',';
    b.append("\"").append(k).append("\":");
  };
  auto number = [&](const char* k, const nlohmann::json& v) {
    key(k);
    b += v.dump();
  };
  auto boolean = [&](bool v) { b += v ? "true" : "false"; };
  if (p.cache_prompt) {
    key("cache_prompt");
    boolean(*p.cache_prompt);
  }
  if (p.enable_thinking) {
    key("chat_template_kwargs");
    b += "{\"enable_thinking\":";
    boolean(*p.enable_thinking);
    b += '}';
  }
  if (p.max_tokens > 0) number("max_tokens", p.max_tokens);
  key("messages");
  b += '[';
  for (size_t i = 0; i < prompt.messages.size(); ++i) {
    b += i == 0 ? "{\"content\":" : ",{\"content\":";
    AppendJsonString(&b, prompt.messages[i].content);
    b += ",\"role\":";
    AppendJsonString(&b, prompt.messages[i].role);
    b += '}';
  }
  b += ']';
  if (!model.empty()) {
    key("model");
    AppendJsonString(&b, model);
  }
  if (p.reasoning_budget) number("reasoning_budget_tokens", *p.reasoning_budget);
  if (p.seed) number("seed", *p.seed);
  if (!p.stop.empty()) {
    key("stop");
    b += '[';
    for (size_t i = 0; i < p.stop.size(); ++i) {
      if (i > 0) b += ',';
      AppendJsonString(&b, p.stop[i]);
    }
    b += ']';
  }
  key("stream");
  boolean(false);
  if (p.temperature) number("temperature", *p.temperature);
  if (p.top_k) number("top_k", *p.top_k);
  if (p.top_p) number("top_p", *p.top_p);
  b += '}';
  return b;
}

bool SplitThinkBlock(std::string_view text, std::string* reasoning, std::string* answer,
                     bool* unclosed) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
  static constexpr std::string_view kOpen = "<think>", kClose = "</think>";
  *unclosed = false;
  if (text.substr(i, kOpen.size()) != kOpen) return false;
  size_t body = i + kOpen.size();
  size_t close = text.find(kClose, body);
  if (close == std::string_view::npos) {
    *reasoning = std::string(text.substr(body));
    answer->clear();
    *unclosed = true;
    return true;
  }
  *reasoning = std::string(text.substr(body, close - body));
  std::string_view rest = text.substr(close + kClose.size());
  size_t j = 0;
  while (j < rest.size() && (rest[j] == '\n' || rest[j] == ' ' || rest[j] == '\r' || rest[j] == '\t')) ++j;
  *answer = std::string(rest.substr(j));
  return true;
}

std::string ErrorMessageOf(std::string_view body) {
  auto j = ParseJsonOrDiscarded(body);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  std::string s(body.substr(0, 300));
  if (body.size() > 300) s += "...";
  return s;
}

namespace {

double NumberOr(const nlohmann::json& o, const char* key, double dflt) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : dflt;
}

}  // namespace

ServerTimings TimingsOf(const nlohmann::json& t) {
  ServerTimings out;
  out.present = true;
  if (!t.is_object()) return out;
  out.prompt_n = NumberOr(t, "prompt_n", 0);
  out.prompt_ms = NumberOr(t, "prompt_ms", 0);
  out.prompt_per_second = NumberOr(t, "prompt_per_second", 0);
  out.predicted_n = NumberOr(t, "predicted_n", 0);
  out.predicted_ms = NumberOr(t, "predicted_ms", 0);
  out.predicted_per_second = NumberOr(t, "predicted_per_second", 0);
  out.cache_n = NumberOr(t, "cache_n", 0);
  return out;
}

Status ParseChatReply(std::string_view body, Completion* out) {
  if (Status b = CheckJsonBounds(body, "reply"); !b.ok()) return Status::ServerError(b.message());
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    std::string head(body.substr(0, 120));
    return Status::ServerError("reply is not valid JSON (" + std::to_string(body.size()) +
                               " bytes, starting \"" + head + "\")");
  }
  if (!j.is_object()) return Status::ServerError("reply is not a JSON object");
  if (j.contains("error") && !j["error"].is_null())
    return Status::ServerError("reply carries an error: " + ErrorMessageOf(body));
  auto ch = j.find("choices");
  if (ch == j.end() || !ch->is_array() || ch->empty())
    return Status::ServerError("reply has no choices");
  const auto& c0 = (*ch)[0];
  if (!c0.is_object() || !c0.contains("message") || !c0["message"].is_object())
    return Status::ServerError("reply: choices[0] has no message");
  const auto& msg = c0["message"];
  Completion c;
  std::string content;
  if (msg.contains("content") && msg["content"].is_string()) content = msg["content"].get<std::string>();
  if (msg.contains("reasoning_content") && msg["reasoning_content"].is_string())
    c.reasoning = msg["reasoning_content"].get<std::string>();
  std::string think, answer;
  bool unclosed = false;
  if (SplitThinkBlock(content, &think, &answer, &unclosed)) {
    if (!c.reasoning.empty()) c.reasoning += "\n";
    c.reasoning += think;
    c.content = answer;
    c.unclosed_think = unclosed;
  } else {
    c.content = content;
  }
  if (c0.contains("finish_reason") && c0["finish_reason"].is_string())
    c.finish_reason = c0["finish_reason"].get<std::string>();
  if (j.contains("id") && j["id"].is_string() && j["id"].get_ref<const std::string&>().size() <= 256)
    c.reply_id = j["id"].get<std::string>();
  if (j.contains("usage") && j["usage"].is_object()) {
    const auto& u = j["usage"];
    c.prompt_tokens = static_cast<int>(NumberOr(u, "prompt_tokens", -1));
    c.completion_tokens = static_cast<int>(NumberOr(u, "completion_tokens", -1));
  }
  if (j.contains("timings") && j["timings"].is_object()) c.timings = TimingsOf(j["timings"]);
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace evalrun
