#include "evals/benchmarks/speed/speed_request.h"

#include "evals/base/sha256.h"
#include "evals/benchmarks/speed/speed_stats.h"
#include "evals/server/openai_wire.h"
#include "evals/server/retry_cause.h"

namespace evalrun {
namespace {

class StreamingSender : public SpeedSender {
 public:
  StreamingSender(std::unique_ptr<HttpTransport> t, const ServerConfig& server) : chat_(std::move(t), server) {}
  // The chat route; a stream the server's output parser refused (its
  // error event: the answer cut at the first token it could not parse) is
  // sent again over the raw route, which streams every token.
  StreamedReply Send(const Prompt& prompt, const nlohmann::json& extra, double timeout_s,
                     CancelToken* cancel) override {
    StreamedReply r = chat_.Send(prompt, &extra, timeout_s, cancel);
    if (r.status != CallStatus::kFailed || !IsServerParseError(500, r.error)) return r;
    StreamedReply raw = chat_.SendRaw(prompt, &extra, timeout_s, cancel);
    raw.refused_chat_error = r.error;
    raw.sent_before.insert(raw.sent_before.begin(), SentBefore{r.path, r.body, true});
    return raw;
  }

 private:
  StreamingChat chat_;
};

nlohmann::json OrNull(double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

// Request sent to first token minus the server's own prompt time: the wait
// in the server's queue (and the transport); null without either.
nlohmann::json QueueJson(double first_token_s, const ServerTimings& t) {
  if (first_token_s < 0 || !t.present || t.prompt_ms < 0) return nullptr;
  return first_token_s - t.prompt_ms / 1000.0;
}

nlohmann::json TimingsJson(const ServerTimings& t) {
  if (!t.present) return nullptr;
  return {{"prompt_n", t.prompt_n},         {"prompt_ms", t.prompt_ms},     {"predicted_n", t.predicted_n},
          {"predicted_ms", t.predicted_ms}, {"cache_n", t.cache_n},         {"prompt_per_second", t.prompt_per_second},
          {"predicted_per_second", t.predicted_per_second}};
}

const char* StatusName(CallStatus s) {
  switch (s) {
    case CallStatus::kOk: return "ok";
    case CallStatus::kTooLong: return "too_long";
    case CallStatus::kUnreachable: return "unreachable";
    case CallStatus::kCancelled: return "cancelled";
    case CallStatus::kCapacity: return "capacity";
    default: return "failed";
  }
}

std::vector<std::string> Marks(const SpeedRequest& req, const StreamedReply& r) {
  std::vector<std::string> m;
  const Completion& c = r.completion;
  if (r.status != CallStatus::kOk) {
    m.push_back("failed: " + r.error);
    return m;
  }
  if (c.prompt_tokens != req.target_prompt_tokens)
    m.push_back("the server counted " + std::to_string(c.prompt_tokens) + " prompt tokens, not the " +
                std::to_string(req.target_prompt_tokens) + " asked");
  if (c.timings.present && c.timings.cache_n > 0)
    m.push_back("the server reused its cache (cache_n = " + std::to_string(static_cast<long long>(c.timings.cache_n)) +
                ")");
  if (c.completion_tokens != req.max_tokens)
    m.push_back("the answer has " + std::to_string(c.completion_tokens) + " tokens, not max_tokens " +
                std::to_string(req.max_tokens) + " (ignore_eos not honoured?)");
  if (!c.timings.present) m.push_back("the server sent no timings: its own clock is missing");
  if (r.raw_route)
    m.push_back("sent over /completion (raw text, an accept-anything chat_parser): the chat stream was refused by the "
                "server's output parser");
  return m;
}

}  // namespace

SpeedSenderFactory StreamingSenders(TransportFactory transports, ServerConfig server) {
  return [transports = std::move(transports), server = std::move(server)]() -> std::unique_ptr<SpeedSender> {
    return std::make_unique<StreamingSender>(transports(), server);
  };
}

nlohmann::json SpeedExtra() { return {{"ignore_eos", true}}; }

nlohmann::json RequestBodyRecord(const SpeedRequest& req, const std::string& path, const std::string& body,
                                 bool timed, bool streamed) {
  return {{"seq", req.seq},         {"step", req.step},   {"role", req.role},
          {"attempt", req.attempt}, {"round", req.round}, {"concurrency", req.concurrency},
          {"prompt_id", req.prompt_id}, {"path", path},   {"body", body},
          {"timed", timed},         {"streamed", streamed}};
}

std::vector<nlohmann::json> RequestBodyRecords(const SpeedRequest& req, const StreamedReply& reply) {
  std::vector<nlohmann::json> out;
  if (reply.body.empty()) return out;
  for (const SentBefore& b : reply.sent_before) out.push_back(RequestBodyRecord(req, b.path, b.body, false, b.streamed));
  out.push_back(RequestBodyRecord(req, reply.path, reply.body, true, true));
  return out;
}

nlohmann::json RequestRecord(const SpeedRequest& req, const StreamedReply& reply, double send_s) {
  const Completion& c = reply.completion;
  const StreamTiming& t = reply.timing;
  nlohmann::json j;
  j["seq"] = req.seq;
  j["route"] = reply.raw_route ? "completion" : "chat";
  if (!reply.refused_chat_error.empty()) j["refused_chat"] = reply.refused_chat_error;
  j["step"] = req.step;
  j["role"] = req.role;
  j["attempt"] = req.attempt;
  j["round"] = req.round;
  j["concurrency"] = req.concurrency;
  j["prompt_id"] = req.prompt_id;
  j["target_prompt_tokens"] = req.target_prompt_tokens;
  j["prompt_tokens"] = c.prompt_tokens >= 0 ? nlohmann::json(c.prompt_tokens) : nlohmann::json(nullptr);
  j["completion_tokens"] = c.completion_tokens >= 0 ? nlohmann::json(c.completion_tokens) : nlohmann::json(nullptr);
  j["max_tokens"] = req.max_tokens;
  j["prompt_sha256"] = Sha256Hex(req.message);
  j["prompt_bytes"] = req.message.size();
  j["salt_sha256"] = Sha256Hex(req.salt);
  j["status"] = StatusName(reply.status);
  j["http_status"] = reply.http_status;
  j["error"] = reply.status == CallStatus::kOk ? nlohmann::json(nullptr) : nlohmann::json(reply.error);
  j["finish_reason"] = c.finish_reason;
  j["chunks"] = reply.chunks;
  j["times"] = {{"send_s", send_s},
                {"first_byte_s", OrNull(t.first_byte_s)},
                {"first_token_s", OrNull(t.first_token_s)},
                {"last_token_s", OrNull(t.last_token_s)},
                {"done_s", OrNull(t.done_s)}};
  j["timings"] = TimingsJson(c.timings);
  const RequestRates r = ComputeRates(c.prompt_tokens, c.completion_tokens, t.first_token_s, t.last_token_s,
                                      c.timings.prompt_n, c.timings.prompt_ms, c.timings.predicted_n,
                                      c.timings.predicted_ms);
  j["rates"] = {{"decode_client_tps", OrNull(r.client_decode_tps)},
                {"decode_server_tps", OrNull(r.server_decode_tps)},
                {"prefill_client_tps", OrNull(r.client_prefill_tps)},
                {"prefill_server_tps", OrNull(r.server_prefill_tps)},
                {"ttft_s", OrNull(t.first_token_s)},
                {"queue_s", QueueJson(t.first_token_s, c.timings)},
                {"e2e_s", OrNull(t.done_s)}};
  j["chunk_gaps"] = ChunkGapsJson(t.text_chunk_s);
  j["marks"] = Marks(req, reply);
  return j;
}

}  // namespace evalrun
