#include "evals/server/http_reply.h"

#include <algorithm>
#include <cstring>

#include "evals/base/ascii_case.h"

namespace evalrun {
namespace {

constexpr size_t kMaxLineBytes = 4096;  // a chunk-size or trailer line

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Where the head ends in `s` (the index after the '\n' of its empty line),
// searching from `from`; 0 when it has not ended yet.
size_t HeadEnd(std::string_view s, size_t from) {
  for (size_t i = from; i < s.size();) {
    const void* p = std::memchr(s.data() + i, '\n', s.size() - i);
    if (p == nullptr) return 0;
    const size_t nl = static_cast<size_t>(static_cast<const char*>(p) - s.data());
    if (nl >= 1 && s[nl - 1] == '\n') return nl + 1;
    if (nl >= 2 && s[nl - 1] == '\r' && s[nl - 2] == '\n') return nl + 1;
    i = nl + 1;
  }
  return 0;
}

}  // namespace

HttpReplyReader::State HttpReplyReader::Bad(std::string why) {
  state_ = State::kBad;
  body_.clear();  // a bad reply has no body, however much of it came
  if (error_.empty()) error_ = std::move(why);
  return state_;
}

bool HttpReplyReader::ParseHeader(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') return Bad("a folded header line"), false;
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return Bad("a header line without a name and ':'"), false;
  const std::string_view name = line.substr(0, colon), value = Trim(line.substr(colon + 1));
  if (name.find_first_of(" \t") != std::string_view::npos) return Bad("a header name with a space"), false;
  if (EqualsNoCase(name, "content-length")) {
    if (value.empty() || value.size() > 18) return Bad("a Content-Length that is not a number"), false;
    int64_t n = 0;
    for (char c : value) {
      if (!IsDigit(c)) return Bad("a Content-Length that is not a number"), false;
      n = n * 10 + (c - '0');
    }
    if (content_length_ >= 0 && content_length_ != n) return Bad("two different Content-Lengths"), false;
    content_length_ = n;
  } else if (EqualsNoCase(name, "transfer-encoding")) {
    if (!EqualsNoCase(value, "chunked")) return Bad("an unsupported Transfer-Encoding"), false;
    chunked_ = true;
  } else if (EqualsNoCase(name, "connection")) {
    for (size_t start = 0; start <= value.size();) {
      size_t comma = value.find(',', start);
      if (comma == std::string_view::npos) comma = value.size();
      const std::string_view token = Trim(value.substr(start, comma - start));
      if (EqualsNoCase(token, "close")) keep_alive_ = false;
      if (EqualsNoCase(token, "keep-alive")) keep_alive_ = true;
      start = comma + 1;
    }
  } else if (EqualsNoCase(name, "retry-after")) {
    retry_after_.assign(value.substr(0, 64));
  }
  return true;
}

bool HttpReplyReader::ParseHead(std::string_view head) {
  status_ = 0;
  content_length_ = -1;
  chunked_ = false;
  retry_after_.clear();
  size_t nl = head.find('\n');
  std::string_view first = head.substr(0, nl);
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
  // "HTTP/1.1 200 OK" (the reason may be empty or absent).
  if (first.size() < 12 || first.compare(0, 7, "HTTP/1.") != 0 || !IsDigit(first[7]) || first[8] != ' ' ||
      !IsDigit(first[9]) || !IsDigit(first[10]) || !IsDigit(first[11]) || (first.size() > 12 && first[12] != ' '))
    return Bad("the reply does not start with an HTTP/1.x status line"), false;
  status_ = (first[9] - '0') * 100 + (first[10] - '0') * 10 + (first[11] - '0');
  if (status_ < 100) return Bad("an HTTP status below 100"), false;
  keep_alive_ = first[7] != '0';  // HTTP/1.0 closes unless it says keep-alive
  for (size_t pos = nl + 1; pos < head.size();) {
    size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    if (line.empty()) break;
    if (!ParseHeader(line)) return false;
  }
  return true;
}

void HttpReplyReader::StartBody() {
  if (status_ >= 100 && status_ < 200) {
    if (status_ == 101) {
      Bad("101 Switching Protocols is not a reply");
      return;
    }
    phase_ = Phase::kHead;  // an interim reply (100 Continue): the real one follows
    return;
  }
  if (chunked_ && content_length_ >= 0) {
    Bad("both Content-Length and chunked Transfer-Encoding");
    return;
  }
  if (status_ == 204 || status_ == 304) {
    phase_ = Phase::kDone;
  } else if (chunked_) {
    phase_ = Phase::kChunkSize;
  } else if (content_length_ >= 0) {
    if (static_cast<uint64_t>(content_length_) > max_body_) {
      too_big_ = true;
      Bad("the reply is larger than the limit");
      return;
    }
    remaining_ = static_cast<uint64_t>(content_length_);
    body_.reserve(static_cast<size_t>(std::min<uint64_t>(remaining_, uint64_t{1} << 20)));
    phase_ = remaining_ == 0 ? Phase::kDone : Phase::kBody;
  } else {
    phase_ = Phase::kUntilClose;
    keep_alive_ = false;
  }
  if (phase_ == Phase::kDone) state_ = State::kDone;
}

size_t HttpReplyReader::TakeBody(std::string_view data, size_t n) {
  if (taken_ + body_.size() + n > max_body_) {
    too_big_ = true;
    Bad("the reply is larger than the limit");
    return 0;
  }
  body_.append(data.data(), n);
  return n;
}

HttpReplyReader::State HttpReplyReader::Feed(std::string_view data) {
  seen_ += data.size();
  if (state_ == State::kDone) {
    extra_ += data.size();
    return state_;
  }
  if (state_ == State::kBad || data.empty()) return state_;
  const bool buffered = !buf_.empty();
  if (buffered) buf_.append(data.data(), data.size());
  const std::string_view in = buffered ? std::string_view(buf_) : data;
  size_t pos = 0;
  while (state_ == State::kNeedMore && pos < in.size()) {
    const size_t used = Step(in.substr(pos));
    if (used == 0) break;
    pos += used;
  }
  if (state_ == State::kDone) extra_ += in.size() - pos;
  if (state_ != State::kNeedMore || pos == in.size()) {
    buf_.clear();
  } else if (buffered) {
    buf_.erase(0, pos);
  } else {
    buf_.assign(in.substr(pos));
  }
  return state_;
}

size_t HttpReplyReader::Step(std::string_view in) {
  switch (phase_) {
    case Phase::kHead: {
      const size_t end = HeadEnd(in, scanned_ >= 2 ? scanned_ - 2 : 0);
      if (end == 0) {
        scanned_ = in.size();
        if (in.size() > kMaxHeadBytes) Bad("headers larger than 64 KiB");
        return 0;
      }
      scanned_ = 0;
      if (end > kMaxHeadBytes) return Bad("headers larger than 64 KiB"), 0;
      if (!ParseHead(in.substr(0, end))) return 0;
      StartBody();
      return end;
    }
    case Phase::kBody:
    case Phase::kChunkData: {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), remaining_));
      if (TakeBody(in, n) != n) return 0;
      remaining_ -= n;
      if (remaining_ == 0) {
        phase_ = phase_ == Phase::kBody ? Phase::kDone : Phase::kChunkEnd;
        if (phase_ == Phase::kDone) state_ = State::kDone;
      }
      return n;
    }
    case Phase::kUntilClose:
      return TakeBody(in, in.size());
    case Phase::kChunkEnd:
      if (in[0] == '\n') {
        phase_ = Phase::kChunkSize;
        return 1;
      }
      if (in[0] != '\r') return Bad("a chunk not followed by CRLF"), 0;
      if (in.size() < 2) return 0;
      if (in[1] != '\n') return Bad("a chunk not followed by CRLF"), 0;
      phase_ = Phase::kChunkSize;
      return 2;
    case Phase::kChunkSize:
    case Phase::kTrailers:
      return StepChunkLine(in);
    case Phase::kDone:
      return 0;
  }
  return 0;
}

// A chunk-size line ("1a;ext=x") or a trailer line (the empty one ends the
// reply).
size_t HttpReplyReader::StepChunkLine(std::string_view in) {
  const size_t nl = in.find('\n');
  if (nl == std::string_view::npos) {
    if (in.size() > kMaxLineBytes) Bad("a chunk-size or trailer line over 4 KiB");
    return 0;
  }
  if (nl + 1 > kMaxLineBytes) return Bad("a chunk-size or trailer line over 4 KiB"), 0;
  std::string_view line = in.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (phase_ == Phase::kTrailers) {
    if (line.empty()) {
      phase_ = Phase::kDone;
      state_ = State::kDone;
    }
    return nl + 1;
  }
  line = Trim(line.substr(0, line.find(';')));
  if (line.empty() || line.size() > 15) return Bad("a bad chunk size"), 0;
  uint64_t size = 0;
  for (char c : line) {
    const int v = HexValue(c);
    if (v < 0) return Bad("a bad chunk size"), 0;
    size = size * 16 + static_cast<uint64_t>(v);
  }
  if (size > max_body_ || taken_ + body_.size() + size > max_body_) {
    too_big_ = true;
    return Bad("the reply is larger than the limit"), 0;
  }
  remaining_ = size;
  phase_ = size == 0 ? Phase::kTrailers : Phase::kChunkData;
  return nl + 1;
}

HttpReplyReader::State HttpReplyReader::End() {
  if (state_ != State::kNeedMore) return state_;
  if (phase_ == Phase::kUntilClose) {
    phase_ = Phase::kDone;
    state_ = State::kDone;
    return state_;
  }
  return Bad(seen_ == 0 ? "the connection closed before any reply" : "the connection closed before the reply ended");
}

}  // namespace evalrun
