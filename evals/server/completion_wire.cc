#include "evals/server/completion_wire.h"
#include "evals/base/json_bounds.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "evals/server/openai_wire.h"

namespace evalrun {
namespace {

using nlohmann::json;

const json* Member(const json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

// llama-server's candidates: [{id, token, bytes, logprob}, ...].
Status ReadLlamaCandidates(const json& list, const std::string& where, std::vector<TokenLogprob>* out) {
  if (!list.is_array()) return Status::ServerError("reply: " + where + " is not an array");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& c = list[i];
    const json* tok = Member(c, "token");
    const json* lp = Member(c, "logprob");
    if (!tok || !tok->is_string() || !lp || !lp->is_number())
      return Status::ServerError("reply: " + where + "[" + std::to_string(i) + "] lacks token or logprob");
    TokenLogprob t;
    t.token = tok->get<std::string>();
    t.logprob = lp->get<double>();
    if (const json* id = Member(c, "id"); id && id->is_number_integer()) t.id = id->get<int64_t>();
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

// OpenAI's legacy shape: top_logprobs[0] is {token: logprob}.
Status ReadLegacyCandidates(const json& map, std::vector<TokenLogprob>* out) {
  if (!map.is_object()) return Status::ServerError("reply: choices[0].logprobs.top_logprobs[0] is not an object");
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->is_number())
      return Status::ServerError("reply: choices[0].logprobs.top_logprobs[0][\"" + it.key() + "\"] is not a number");
    out->push_back({-1, it.key(), it->get<double>()});
  }
  return Status::Ok();
}

Status ReadCandidates(const json& j, std::vector<TokenLogprob>* out) {
  if (const json* cp = Member(j, "completion_probabilities")) {
    if (!cp->is_array() || cp->empty()) return Status::ServerError("reply: completion_probabilities is empty");
    const json* top = Member((*cp)[0], "top_logprobs");
    if (!top) top = Member((*cp)[0], "probs");
    if (!top) return Status::ServerError("reply: completion_probabilities[0] has no top_logprobs");
    return ReadLlamaCandidates(*top, "completion_probabilities[0].top_logprobs", out);
  }
  const json* ch = Member(j, "choices");
  if (!ch || !ch->is_array() || ch->empty())
    return Status::ServerError("reply has neither completion_probabilities nor choices");
  const json* lp = Member((*ch)[0], "logprobs");
  if (!lp) return Status::ServerError("reply: choices[0].logprobs is null (the server did not return logprobs)");
  if (const json* content = Member(*lp, "content")) {
    if (!content->is_array() || content->empty())
      return Status::ServerError("reply: choices[0].logprobs.content is empty");
    const json* top = Member((*content)[0], "top_logprobs");
    if (!top) return Status::ServerError("reply: choices[0].logprobs.content[0] has no top_logprobs");
    return ReadLlamaCandidates(*top, "choices[0].logprobs.content[0].top_logprobs", out);
  }
  const json* top = Member(*lp, "top_logprobs");
  if (!top || !top->is_array() || top->empty())
    return Status::ServerError("reply: choices[0].logprobs has neither content nor top_logprobs");
  return ReadLegacyCandidates((*top)[0], out);
}

double NumberOr(const json& o, const char* key, double dflt) {
  const json* v = Member(o, key);
  return v && v->is_number() ? v->get<double>() : dflt;
}

int IntOr(const json& o, const char* key, int dflt) {
  const json* v = Member(o, key);
  return v && v->is_number_integer() ? v->get<int>() : dflt;
}

}  // namespace

std::string CompletionPath(const LogprobRequest& req, const std::string& path_prefix) {
  return req.llama_completion ? "/completion" : path_prefix + "/completions";
}

std::string CompletionRequestBody(const Prompt& prompt, const std::string& model) {
  json j;
  if (!model.empty()) j["model"] = model;
  j["prompt"] = prompt.messages.empty() ? std::string() : prompt.messages[0].content;
  const int k = prompt.logprobs ? prompt.logprobs->top_logprobs : 1;
  if (prompt.logprobs && prompt.logprobs->llama_completion) {
    j["n_predict"] = 1;
    j["n_probs"] = k;
  } else {
    j["max_tokens"] = 1;
    j["logprobs"] = k;
  }
  j["temperature"] = 0.0;
  if (prompt.params.seed) j["seed"] = *prompt.params.seed;
  j["cache_prompt"] = false;
  j["stream"] = false;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status ParseCompletionReply(std::string_view body, Completion* out) {
  if (Status b = CheckJsonBounds(body, "reply"); !b.ok()) return Status::ServerError(b.message());
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    return Status::ServerError("reply is not valid JSON (" + std::to_string(body.size()) + " bytes, starting \"" +
                               std::string(body.substr(0, 120)) + "\")");
  }
  if (!j.is_object()) return Status::ServerError("reply is not a JSON object");
  if (Member(j, "error")) return Status::ServerError("reply carries an error: " + ErrorMessageOf(body));
  Completion c;
  EVALRUN_RETURN_IF_ERROR(ReadCandidates(j, &c.top_logprobs));
  if (c.top_logprobs.empty()) return Status::ServerError("reply: no logprob candidates");
  std::stable_sort(c.top_logprobs.begin(), c.top_logprobs.end(),
                   [](const TokenLogprob& a, const TokenLogprob& b) { return a.logprob > b.logprob; });
  if (const json* ch = Member(j, "choices"); ch && ch->is_array() && !ch->empty()) {
    const json& c0 = (*ch)[0];
    if (const json* t = Member(c0, "text"); t && t->is_string()) c.content = t->get<std::string>();
    if (const json* f = Member(c0, "finish_reason"); f && f->is_string()) c.finish_reason = f->get<std::string>();
  } else {
    if (const json* t = Member(j, "content"); t && t->is_string()) c.content = t->get<std::string>();
    const json* stop = Member(j, "stop_type");
    c.finish_reason = stop && stop->is_string() && stop->get<std::string>() == "limit" ? "length" : "stop";
    c.prompt_tokens = IntOr(j, "tokens_evaluated", -1);
    c.completion_tokens = IntOr(j, "tokens_predicted", -1);
  }
  if (const json* u = Member(j, "usage")) {
    c.prompt_tokens = IntOr(*u, "prompt_tokens", c.prompt_tokens);
    c.completion_tokens = IntOr(*u, "completion_tokens", c.completion_tokens);
  }
  if (const json* t = Member(j, "timings"); t && t->is_object()) {
    c.timings.present = true;
    c.timings.prompt_n = NumberOr(*t, "prompt_n", 0);
    c.timings.prompt_ms = NumberOr(*t, "prompt_ms", 0);
    c.timings.prompt_per_second = NumberOr(*t, "prompt_per_second", 0);
    c.timings.predicted_n = NumberOr(*t, "predicted_n", 0);
    c.timings.predicted_ms = NumberOr(*t, "predicted_ms", 0);
    c.timings.predicted_per_second = NumberOr(*t, "predicted_per_second", 0);
    c.timings.cache_n = NumberOr(*t, "cache_n", 0);
  }
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace evalrun
