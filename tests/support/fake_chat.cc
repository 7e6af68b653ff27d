// The fake llama-server's generation endpoints: POST /v1/chat/completions
// (/chat/completions), /v1/completions (/completions) and /completion.
#include <algorithm>
#include <chrono>
#include <climits>
#include <ctime>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "tests/support/fake_server_impl.h"

namespace evalrun::testing {
namespace {

// The fake's nominal speeds for the timings when its service time is shorter
// (0 ms answers would claim millions of tokens per second).
constexpr double kPromptMsPerToken = 0.1;
constexpr double kPredictedMsPerToken = 0.25;

// The words a model that never stops goes on with ("length" scripts).
std::string Filler(int tokens) {
  static const char* kWords[] = {" and", " so", " on"};
  std::string out;
  for (int i = 0; i < tokens; ++i) out += kWords[i % 3];
  return out;
}

// The request's token limit (llama-server's n_predict and its aliases, the
// later keys winning as its schema does): -1 when none. False (and a 400
// in *res) when one is not an integer in [-1, INT32_MAX].
bool TokenLimit(const nlohmann::json& body, int* n_predict, FakeHttpResponse* res) {
  *n_predict = -1;
  for (const char* key : {"max_tokens", "max_completion_tokens", "n_predict"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number()) {
      FakeError(res, 400,
                std::string("Field '") + key + "': [json.exception.type_error.302] type must be number, but is " +
                    it->type_name(),
                "invalid_request_error");
      return false;
    }
    const double v = it->get<double>();
    if (v < -1 || v > INT_MAX) {
      FakeError(res, 400,
                std::string("Field '") + key + "': Value must be between -1 <= value <= 2147483647, but got " +
                    it->dump(),
                "invalid_request_error");
      return false;
    }
    *n_predict = static_cast<int>(v);
  }
  return true;
}

// A boolean field of the request (false when absent); false (and the
// schema's 400 in *res) when it is not a boolean.
bool Flag(const nlohmann::json& obj, const char* key, bool* out, FakeHttpResponse* res) {
  auto it = obj.find(key);
  *out = false;
  if (it == obj.end() || it->is_null()) return true;
  if (!it->is_boolean()) {
    FakeError(res, 400,
              std::string("Field '") + key + "': [json.exception.type_error.302] type must be boolean, but is " +
                  it->type_name(),
              "invalid_request_error");
    return false;
  }
  *out = it->get<bool>();
  return true;
}

// What the slot will send: the texts cut at `limit` tokens, the count, the
// finish reason, and one (field, piece) per generated token for a stream
// (the end-of-sequence token has none).
struct Plan {
  std::string reasoning, content, finish_reason;
  int n_gen = 0;
  std::vector<std::pair<const char*, std::string>> pieces;
};

// The request's stop strings ("stop": a string or an array of them).
std::vector<std::string> StopWords(const nlohmann::json& body) {
  std::vector<std::string> out;
  auto it = body.find("stop");
  if (it == body.end()) return out;
  if (it->is_string()) out.push_back(it->get<std::string>());
  if (it->is_array())
    for (const auto& w : *it)
      if (w.is_string() && !w.get<std::string>().empty()) out.push_back(w.get<std::string>());
  return out;
}

// `closing`: tokens generated after the reasoning and not shown (the end
// tag a reasoning budget forces, EndReasoningAtBudget).
Plan MakePlan(const FakeReply& reply, int limit, const std::vector<std::string>& stop, int closing = 0) {
  Plan p;
  const bool ends = reply.finish_reason != "length";
  const int t_shown = FakeTokenCount(reply.reasoning_content), t_reason = t_shown + closing;
  const int t_content = reply.completion_tokens >= 0 ? std::max(0, reply.completion_tokens - t_shown)
                                                     : FakeTokenCount(reply.content);
  // What the model writes, as far as the limit lets it.
  std::string text = reply.content;
  if (!ends) text += Filler(std::max(0, limit - t_reason - t_content));
  // A stop string ends it once the token that completes it is generated;
  // the text stops before the stop string (llama-server's STOP_TYPE_WORD).
  size_t stop_at = std::string::npos, stop_end = 0;
  for (const auto& w : stop) {
    const size_t at = text.find(w);
    if (at != std::string::npos && at < stop_at) {
      stop_at = at;
      stop_end = at + w.size();
    }
  }
  if (stop_at != std::string::npos) {
    int k = 0;
    for (const auto& t : FakeTokenize(text)) {
      ++k;
      if (t.end >= stop_end) break;
    }
    if (t_reason + k <= limit) {
      p.reasoning = reply.reasoning_content;
      p.content = text.substr(0, stop_at);
      p.n_gen = t_reason + k;
      p.finish_reason = "stop";
    }
  }
  if (p.finish_reason.empty() && ends && t_reason + t_content + 1 <= limit) {
    p.reasoning = reply.reasoning_content;
    p.content = reply.content;
    p.n_gen = t_reason + t_content + 1;  // and the end-of-sequence token
    p.finish_reason = "stop";
  } else if (p.finish_reason.empty()) {
    p.n_gen = limit;
    p.finish_reason = "length";
    p.reasoning = FakeFirstTokens(reply.reasoning_content, limit);
    const int room = std::max(0, limit - t_reason);
    p.content = ends && room >= t_content ? reply.content : FakeFirstTokens(text, room);
  }
  for (const auto& [field, part] : {std::pair<const char*, const std::string*>{"reasoning_content", &p.reasoning},
                                    {"content", &p.content}})
    for (const auto& t : FakeTokenize(*part)) p.pieces.emplace_back(field, part->substr(t.begin, t.end - t.begin));
  return p;
}

// reasoning_budget_tokens (or thinking_budget_tokens) >= 0: a reasoning
// longer than that ends after that many tokens and the answer follows. As
// llama-server's budget sampler (common/reasoning-budget.cpp, b10470) does,
// the server then forces the tokens of the request's
// reasoning_budget_message (default none) and of the template's end tag
// "</think>": generated tokens, counted in completion_tokens; the message
// is shown in reasoning_content, the end tag is not. Returns the end tag's
// tokens (0 when the budget did not end the reasoning).
int EndReasoningAtBudget(const nlohmann::json& body, FakeReply* reply) {
  for (const char* key : {"reasoning_budget_tokens", "thinking_budget_tokens"}) {
    auto it = body.find(key);
    if (it == body.end() || !it->is_number_integer() || it->get<int>() < 0) continue;
    const int budget = it->get<int>();
    if (FakeTokenCount(reply->reasoning_content) <= budget) return 0;
    auto msg = body.find("reasoning_budget_message");
    reply->reasoning_content = FakeFirstTokens(reply->reasoning_content, budget) +
                               (msg != body.end() && msg->is_string() ? msg->get<std::string>() : "");
    return FakeTokenCount("</think>");
  }
  return 0;
}

void Overflow(FakeHttpResponse* res) { FakeError(res, 500, "Context size has been exceeded.", "server_error"); }

double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// What a stream needs after the handler returned.
struct StreamJob {
  FakeSlots* slots;
  int task;
  std::shared_ptr<Plan> plan;
  std::shared_ptr<FakeGeneration> g;
  FakeSlots::Pace pace;
  int k;                      // tokens generated before the stream began
  bool include_usage;
  bool paced;                 // planted times: the timings are the fake's clock
  int ping_every_ms;
  std::chrono::steady_clock::time_point first;  // the first token
  std::function<bool()> gone;
  // /completion's stream (FakeCompletionEvent), not chat chunks: the
  // settings and prompt of its last event.
  bool raw = false;
  OrderedJson settings;
  std::string prompt;
  // The output parser refuses the text (Fault::kParserRefusal): after half
  // the pieces the stream ends with this error event, as llama-server
  // b10470's chat stream does at the first token its parser cannot take.
  std::string refusal;
};

// One generated piece as the stream writes it.
std::string StreamPiece(const StreamJob& j, int i) {
  const auto& [field, piece] = j.plan->pieces[i];
  return j.raw ? FakeCompletionEvent(*j.g, piece, i + 1) : FakeChunkDelta(*j.g, field, piece);
}

// The chunks of a streamed reply as llama-server writes them (stream.cc
// in evals/server cites the source): the role chunk with the first token,
// a chunk per token, ":" comments while no token comes for
// ping_every_ms (llama-server's --sse-ping-interval writes ":\n\n"), then
// the finish and usage chunks and [DONE].
void RunStream(const StreamJob& j, const FakeChunkWriter& write) {
  int sent = 0, done = j.k;
  bool ok = j.raw || write(FakeChunkRole(*j.g));
  auto last_event = std::chrono::steady_clock::now();
  const int refuse_at = j.refusal.empty() ? -1 : std::max<int>(1, static_cast<int>(j.plan->pieces.size()) / 2);
  for (;;) {
    const int shown = std::min<int>(done, static_cast<int>(j.plan->pieces.size()));
    for (; ok && sent < shown; ++sent) {
      if (sent == refuse_at) {
        j.slots->Release(j.task, true);
        write("data: " + j.refusal + "\n\n");
        return;
      }
      ok = write(StreamPiece(j, sent));
      last_event = std::chrono::steady_clock::now();
    }
    if (!ok) {
      j.slots->Release(j.task, true);  // the client left: llama-server cancels the task
      return;
    }
    if (done >= j.plan->n_gen) break;
    const double max_wait = j.ping_every_ms > 0 ? std::max(0.0, j.ping_every_ms - MsSince(last_event)) : -1;
    const auto o = j.slots->Generate(j.task, j.plan->n_gen, j.pace, done + 1, &done, j.gone, max_wait);
    if (o == FakeSlots::Outcome::kPending) {
      ok = write(":\n\n");
      last_event = std::chrono::steady_clock::now();
      continue;
    }
    if (o == FakeSlots::Outcome::kOverflow) {
      // An error after the first token ends the stream (no [DONE]).
      write("data: " + FakeErrorBody(500, "Context size has been exceeded.", "server_error") + "\n\n");
      return;
    }
    if (o != FakeSlots::Outcome::kDone) return;
  }
  const double ms = MsSince(j.first);
  j.g->predicted_ms =
      j.paced ? std::max(0.001, ms) : std::max({0.001, ms, (j.g->completion_tokens - 1) * kPredictedMsPerToken});
  j.slots->Release(j.task, true);
  write(j.raw ? FakeCompletionStreamEnd(*j.g, j.settings, j.prompt) : FakeChunksEnd(*j.g, j.include_usage));
}

}  // namespace

// A completion's "model" never stops (as the reference model, which almost
// never writes EOS), unless a chat answer for this same prompt text was
// refused by the output parser: then it writes that answer again.
FakeReply FakeServer::Impl::RefusedBefore(const std::string& prompt_text) {
  std::lock_guard<std::mutex> l(mu);
  auto it = parser_refused.find(prompt_text);
  return it == parser_refused.end() ? FakeReply{"", "", "length"} : it->second;
}

// Fault::kParserRefusal after the generation: the chat's parser refuses the
// text (and the fake remembers it for /completion), and so does
// /completion's own content-only parser when the request brings none.
void FakeServer::Impl::RefuseOutput(const std::string& prompt_text, bool chat, const FakeReply& reply,
                                    FakeHttpResponse* res) {
  if (!chat)
    return FakeError(res, 500, "The model produced output that does not match the expected Content-only format",
                     "server_error");
  {
    std::lock_guard<std::mutex> l(mu);
    parser_refused[prompt_text] = reply;
  }
  FakeError(res, 500, "The model produced output that does not match the expected peg-native format",
            "server_error");
}

// The same refusal as a stream's error event (the chat's remembered for
// /completion, as RefuseOutput does).
std::string FakeServer::Impl::StreamRefusal(const std::string& prompt_text, bool chat, const FakeReply& reply) {
  if (!chat)
    return FakeErrorBody(500, "The model produced output that does not match the expected Content-only format",
                         "server_error");
  {
    std::lock_guard<std::mutex> l(mu);
    parser_refused[prompt_text] = reply;
  }
  return FakeErrorBody(500, "The model produced output that does not match the expected peg-native format",
                       "server_error");
}

void FakeServer::Impl::Generate(const FakeHttpRequest& req, FakeHttpResponse* res, bool chat, bool oai) {
  if (chat) ++self->chat_requests_;
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(req.body);
  } catch (const nlohmann::json::exception& e) {
    return FakeError(res, 500, e.what(), "server_error");
  }
  std::string prompt_text;
  if (chat) {
    if (!body.is_object() || !body.contains("messages"))
      return FakeError(res, 400, "'messages' is required", "invalid_request_error");
    if (!body["messages"].is_array())
      return FakeError(res, 400, "Expected 'messages' to be an array", "invalid_request_error");
    for (const auto& m : body["messages"])
      if (!m.is_object() || ((!m.contains("role") || m["role"] != "assistant") && !m.contains("content")))
        return FakeError(res, 400, "All non-assistant messages must contain 'content'", "invalid_request_error");
    const FakeServerOptions o = options();
    if (o.drop_template_kwargs) body.erase("chat_template_kwargs");  // the gateway's doing
    prompt_text = FakeApplyTemplate(body["messages"], true, o.thinking_switch && FakeThinkingOff(body));
  } else {
    if (!body.is_object() || !body.contains("prompt"))
      return FakeError(res, 400, "[json.exception.out_of_range.403] key 'prompt' not found", "invalid_request_error");
    if (!body["prompt"].is_string())
      return FakeError(res, 400, "\"prompt\" must be a string (the fake takes no token arrays)",
                       "invalid_request_error");
    prompt_text = body["prompt"].get<std::string>();
  }
  int n_predict;
  if (!TokenLimit(body, &n_predict, res)) return;
  bool stream = false, include_usage = false, ignore_eos = false, cache_prompt = true;
  if (!Flag(body, "stream", &stream, res) || !Flag(body, "ignore_eos", &ignore_eos, res)) return;
  if (body.contains("cache_prompt") && !body["cache_prompt"].is_null() && !Flag(body, "cache_prompt", &cache_prompt, res))
    return;
  if (body.contains("stream_options") && body["stream_options"].is_object() &&
      !Flag(body["stream_options"], "include_usage", &include_usage, res))
    return;
  stream = stream && (chat || !oai);  // chat chunks, or /completion's events

  Responder respond;
  {
    std::lock_guard<std::mutex> l(mu);
    requests.push_back(body);  // chat and completions alike
    respond = responder;
  }
  // The prompt as the slot sees it: BOS, then the template's tokens.
  FakeSlots::Admission a;
  a.prompt_tokens = FakeTokenCount(prompt_text) + 1;
  a.prompt_hashes = {0x5b0b05ull};
  for (uint64_t h : FakeTokenHashes(prompt_text)) a.prompt_hashes.push_back(h);
  a.n_predict = n_predict;
  a.params = FakeTaskParams(body, n_predict, chat);
  a.cache_prompt = cache_prompt;
  // A completion's "model" never stops (as the reference model, which
  // almost never writes EOS); a chat's says what the Responder says.
  FakeReply reply = chat ? respond(body) : RefusedBefore(prompt_text);
  const int closing = chat ? EndReasoningAtBudget(body, &reply) : 0;
  if (ignore_eos) reply.finish_reason = "length";  // the model goes on to the limit
  // Read after the Responder, under the lock a test's accessors take, so
  // what the Responder touched happens before what the test reads next.
  const FakeServerOptions o = options();
  const FakeServerFacts facts = Facts();
  a.force_cache_n = o.force_cache_n;

  int task = -1, cached = 0;
  switch (slots.Admit(a, req.client_gone, &task, &cached)) {
    case FakeSlots::Outcome::kDone: break;
    case FakeSlots::Outcome::kOverflow: return Overflow(res);
    case FakeSlots::Outcome::kTooLong:
      res->status = 400;
      res->body = FakeContextErrorBody(a.prompt_tokens, slots.config().n_ctx_slot);
      return;
    default: res->no_reply = true; return;
  }
  if (reply.fault == Fault::kContextOverflow) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    slots.ForceOverflow();
    slots.Release(task, false);  // forgets that this task failed (its slot is already free)
    return Overflow(res);
  }
  const int n_ctx_slot = slots.config().n_ctx_slot;
  int limit = n_ctx_slot - a.prompt_tokens;  // llama-server stops when the slot is full
  if (n_predict >= 0) limit = std::min(limit, std::max(1, n_predict));
  auto plan = std::make_shared<Plan>(MakePlan(reply, limit, StopWords(body), closing));
  // Planted times: a prefill of the evaluated prompt tokens, then a steady decode.
  const bool paced = o.prefill_ms_per_token > 0 || o.prefill_base_ms > 0;
  FakeSlots::Pace pace;
  if (reply.fault == Fault::kHang) {
    pace.service_ms = reply.hang_ms;
  } else if (paced) {
    pace.first_ms = std::max(0.001, o.prefill_base_ms + (a.prompt_tokens - cached) * o.prefill_ms_per_token);
    pace.service_ms = pace.first_ms + std::max(0, plan->n_gen - 1) * o.ms_per_token;
  } else {
    pace.service_ms = reply.delay_ms + static_cast<int>(plan->n_gen * o.ms_per_token);
  }

  auto g = std::make_shared<FakeGeneration>();
  g->id = NextId();
  g->created = static_cast<long long>(std::time(nullptr));
  g->model = facts.model_alias;  // the request's "model" is ignored
  g->build_info = facts.build_info;
  g->prompt_tokens = a.prompt_tokens;
  g->cached_tokens = cached;
  g->prompt_ms = std::max(0.001, (a.prompt_tokens - cached) * kPromptMsPerToken);
  g->finish_reason = plan->finish_reason;
  g->completion_tokens = plan->n_gen;
  g->reasoning_content = plan->reasoning;
  g->content = plan->content;
  // n_probs (/completion) or logprobs (/v1/completions): the scripted
  // distribution of the next token (fake_logprobs.h); greedy, so the first
  // generated token is its most likely candidate.
  const int n_probs = !chat && a.params.contains("n_probs") ? a.params["n_probs"].get<int>() : 0;
  if (n_probs > 0) {
    g->top = FakeTopLogprobs(prompt_text, n_probs, o.logprob_shift);
    if (plan->n_gen == 1) g->content = g->top.front().token;
  }
  const auto t0 = std::chrono::steady_clock::now();  // the slot was taken just now

  const bool refused = reply.fault == Fault::kParserRefusal && (chat || !body.contains("chat_parser"));
  if (stream && (reply.fault == Fault::kNone || reply.fault == Fault::kParserRefusal)) {
    // The first token decides: an error before it is a plain reply.
    int k = 0;
    const auto first = slots.Generate(task, plan->n_gen, pace, 1, &k, req.client_gone);
    if (first == FakeSlots::Outcome::kOverflow) return Overflow(res);
    if (first != FakeSlots::Outcome::kDone) {
      res->no_reply = true;
      return;
    }
    if (paced) g->prompt_ms = std::max(0.001, MsSince(t0));  // the fake's own prefill time
    res->content_type = "text/event-stream";
    StreamJob job{&slots, task, plan, g, pace, k, include_usage, paced, o.ping_every_ms,
                  std::chrono::steady_clock::now(), req.client_gone, false, {}, {}, {}};
    job.raw = !chat;
    if (job.raw) {
      job.settings = FakeCompletionSettings(a.params);
      job.prompt = "<s>" + prompt_text;
    }
    if (refused) job.refusal = StreamRefusal(prompt_text, chat, reply);
    res->stream = [job](const FakeChunkWriter& write) { RunStream(job, write); };
    return;
  }

  int k = 0;
  switch (slots.Generate(task, plan->n_gen, pace, plan->n_gen, &k, req.client_gone)) {
    case FakeSlots::Outcome::kDone: break;
    case FakeSlots::Outcome::kOverflow: return Overflow(res);
    default: res->no_reply = true; return;
  }
  const double ms = MsSince(t0);
  if (paced) g->prompt_ms = pace.first_ms;
  g->predicted_ms = paced ? std::max(0.001, ms - pace.first_ms)
                          : std::max({0.001, ms, (g->completion_tokens - 1) * kPredictedMsPerToken});
  slots.Release(task, true);

  if (refused) return RefuseOutput(prompt_text, chat, reply, res);
  switch (reply.fault) {
    case Fault::kHttp500: return FakeError(res, 500, "Internal server error", "server_error");
    case Fault::kHttp503Busy: return FakeError(res, 503, "no slot available", "unavailable_error");
    case Fault::kTooLong400:
      res->status = 400;
      res->body = FakeContextErrorBody(a.prompt_tokens, a.prompt_tokens - 1);
      return;
    case Fault::kHttp503: return FakeError(res, 503, "Loading model", "unavailable_error");
    case Fault::kHttp429: return FakeError(res, 429, "Too many requests", "rate_limit_error");
    case Fault::kHttp400: return FakeError(res, 400, "bad request", "invalid_request_error");
    case Fault::kMalformedJson:
      res->body = "{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":\"A";
      return;
    case Fault::kErrorIn200:
      res->body = FakeErrorBody(500, "slot failed", "server_error");
      return;
    case Fault::kHugeBody:
      g->content = std::string(20 * 1024 * 1024, 'x') + (g->content.empty() ? "" : "\n" + g->content);
      break;
    default: break;
  }
  if (!chat) {
    res->body = oai ? FakeOaiCompletionBody(*g)
                    : FakeCompletionBody(*g, FakeCompletionSettings(a.params), "<s>" + prompt_text, 0);
    return;
  }
  res->body = FakeChatBody(*g);
  if (reply.fault == Fault::kEmptyChoices) {
    auto j = OrderedJson::parse(res->body);
    j["choices"] = OrderedJson::array();
    res->body = j.dump();
  }
  if (reply.fault == Fault::kResetMidBody) res->truncate_body_at = static_cast<long long>(res->body.size() / 2);
}

}  // namespace evalrun::testing
