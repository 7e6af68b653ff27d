#include "tests/support/fake_replies.h"

#include <sstream>
#include <vector>

namespace evalrun::testing {
namespace {

// llama-server keeps its sampling settings as floats and prints them as doubles.
double F(double v) { return static_cast<double>(static_cast<float>(v)); }

OrderedJson ErrorObject(int code, const std::string& message, const std::string& type) {
  OrderedJson e;
  e["code"] = code;
  e["message"] = message;
  e["type"] = type;
  return e;
}

OrderedJson Usage(const FakeGeneration& g) {
  OrderedJson u;
  u["completion_tokens"] = g.completion_tokens;
  u["prompt_tokens"] = g.prompt_tokens;
  u["total_tokens"] = g.completion_tokens + g.prompt_tokens;
  u["prompt_tokens_details"] = {{"cached_tokens", g.cached_tokens}};
  return u;
}

OrderedJson ChunkBase(const FakeGeneration& g, OrderedJson choices) {
  OrderedJson c;
  c["choices"] = std::move(choices);
  c["created"] = g.created;
  c["id"] = g.id;
  c["model"] = g.model;
  c["system_fingerprint"] = g.build_info;
  c["object"] = "chat.completion.chunk";
  return c;
}

OrderedJson StreamChoice(const OrderedJson& finish, OrderedJson delta) {
  OrderedJson ch;
  ch["finish_reason"] = finish;
  ch["index"] = 0;
  ch["delta"] = std::move(delta);
  return OrderedJson::array({ch});
}

std::string Sse(const OrderedJson& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace

std::string FakeErrorBody(int code, const std::string& message, const std::string& type) {
  return OrderedJson{{"error", ErrorObject(code, message, type)}}.dump();
}

std::string FakeMiddlewareErrorBody(int code, const std::string& message, const std::string& type) {
  OrderedJson e;
  e["message"] = message;
  e["type"] = type;
  e["code"] = code;
  return OrderedJson{{"error", e}}.dump();
}

std::string FakeContextErrorBody(int n_prompt_tokens, int n_ctx) {
  OrderedJson e = ErrorObject(400,
                              "request (" + std::to_string(n_prompt_tokens) +
                                  " tokens) exceeds the available context size (" + std::to_string(n_ctx) +
                                  " tokens), try increasing it",
                              "exceed_context_size_error");
  e["n_prompt_tokens"] = n_prompt_tokens;
  e["n_ctx"] = n_ctx;
  return OrderedJson{{"error", e}}.dump();
}

OrderedJson FakeDefaultParams() {
  OrderedJson p;
  p["seed"] = 4294967295u;
  p["temperature"] = F(0.8);
  p["dynatemp_range"] = 0.0;
  p["dynatemp_exponent"] = 1.0;
  p["top_k"] = 40;
  p["top_p"] = F(0.95);
  p["min_p"] = F(0.05);
  p["top_n_sigma"] = -1.0;
  p["xtc_probability"] = 0.0;
  p["xtc_threshold"] = F(0.1);
  p["typical_p"] = 1.0;
  p["repeat_last_n"] = 64;
  p["repeat_penalty"] = 1.0;
  p["presence_penalty"] = 0.0;
  p["frequency_penalty"] = 0.0;
  p["dry_multiplier"] = 0.0;
  p["dry_base"] = 1.75;
  p["dry_allowed_length"] = 2;
  p["dry_penalty_last_n"] = 64;
  p["mirostat"] = 0;
  p["mirostat_tau"] = 5.0;
  p["mirostat_eta"] = F(0.1);
  p["adaptive_target"] = -1.0;
  p["adaptive_decay"] = F(0.9);
  p["max_tokens"] = -1;
  p["n_predict"] = -1;
  p["n_keep"] = 0;
  p["n_discard"] = 0;
  p["ignore_eos"] = false;
  p["stream"] = false;
  p["n_probs"] = 0;
  p["min_keep"] = 0;
  p["chat_format"] = "Content-only";
  p["reasoning_format"] = "none";
  p["reasoning_in_content"] = false;
  p["generation_prompt"] = "";
  p["samplers"] = {"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"};
  p["speculative.types"] = "none";
  p["timings_per_token"] = false;
  p["post_sampling_probs"] = false;
  p["backend_sampling"] = false;
  p["lora"] = OrderedJson::array();
  return p;
}

OrderedJson FakeTaskParams(const nlohmann::json& request, int n_predict, bool chat) {
  OrderedJson p = FakeDefaultParams();
  auto number = [&](const char* key, bool as_float) {
    auto it = request.find(key);
    if (it == request.end() || !it->is_number()) return;
    p[key] = as_float ? OrderedJson(F(it->get<double>())) : OrderedJson(it->get<long long>());
  };
  number("seed", false);
  number("temperature", true);
  number("top_k", false);
  number("top_p", true);
  number("min_p", true);
  number("presence_penalty", true);
  number("frequency_penalty", true);
  number("repeat_penalty", true);
  p["max_tokens"] = n_predict;
  p["n_predict"] = n_predict;
  if (request.contains("stream") && request["stream"].is_boolean()) p["stream"] = request["stream"].get<bool>();
  if (request.contains("ignore_eos") && request["ignore_eos"].is_boolean())
    p["ignore_eos"] = request["ignore_eos"].get<bool>();
  if (request.contains("top_logprobs") && request["top_logprobs"].is_number_integer())
    p["n_probs"] = request["top_logprobs"].get<int>();
  // /completion's n_probs; /v1/completions' logprobs (an integer there).
  if (!chat && request.contains("n_probs") && request["n_probs"].is_number_integer())
    p["n_probs"] = request["n_probs"].get<int>();
  if (!chat && request.contains("logprobs") && request["logprobs"].is_number_integer())
    p["n_probs"] = request["logprobs"].get<int>();
  if (chat) {
    p["chat_format"] = "peg-native";
    p["reasoning_format"] = "deepseek";
    p["generation_prompt"] = "<|im_start|>assistant\n";
  } else {
    p["reasoning_format"] = "deepseek";
  }
  return p;
}

OrderedJson FakeCompletionSettings(const OrderedJson& params) {
  OrderedJson out;
  for (const auto& [k, v] : params.items()) {
    out[k] = v;
    if (k == "dry_penalty_last_n") out["dry_sequence_breakers"] = {"\n", ":", "\"", "*"};
    if (k == "adaptive_decay") out["stop"] = OrderedJson::array();
    if (k == "stream") out["logit_bias"] = OrderedJson::array();
    if (k == "min_keep") {
      out["grammar"] = "";
      out["grammar_lazy"] = false;
      out["grammar_triggers"] = OrderedJson::array();
      out["preserved_tokens"] = OrderedJson::array();
    }
  }
  return out;
}

std::string FakePropsBody(const FakeServerFacts& f) {
  OrderedJson p;
  p["default_generation_settings"] = {{"params", FakeDefaultParams()}, {"n_ctx", f.n_ctx_slot}};
  p["total_slots"] = f.total_slots;
  p["model_alias"] = f.model_alias;
  p["model_ftype"] = "(guessed) all F32";
  p["model_path"] = f.model_path;
  p["modalities"] = {{"vision", false}, {"video", false}, {"audio", false}};
  p["media_marker"] = "<__media_4zr8PDFOwNG0BtXQPYnMKGZxdox5GokG__>";
  p["endpoint_slots"] = f.endpoint_slots;
  p["endpoint_props"] = false;
  p["endpoint_metrics"] = f.endpoint_metrics;
  p["ui"] = false;
  p["ui_settings"] = OrderedJson::object();
  p["chat_template"] = std::string(f.thinking_switch ? kFakeQwen3ChatTemplate : kFakeChatTemplate);
  p["chat_template_caps"] = {{"supports_object_arguments", false}, {"supports_parallel_tool_calls", false},
                             {"supports_preserve_reasoning", false}, {"supports_reasoning_effort", false},
                             {"supports_string_content", true},     {"supports_system_role", true},
                             {"supports_tool_calls", false},        {"supports_tools", false},
                             {"supports_typed_content", false}};
  p["bos_token"] = "<s>";
  p["eos_token"] = "</s>";
  p["build_info"] = f.build_info;
  p["is_sleeping"] = false;
  p["cors_proxy_enabled"] = false;
  return p.dump();
}

std::string FakeModelsBody(const FakeServerFacts& f, long long created) {
  OrderedJson details = {{"parent_model", ""}, {"format", "gguf"}, {"family", ""}, {"families", {""}},
                         {"parameter_size", ""}, {"quantization_level", ""}};
  OrderedJson model = {{"name", f.model_alias}, {"model", f.model_alias}, {"modified_at", ""}, {"size", ""},
                       {"digest", ""}, {"type", "model"}, {"description", ""}, {"tags", {""}},
                       {"capabilities", {"completion"}}, {"parameters", ""}, {"details", details}};
  OrderedJson meta = {{"vocab_type", 1}, {"n_vocab", 512}, {"n_ctx", f.n_ctx_slot}, {"n_ctx_train", f.n_ctx_train},
                      {"n_embd", 64}, {"n_params", 292800}, {"size", 1171200}, {"ftype", "(guessed) all F32"}};
  OrderedJson data = {{"id", f.model_alias}, {"aliases", {f.model_alias}}, {"tags", OrderedJson::array()},
                      {"object", "model"}, {"created", created}, {"owned_by", "llamacpp"}, {"meta", meta}};
  OrderedJson out;
  out["models"] = OrderedJson::array({model});
  out["object"] = "list";
  out["data"] = OrderedJson::array({data});
  return out.dump();
}

std::string FakeMetricsBody(const FakeMetrics& m) {
  struct Item {
    const char* name;
    const char* help;
    double value;
  };
  const std::vector<Item> counters = {
      {"prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens",
       static_cast<double>(m.prompt_tokens_total)},
      {"prompt_tokens_cached_total", "Number of prompt tokens reused from the cache",
       static_cast<double>(m.prompt_tokens_cached_total)},
      {"prompt_seconds_total", "Total time spent processing prompts", m.prompt_seconds_total},
      {"tokens_predicted_total", "Number of generation tokens processed", static_cast<double>(m.tokens_predicted_total)},
      {"tokens_predicted_seconds_total", "Total time spent generating tokens", m.tokens_predicted_seconds_total},
      {"n_decode_total", "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding",
       static_cast<double>(m.n_decode_total)},
      {"n_tokens_max", "Largest observed sequence length (prompt + generation)", static_cast<double>(m.n_tokens_max)},
      {"spec_decode_num_draft_tokens_total", "Speculative: Total draft tokens generated", 0},
      {"spec_decode_num_accepted_tokens_total", "Speculative: Total draft tokens accepted by the target model", 0},
      {"spec_decode_num_drafts_total", "Speculative: Total speculative decoding verification steps", 0},
  };
  const std::vector<Item> gauges = {
      {"prompt_tokens_seconds", "Average prompt throughput in tokens/s", m.prompt_tokens_seconds},
      {"predicted_tokens_seconds", "Average generation throughput in tokens/s", m.predicted_tokens_seconds},
      {"requests_processing", "Number of requests processing", static_cast<double>(m.requests_processing)},
      {"requests_deferred", "Number of requests deferred", static_cast<double>(m.requests_deferred)},
      {"n_busy_slots_per_decode", "Average number of busy slots per llama_decode() call", m.n_busy_slots_per_decode},
  };
  std::ostringstream out;  // default stream formatting, as llama-server prints the values
  auto add = [&out](const char* type, const std::vector<Item>& items) {
    for (const auto& i : items)
      out << "# HELP llamacpp:" << i.name << " " << i.help << "\n"
          << "# TYPE llamacpp:" << i.name << " " << type << "\n"
          << "llamacpp:" << i.name << " " << i.value << "\n";
  };
  add("counter", counters);
  add("gauge", gauges);
  return out.str();
}

OrderedJson FakeTimings(const FakeGeneration& g) {
  const int prompt_n = g.prompt_tokens - g.cached_tokens;
  const int steps = g.completion_tokens - 1;  // the first token comes with the prompt
  OrderedJson t;
  t["cache_n"] = g.cached_tokens;
  t["prompt_n"] = prompt_n;
  t["prompt_ms"] = g.prompt_ms;
  t["prompt_per_token_ms"] = prompt_n > 0 ? g.prompt_ms / prompt_n : 0.0;
  t["prompt_per_second"] = g.prompt_ms > 0 ? 1e3 / g.prompt_ms * prompt_n : 0.0;
  t["predicted_n"] = g.completion_tokens;
  t["predicted_ms"] = g.predicted_ms;
  t["predicted_per_token_ms"] = steps > 0 ? g.predicted_ms / steps : 0.0;
  t["predicted_per_second"] = steps > 0 && g.predicted_ms > 0 ? 1e3 / g.predicted_ms * steps : 0.0;
  return t;
}

std::string FakeChatBody(const FakeGeneration& g) {
  OrderedJson msg;
  msg["role"] = "assistant";
  msg["content"] = g.content;
  if (!g.reasoning_content.empty()) msg["reasoning_content"] = g.reasoning_content;
  OrderedJson choice;
  choice["finish_reason"] = g.finish_reason;
  choice["index"] = 0;
  choice["message"] = msg;
  OrderedJson out;
  out["choices"] = OrderedJson::array({choice});
  out["created"] = g.created;
  out["model"] = g.model;
  out["system_fingerprint"] = g.build_info;
  out["object"] = "chat.completion";
  out["usage"] = Usage(g);
  out["id"] = g.id;
  out["timings"] = FakeTimings(g);
  return out.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

namespace {

// One candidate as llama-server b10470 writes it: {id, token, bytes, logprob}.
OrderedJson Candidate(const FakeCandidate& c) {
  OrderedJson j;
  j["id"] = c.id;
  j["token"] = c.token;
  OrderedJson bytes = OrderedJson::array();
  for (unsigned char b : c.token) bytes.push_back(static_cast<int>(b));
  j["bytes"] = bytes;
  j["logprob"] = c.logprob;
  return j;
}

// The generated token with its top_logprobs (the first candidate: greedy).
OrderedJson TokenProbs(const FakeGeneration& g) {
  OrderedJson t = Candidate(g.top.front());
  OrderedJson top = OrderedJson::array();
  for (const auto& c : g.top) top.push_back(Candidate(c));
  t["top_logprobs"] = top;
  return t;
}

}  // namespace

std::string FakeOaiCompletionBody(const FakeGeneration& g) {
  OrderedJson choice;
  choice["text"] = g.content;
  choice["index"] = 0;
  choice["logprobs"] = nullptr;
  if (!g.top.empty()) choice["logprobs"] = {{"content", OrderedJson::array({TokenProbs(g)})}};
  choice["finish_reason"] = g.finish_reason;
  OrderedJson out;
  out["choices"] = OrderedJson::array({choice});
  out["created"] = g.created;
  out["model"] = g.model;
  out["system_fingerprint"] = g.build_info;
  out["object"] = "text_completion";
  out["usage"] = Usage(g);
  out["id"] = g.id;
  out["timings"] = FakeTimings(g);
  return out.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string FakeCompletionBody(const FakeGeneration& g, const OrderedJson& settings, const std::string& prompt,
                               int slot) {
  OrderedJson out;
  out["index"] = 0;
  out["content"] = g.content;
  out["tokens"] = OrderedJson::array();
  out["id_slot"] = slot;
  out["stop"] = true;
  out["model"] = g.model;
  out["tokens_predicted"] = g.completion_tokens;
  out["tokens_evaluated"] = g.prompt_tokens;
  out["generation_settings"] = settings;
  out["prompt"] = prompt;
  out["has_new_line"] = g.content.find('\n') != std::string::npos;
  out["truncated"] = false;
  out["stop_type"] = g.finish_reason == "length" ? "limit" : "eos";
  out["stopping_word"] = "";
  out["tokens_cached"] = g.prompt_tokens + g.completion_tokens - 1;
  out["timings"] = FakeTimings(g);
  if (!g.top.empty()) out["completion_probabilities"] = OrderedJson::array({TokenProbs(g)});
  return out.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string FakeCompletionEvent(const FakeGeneration& g, const std::string& piece, int predicted) {
  OrderedJson out;
  out["index"] = 0;
  out["content"] = piece;
  out["tokens"] = OrderedJson::array();
  out["stop"] = false;
  out["id_slot"] = -1;
  out["tokens_predicted"] = predicted;
  out["tokens_evaluated"] = g.prompt_tokens;
  return "data: " + out.dump(-1, ' ', false, OrderedJson::error_handler_t::replace) + "\n\n";
}

std::string FakeCompletionStreamEnd(const FakeGeneration& g, const OrderedJson& settings, const std::string& prompt) {
  FakeGeneration last = g;
  last.content.clear();  // streamed already: the last event carries the totals
  last.top.clear();
  return "data: " + FakeCompletionBody(last, settings, prompt, 0) + "\n\n";
}

std::string FakeChunkRole(const FakeGeneration& g) {
  OrderedJson delta;
  delta["role"] = "assistant";
  delta["content"] = nullptr;
  return Sse(ChunkBase(g, StreamChoice(nullptr, delta)));
}

std::string FakeChunkDelta(const FakeGeneration& g, const char* field, const std::string& piece) {
  OrderedJson delta;
  delta[field] = piece;
  OrderedJson c = ChunkBase(g, StreamChoice(nullptr, delta));
  return "data: " + c.dump(-1, ' ', false, OrderedJson::error_handler_t::replace) + "\n\n";
}

std::string FakeChunksEnd(const FakeGeneration& g, bool include_usage) {
  OrderedJson finish = ChunkBase(g, StreamChoice(g.finish_reason, OrderedJson::object()));
  std::string out;
  if (include_usage) {
    out = Sse(finish);
    OrderedJson last = ChunkBase(g, OrderedJson::array());
    last["usage"] = Usage(g);
    last["timings"] = FakeTimings(g);
    out += Sse(last);
  } else {
    finish["timings"] = FakeTimings(g);
    out = Sse(finish);
  }
  return out + "data: [DONE]\n\n";
}

}  // namespace evalrun::testing
