// Reading one HTTP/1.1 reply from the bytes of a connection, as a pure
// state machine over bytes (no sockets: the transport in socket_transport.cc
// feeds it what recv(2) returns; the fuzzer feeds it anything).
//
// A reply belongs to its request only if it is exactly one reply: a
// status line and headers, then a body framed by Content-Length, by
// chunked Transfer-Encoding, or (with neither) by the server closing the
// connection. Interim 1xx replies (100 Continue) before it are skipped.
// What is refused (kBad, error() says why): a status line that is not
// "HTTP/1.x NNN", a header line without ':', a Content-Length that is not
// digits or given twice with different values, a Transfer-Encoding other
// than chunked, both framings at once, a bad chunk size, headers over 64
// KiB, a body over the reader's limit (too_big()). Bytes fed after the
// reply ended are counted in extra(): the caller must not use a reply
// with extra() > 0 nor read another reply from that connection (a second
// reply for the same request, or a Content-Length shorter than the body,
// would otherwise be read as the next request's reply).
//
// The result does not depend on how the bytes are split between Feed
// calls. A streaming caller takes the body as it comes (TakeBody) once
// head_done(); the limit then holds over all the body bytes, taken or not.
// Not thread-safe; one reader per reply.
#ifndef EVALRUN_EVALS_SERVER_HTTP_REPLY_H_
#define EVALRUN_EVALS_SERVER_HTTP_REPLY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace evalrun {

class HttpReplyReader {
 public:
  enum class State { kNeedMore, kDone, kBad };
  static constexpr size_t kMaxHeadBytes = size_t{64} << 10;

  explicit HttpReplyReader(size_t max_body_bytes) : max_body_(max_body_bytes) {}

  // Takes the next bytes of the connection. After kDone, bytes only add to
  // extra(); after kBad they are ignored.
  State Feed(std::string_view data);
  // The server closed the connection: kDone for a body framed by the close,
  // kBad ("the connection closed before the reply ended") otherwise, the
  // state unchanged when it had ended already.
  State End();

  State state() const { return state_; }
  bool started() const { return seen_ > 0; }  // any byte fed
  int status() const { return status_; }
  const std::string& body() const { return body_; }  // empty once kBad
  std::string& mutable_body() { return body_; }
  // The final (non-1xx) status line and headers have been read.
  bool head_done() const { return status_ >= 200 && phase_ != Phase::kHead; }
  // Moves the body read so far (de-chunked) out; counted against the limit
  // as if kept.
  std::string TakeBody() {
    taken_ += body_.size();
    std::string out;
    out.swap(body_);
    return out;
  }
  const std::string& retry_after() const { return retry_after_; }  // the header's value, "" when absent
  // The connection may carry another request after this reply.
  bool keep_alive() const { return keep_alive_; }
  size_t extra() const { return extra_; }
  bool too_big() const { return too_big_; }
  const std::string& error() const { return error_; }

 private:
  enum class Phase { kHead, kBody, kUntilClose, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };
  State Bad(std::string why);
  bool ParseHead(std::string_view head);
  bool ParseHeader(std::string_view line);
  void StartBody();
  size_t TakeBody(std::string_view data, size_t n);
  // One step of the phase on the bytes `in` (not yet used); the bytes it
  // used, 0 when it needs more (or the reply went bad).
  size_t Step(std::string_view in);
  size_t StepChunkLine(std::string_view in);

  const size_t max_body_;
  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kHead;
  std::string buf_;        // bytes of a line-framed phase not yet used
  size_t scanned_ = 0;     // of buf_, already searched for the end of the head
  uint64_t seen_ = 0;
  int status_ = 0;
  int64_t content_length_ = -1;
  bool chunked_ = false;
  bool keep_alive_ = true;
  uint64_t remaining_ = 0;  // of the body or of the current chunk
  std::string body_;
  std::string retry_after_;
  size_t taken_ = 0;        // body bytes moved out by TakeBody
  size_t extra_ = 0;
  bool too_big_ = false;
  std::string error_;
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_SERVER_HTTP_REPLY_H_
