// The streamed chat format as llama-server b10470 writes it
// (tools/server/server-task.cpp, to_json_oaicompat_chat_stream and
// server_task_result_cmpl_partial; tools/server/server-context.cpp, the
// stream's set_next; checked against ../shared/reference/llama-server/
// chat_stream.body and chat_stream_usage.body):
//   - the first event holds the role chunk ({"delta": {"role":
//     "assistant", "content": null}}) and comes with the first generated
//     token, after the prefill;
//   - one chunk per diff of the parsed message (content or
//     reasoning_content; usually one token, not always);
//   - a finish chunk ({"finish_reason": "length"|"stop", "delta": {}});
//   - with include_usage a last chunk with "choices": [] and `usage`;
//     `timings` on the last chunk of the two (and on every chunk with
//     timings_per_token);
//   - an error after the headers is `data: {"error": {...}}` and ends the
//     stream without [DONE]; a quiet stream sends ":" ping comments
//     (--sse-ping-interval); the end is `data: [DONE]`.
#include "evals/server/stream.h"

#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "evals/base/json_bounds.h"
#include "evals/base/redact.h"
#include "evals/server/client.h"
#include "evals/server/openai_wire.h"
#include "evals/server/raw_fallback.h"

namespace evalrun {

SseReader::SseReader(size_t max_line) : max_line_(max_line) {}

namespace {

// One complete line of an event stream: what it adds to the event.
enum class LineKind { kBlank, kComment, kData, kOther };

LineKind ClassifyLine(std::string_view line, std::string_view* value) {
  if (line.empty()) return LineKind::kBlank;
  if (line.front() == ':') return LineKind::kComment;
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return LineKind::kOther;
  *value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value->empty() && value->front() == ' ') value->remove_prefix(1);
  return LineKind::kData;
}

}  // namespace

bool SseReader::Feed(std::string_view bytes, const std::function<bool(std::string_view data)>& on_event) {
  if (stopped_ || overflowed_) return false;
  // A line is complete: false when the reader stops (on_event, overflow).
  auto take_line = [&](std::string_view line) {
    std::string_view value;
    switch (ClassifyLine(line, &value)) {
      case LineKind::kBlank:
        if (!has_data_) return true;
        has_data_ = false;
        if (!on_event(data_)) stopped_ = true;
        data_.clear();
        return !stopped_;
      case LineKind::kComment: ++comments_; return true;
      case LineKind::kOther: return true;
      case LineKind::kData:
        if (data_.size() + value.size() + 1 > max_line_) return overflowed_ = true, false;
        if (has_data_) data_.push_back('\n');
        data_.append(value.data(), value.size());
        has_data_ = true;
        return true;
    }
    return true;
  };
  size_t pos = 0;
  if (after_cr_ && !bytes.empty() && bytes.front() == '\n') pos = 1;  // the LF of a CRLF split apart
  after_cr_ = false;
  while (pos < bytes.size()) {
    const size_t end = bytes.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      if (line_.size() + bytes.size() - pos > max_line_) return overflowed_ = true, false;
      line_.append(bytes.data() + pos, bytes.size() - pos);
      break;
    }
    bool ok;
    if (line_.empty()) {
      ok = take_line(bytes.substr(pos, end - pos));
    } else {
      if (line_.size() + end - pos > max_line_) return overflowed_ = true, false;
      line_.append(bytes.data() + pos, end - pos);
      ok = take_line(line_);
      line_.clear();
    }
    pos = end + 1;
    if (bytes[end] == '\r') {
      if (pos == bytes.size()) after_cr_ = true;
      else if (bytes[pos] == '\n') ++pos;
    }
    if (!ok) return false;
  }
  return true;
}

namespace {

// The stream's events, read as they come: the typed reply and the first
// thing wrong with the stream.
struct StreamParse {
  StreamedReply* out = nullptr;
  bool raw = false;          // /completion's events, not chat chunks
  bool opens_think = false;  // raw: the template opened a <think> block
  std::string content;  // raw, before a <think> block is split off
  std::string error;    // "" while the stream is good
  double now = 0;       // when the piece being read arrived

  bool Fail(std::string why) {
    error = std::move(why);
    return false;
  }

  // One `data:` event; false stops reading.
  bool OnEvent(std::string_view data) {
    if (out->saw_done) return Fail(raw ? "an event after the last one (stop: true)" : "an event after data: [DONE]");
    if (data == "[DONE]") {
      out->saw_done = true;
      out->timing.done_s = now;
      return true;
    }
    const nlohmann::json j = ParseJsonOrDiscarded(data);
    if (j.is_discarded() || !j.is_object()) {
      std::string head(data.substr(0, 120));
      return Fail("a stream event that is not a JSON object (" + std::to_string(data.size()) + " bytes, starting \"" +
                  head + "\")");
    }
    if (j.contains("error") && !j["error"].is_null())
      return Fail("the stream carries an error: " + ErrorMessageOf(data));
    ++out->chunks;
    if (raw) return TakeRawEvent(j);
    return TakeId(j) && TakeChoice(j) && TakeTotals(j);
  }

  // A piece of content or reasoning text arrived now.
  void MarkText() {
    StreamTiming& t = out->timing;
    if (t.first_text_s < 0) t.first_text_s = now;
    t.last_token_s = now;
    t.text_chunk_s.push_back(now);
  }

  // One event of /completion's stream: a token's text, or the last one.
  bool TakeRawEvent(const nlohmann::json& j) {
    if (out->timing.first_token_s < 0) out->timing.first_token_s = now;
    if (auto c = j.find("content"); c != j.end() && c->is_string()) {
      content += c->get_ref<const std::string&>();
      if (!c->get_ref<const std::string&>().empty()) MarkText();
    }
    auto stop = j.find("stop");
    if (stop == j.end() || !stop->is_boolean() || !stop->get<bool>()) return true;
    out->saw_done = true;
    out->timing.done_s = now;
    TakeRawCompletionTotals(j, &out->completion);
    return true;
  }

  bool TakeId(const nlohmann::json& j) {
    auto it = j.find("id");
    if (it == j.end() || !it->is_string()) return true;
    const std::string& id = it->get_ref<const std::string&>();
    if (id.size() > 256) return true;
    std::string& mine = out->completion.reply_id;
    if (mine.empty()) mine = id;
    if (mine != id) return Fail("chunks of two replies in one stream (ids " + mine + " and " + id + ")");
    return true;
  }

  bool TakeChoice(const nlohmann::json& j) {
    auto ch = j.find("choices");
    if (ch == j.end() || !ch->is_array() || ch->empty()) return true;  // the usage chunk: "choices": []
    const nlohmann::json& c0 = (*ch)[0];
    if (!c0.is_object()) return Fail("a chunk whose choices[0] is not an object");
    if (out->timing.first_token_s < 0) out->timing.first_token_s = now;
    if (auto f = c0.find("finish_reason"); f != c0.end() && f->is_string())
      out->completion.finish_reason = f->get<std::string>();
    auto d = c0.find("delta");
    if (d == c0.end() || !d->is_object()) return true;
    bool text = false;
    if (auto c = d->find("content"); c != d->end() && c->is_string() && !c->get_ref<const std::string&>().empty()) {
      content += c->get_ref<const std::string&>();
      text = true;
    }
    if (auto r = d->find("reasoning_content");
        r != d->end() && r->is_string() && !r->get_ref<const std::string&>().empty()) {
      out->completion.reasoning += r->get_ref<const std::string&>();
      text = true;
    }
    if (text) MarkText();
    return true;
  }

  bool TakeTotals(const nlohmann::json& j) {
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
      auto count = [&](const char* key) {
        auto it = u->find(key);
        return it != u->end() && it->is_number_integer() ? it->get<int>() : -1;
      };
      out->completion.prompt_tokens = count("prompt_tokens");
      out->completion.completion_tokens = count("completion_tokens");
    }
    if (auto t = j.find("timings"); t != j.end() && t->is_object()) out->completion.timings = TimingsOf(*t);
    return true;
  }

  // After the last event: the content with a leading <think> block moved
  // to the reasoning.
  void SplitContent() {
    Completion& c = out->completion;
    if (opens_think) content = "<think>" + content;
    std::string think, answer;
    bool unclosed = false;
    if (SplitThinkBlock(content, &think, &answer, &unclosed)) {
      if (!c.reasoning.empty()) c.reasoning += "\n";
      c.reasoning += think;
      c.content = std::move(answer);
      c.unclosed_think = unclosed;
    } else {
      c.content = std::move(content);
    }
  }
};

// A request body (a chat request's, or /completion's) made a streamed one:
// "stream": true, the usage chunk asked for where the route has one, then
// `extra`'s keys on top.
std::string StreamedBody(const std::string& body_text, bool include_usage, const nlohmann::json* extra) {
  nlohmann::json body = nlohmann::json::parse(body_text);
  body["stream"] = true;
  if (include_usage) body["stream_options"] = {{"include_usage", true}};
  if (extra != nullptr && extra->is_object())
    for (const auto& [key, value] : extra->items()) body[key] = value;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// What a reply that was not a good stream means: *out's status and error.
void Refuse(const HttpResponse& resp, const std::string& what, StreamedReply* out) {
  if (!resp.transport_ok() || !resp.error.empty()) {
    out->status = resp.error.rfind("could not connect", 0) == 0 ? CallStatus::kUnreachable : CallStatus::kFailed;
    out->error = Redact(what + resp.error);
    return;
  }
  const Refusal refusal = ClassifyRefusal(resp.status, resp.body);
  out->status = refusal.status;
  out->error = Redact(what + "HTTP " + std::to_string(resp.status) + ": " + ErrorMessageOf(resp.body));
}

}  // namespace

StreamingChat::StreamingChat(std::unique_ptr<HttpTransport> transport, const ServerConfig& server, Clock* clock)
    : transport_(std::move(transport)), server_(server), clock_(clock) {}

StreamedReply StreamingChat::Send(const Prompt& prompt, const nlohmann::json* extra, double timeout_s,
                                  CancelToken* cancel) {
  return Exchange(server_.PathPrefix() + "/chat/completions",
                  StreamedBody(ChatRequestBody(prompt, server_.model), true, extra), false, false, timeout_s, cancel);
}

StreamedReply StreamingChat::SendRaw(const Prompt& prompt, const nlohmann::json* extra, double timeout_s,
                                     CancelToken* cancel) {
  std::string text;
  std::string template_body = ChatRequestBody(prompt, server_.model);
  Status st = ApplyTemplate(transport_.get(), template_body, timeout_s, &text);
  if (!st.ok()) {
    StreamedReply out;
    out.raw_route = true;
    out.status = CallStatus::kFailed;
    out.error = Redact("POST /apply-template: " + st.message());
    return out;
  }
  StreamedReply out = Exchange("/completion", StreamedBody(RawCompletionBody(prompt, text), false, extra), true,
                               TemplateOpensThink(text), timeout_s, cancel);
  out.sent_before.push_back({"/apply-template", std::move(template_body), false});
  return out;
}

StreamedReply StreamingChat::Exchange(const std::string& path, std::string body, bool raw, bool opens_think,
                                      double timeout_s, CancelToken* cancel) {
  StreamedReply out;
  out.raw_route = raw;
  const std::string what = "POST " + path + " (streamed): ";
  if (cancel != nullptr && cancel->cancelled()) {
    out.status = CallStatus::kCancelled;
    out.error = what + "cancelled before it was sent";
    return out;
  }
  StreamParse parse;
  parse.out = &out;
  parse.raw = raw;
  parse.opens_think = opens_think;
  SseReader sse;
  bool cancelled = false;
  // The clock starts when the request's last byte is written (after any
  // connect); each piece is stamped as its read returns, before parsing.
  const double handed = clock_->MonotonicSeconds();
  double t0 = handed;
  transport_->SetRequestSentHook([&] {
    t0 = clock_->MonotonicSeconds();
    out.timing.sent_s = t0 - handed;
  });
  const HttpResponse resp = transport_->PostStreamed(path, body, timeout_s, [&](std::string_view piece) {
    parse.now = clock_->MonotonicSeconds() - t0;
    if (out.timing.first_byte_s < 0) out.timing.first_byte_s = parse.now;
    if (cancel != nullptr && cancel->cancelled()) return !(cancelled = true);
    return sse.Feed(piece, [&](std::string_view data) { return parse.OnEvent(data); });
  });
  const double end_s = clock_->MonotonicSeconds() - t0;
  transport_->SetRequestSentHook({});
  out.path = path;
  out.body = std::move(body);
  out.http_status = resp.status;
  out.comments = sse.comments();
  if (cancelled) {
    out.status = CallStatus::kCancelled;
    out.error = what + "cancelled while the reply was arriving";
    return out;
  }
  if (!parse.error.empty()) {
    transport_->DropConnection();
    out.status = CallStatus::kFailed;
    out.error = Redact(what + parse.error);
    return out;
  }
  if (sse.overflowed()) {
    transport_->DropConnection();
    out.error = what + "a stream line or event over 16 MiB (evalrun's limit); not read further";
    return out;
  }
  if (!resp.transport_ok() || resp.status < 200 || resp.status >= 300 || !resp.error.empty()) {
    Refuse(resp, what, &out);
    return out;
  }
  if (!out.saw_done) {
    out.error = what + (raw ? "the stream ended without its last event (stop: true) ("
                            : "the stream ended without data: [DONE] (") +
                std::to_string(out.chunks) + " chunks came)";
    return out;
  }
  if (out.timing.done_s < 0) out.timing.done_s = end_s;
  parse.SplitContent();
  out.status = CallStatus::kOk;
  return out;
}

}  // namespace evalrun
