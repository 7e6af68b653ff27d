// One timed request of the speed part and its record in speed/samples.jsonl.
//
// A request is a streamed chat completion (evals/server/stream.h) with
// "ignore_eos": true (every answer is exactly max_tokens tokens),
// cache_prompt false, and a prompt of an exact token count
// (evals/benchmarks/speed/speed_prompt.h). Its record keeps what it was asked and what
// came back, raw: step, role (cold, warmup, measured), attempt, round,
// concurrency, prompt id, target_prompt_tokens and the server's
// prompt_tokens, completion_tokens, prompt sha256 and length, the salt's
// sha256, the client's times (send offset within the round, first byte,
// first token, last token, done), llama-server's timings, the rates on
// both clocks (evals/benchmarks/speed/speed_stats.h), the within-request chunk gaps,
// and `marks`: what makes the measurement doubtful (a prompt_tokens other
// than the target, cache_n > 0, an answer shorter than max_tokens, a
// failure). Each request also has its exact body in speed/requests.jsonl
// (RequestBodyRecords), joined to its record by `seq`, with whatever was sent
// before it for the same answer (a chat stream the server's parser refused,
// the raw route's /apply-template), so that another client can send the very
// same requests in the same order (scripts/bare_stream_client.py).
//
// Thread-safety: a SpeedSender belongs to one thread; RequestRecord is pure.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_REQUEST_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_REQUEST_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/cancel.h"
#include "evals/server/http.h"
#include "evals/server/server_config.h"
#include "evals/server/stream.h"
#include "evals/server/types.h"

namespace evalrun {

// Sends one streamed request; StreamingChat in production, a fake in tests.
class SpeedSender {
 public:
  virtual ~SpeedSender() = default;
  virtual StreamedReply Send(const Prompt& prompt, const nlohmann::json& extra, double timeout_s,
                             CancelToken* cancel) = 0;
};
using SpeedSenderFactory = std::function<std::unique_ptr<SpeedSender>()>;

// Senders over StreamingChat, each on a fresh transport from `transports`.
SpeedSenderFactory StreamingSenders(TransportFactory transports, ServerConfig server);

// What one request asked.
struct SpeedRequest {
  uint64_t seq = 0;       // the request's number in the run (1, 2, ...): joins its two records
  std::string step;       // "decode/code", "prefill/2048", "conc/C4", "ctx/16384", "cold", "warmup"
  std::string role;       // "cold", "warmup", "measured"
  std::string prompt_id;  // "code", "prose"
  int attempt = 1;
  int round = 1;
  int concurrency = 1;
  int target_prompt_tokens = 0;
  int max_tokens = 0;
  std::string message;    // the one user message
  std::string salt;
};

// The body's extras: ignore_eos, and nothing the prompt's params do not say.
nlohmann::json SpeedExtra();

// One line of speed/requests.jsonl: {seq, step, role, attempt, round,
// concurrency, prompt_id, path, body (the JSON text sent, as a string),
// timed (the request the record in samples.jsonl times), streamed}.
nlohmann::json RequestBodyRecord(const SpeedRequest& req, const std::string& path, const std::string& body,
                                 bool timed, bool streamed);

// The lines of one answered request, in the order they were sent: what
// reply.sent_before holds (a refused chat stream, /apply-template; not
// timed), then the timed request. None when nothing was sent.
std::vector<nlohmann::json> RequestBodyRecords(const SpeedRequest& req, const StreamedReply& reply);

// The record of `req` answered by `reply`; `send_s`: when it was sent, in
// seconds since its round began.
nlohmann::json RequestRecord(const SpeedRequest& req, const StreamedReply& reply, double send_s);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_REQUEST_H_
