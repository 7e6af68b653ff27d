// Streaming chat completions, timed on the client's clock (measuring
// generation speed). llama-server's /v1/chat/completions with
// "stream": true answers text/event-stream: `data: {chunk}` events,
// `: ping`-style comment lines, and `data: [DONE]` at the end; with
// stream_options.include_usage the last chunk before [DONE] carries `usage`
// (and llama-server adds `timings`). One chunk is not one token: token
// counts come from usage/timings only.
//
// Thread-safety: an SseReader and a StreamingChat belong to one thread.
#ifndef EVALRUN_EVALS_SERVER_STREAM_H_
#define EVALRUN_EVALS_SERVER_STREAM_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "evals/base/clock.h"
#include "evals/server/http.h"
#include "evals/server/server_config.h"
#include "evals/server/types.h"

namespace evalrun {

// Splits a text/event-stream body, fed in pieces as they arrive (a piece may
// end anywhere, inside a line or a CRLF), into events: the `data:` lines of
// one event joined by "\n" (one leading space after the colon dropped), an
// event ending at a blank line. Comment lines (starting with ':') and other
// fields (event:, id:, retry:) are skipped. Lines end at LF, CRLF or a lone
// CR (the SSE grammar), wherever the pieces split them. A line, or one
// event's data, longer than `max_line` bytes makes the reader fail
// (overflowed()), so a broken server cannot fill the memory.
class SseReader {
 public:
  explicit SseReader(size_t max_line = size_t{16} << 20);
  // Calls on_event(data) for each event completed by `bytes` (the view
  // lives until on_event returns); on_event
  // returns false to stop (the rest of the piece is dropped). Returns false
  // once stopped or overflowed.
  bool Feed(std::string_view bytes, const std::function<bool(std::string_view data)>& on_event);
  bool overflowed() const { return overflowed_; }
  int comments() const { return comments_; }  // ": ping" lines seen

 private:
  size_t max_line_;
  std::string line_;   // the unfinished line
  std::string data_;   // the event so far
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte fed was a CR (an LF next belongs to it)
  bool overflowed_ = false;
  bool stopped_ = false;
  int comments_ = 0;
};

// When things happened during one streamed request, in seconds on the
// client's monotonic clock since the request's last byte was written to
// the socket (the transport's RequestSent hook, http.h; a transport that
// cannot say: since the request was handed to it) (-1: did not happen).
// Each piece of the reply is time-stamped when the read that delivered it
// returns, before it is parsed, so parsing never delays a time.
struct StreamTiming {
  double first_byte_s = -1;   // the first body byte of the reply
  // The first chunk of the answer: the first with a choice (llama-server
  // sends its role chunk with the first generated token, before the chat
  // parser has a delta to show) or with content or reasoning text: the
  // time to first token as a bare streaming client takes it.
  double first_token_s = -1;
  double last_token_s = -1;   // the last chunk with content or reasoning text
  double done_s = -1;         // [DONE] (or the end of the body)
  // The arrival of every chunk that carried content or reasoning text, in
  // order (for within-request inter-chunk gaps; a chunk may hold several
  // tokens).
  std::vector<double> text_chunk_s;
  double first_text_s = -1;   // the first chunk with content or reasoning text
  double sent_s = -1;         // when the request was written, since it was handed to the
                              // transport (connect included); -1: the transport cannot say
};

// One request a StreamedReply's exchange sent before its own: a refused
// chat stream, the /apply-template call of the raw route.
struct SentBefore {
  std::string path, body;  // the exact body
  bool streamed = false;
};

struct StreamedReply {
  // kOk, kFailed, kTooLong, kCapacity (HTTP 500 "Context size has been
  // exceeded"), kUnreachable (nothing listens, or 503 "Loading model"),
  // kCancelled.
  CallStatus status = CallStatus::kFailed;
  int http_status = 0;
  std::string error;          // for every status but kOk, naming what was wrong
  // content, reasoning (reasoning_content deltas, or a leading <think> block
  // of the content), finish_reason, prompt_tokens / completion_tokens from
  // `usage` (-1 when no usage chunk came), `timings` (llama-server) of the
  // last chunk that had them, reply_id.
  Completion completion;
  StreamTiming timing;
  std::string path, body;     // what was sent (the request's path and exact body)
  bool raw_route = false;     // sent over /completion (SendRaw), not the chat route
  std::string refused_chat_error;  // raw_route after a refused chat stream: that stream's error
  // What was sent for this answer before `path`/`body`, in order (the raw
  // route's /apply-template; a refused chat stream, set by the caller that
  // sent it): another client replaying the request sends these too.
  std::vector<SentBefore> sent_before;
  int chunks = 0;             // data events with a JSON chunk
  int comments = 0;           // comment lines skipped (": ping", ":")
  bool saw_done = false;      // `data: [DONE]` arrived
};

// Sends one streamed chat request and times it. No retries: a timed step
// that fails says so rather than measuring a second attempt. The body is
// ChatRequestBody(prompt, model) (openai_wire.h) with "stream": true,
// "stream_options": {"include_usage": true}, and `extra`'s keys set on top
// (e.g. "ignore_eos": true, "n_predict"); `extra` may be null.
// A reply that is not an event stream of chat chunks (an error object, a
// chunk that is not JSON, no [DONE] before the connection closed) is
// kFailed with the reason; HTTP 400 exceed_context_size_error is kTooLong
// (ClassifyRefusal, client.h, says what an error status means). Every
// error names the request ("POST /v1/chat/completions (streamed): ...")
// and passes through Redact (redact.h). `cancel` (may be null) is checked
// before sending and at every piece: a cancelled request stops reading
// (kCancelled). The timing is on `clock`; `timeout_s` bounds the whole
// exchange (HttpTransport::PostStreamed).
class StreamingChat {
 public:
  StreamingChat(std::unique_ptr<HttpTransport> transport, const ServerConfig& server,
                Clock* clock = RealClock::Default());
  StreamedReply Send(const Prompt& prompt, const nlohmann::json* extra, double timeout_s,
                     CancelToken* cancel);
  // The same prompt over llama-server's raw route: POST /apply-template
  // (not timed) for its text, then POST /completion streamed with
  // RawCompletionBody (raw_fallback.h: the accept-anything chat_parser),
  // "stream": true and `extra`'s keys. For a server whose output parser
  // refuses the chat stream (llama-server b10470 ends it with an error
  // event at the first token it cannot parse): the raw route streams every
  // token. Its events are {"content", "stop", ...}, the last one with
  // "stop": true, tokens_evaluated / tokens_predicted, stop_type and
  // timings; the first token is its first event.
  StreamedReply SendRaw(const Prompt& prompt, const nlohmann::json* extra, double timeout_s, CancelToken* cancel);

 private:
  StreamedReply Exchange(const std::string& path, std::string body, bool raw, bool opens_think, double timeout_s,
                         CancelToken* cancel);

  std::unique_ptr<HttpTransport> transport_;
  ServerConfig server_;
  Clock* clock_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_STREAM_H_
