#include "tests/support/fake_server.h"

#include <httplib.h>

#include <chrono>
#include <condition_variable>

namespace evalrun::testing {

int FakeTokenCount(std::string_view text) {
  int n = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    bool word = std::isalnum(c) || c >= 0x80;
    if (word) {
      if (!in_word) ++n;
      in_word = true;
    } else {
      in_word = false;
      if (!std::isspace(c)) ++n;
    }
  }
  return n;
}

std::string FakeApplyTemplate(const nlohmann::json& messages) {
  std::string out;
  for (const auto& m : messages)
    out += "<|im_start|>" + m.value("role", std::string()) + "\n" + m.value("content", std::string()) +
           "<|im_end|>\n";
  return out + "<|im_start|>assistant\n";
}

struct FakeServer::Impl {
  httplib::Server http;
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  FakeServerOptions opts;
  Responder responder;
  int running = 0;
  int waiting = 0;
  int health_seen = 0;
  std::chrono::steady_clock::time_point started;
  uint64_t overflow_generation = 0;
  std::vector<nlohmann::json> requests;
  std::vector<std::string> authorizations;
  std::atomic<bool> stopping{false};  // Stop() cuts hangs and slot waits short
};

namespace {

std::string ErrorBody(int code, const std::string& msg, const std::string& type) {
  return nlohmann::json{{"error", {{"code", code}, {"message", msg}, {"type", type}}}}.dump();
}

void SetMax(std::atomic<int>& m, int v) {
  int seen = m.load();
  while (v > seen && !m.compare_exchange_weak(seen, v)) {
  }
}

}  // namespace

FakeServer::FakeServer(FakeServerOptions opts) : impl_(std::make_unique<Impl>()) {
  impl_->opts = opts;
  impl_->responder = [](const nlohmann::json&) { return FakeReply{"A", "", "stop"}; };
}

FakeServer::~FakeServer() { Stop(); }

void FakeServer::SetResponder(Responder r) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->responder = std::move(r);
}

void FakeServer::SetOptions(const FakeServerOptions& o) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->opts = o;
}

std::vector<nlohmann::json> FakeServer::requests() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->requests;
}

std::vector<std::string> FakeServer::authorizations() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->authorizations;
}

bool FakeServer::Start() {
  Impl* im = impl_.get();
  im->stopping.store(false);
  im->http.new_task_queue = [] { return new httplib::ThreadPool(48); };
  // As llama-server: no Nagle stall between headers and body, and keep-alive
  // connections kept open (Debian's httplib closes them after 5 requests and
  // listens with a backlog of 5, so reconnect bursts wait 1 s for a SYN resend).
  im->http.set_tcp_nodelay(true);
  im->http.set_keep_alive_max_count(1000000);
  im->http.set_pre_routing_handler([im](const httplib::Request& req, httplib::Response&) {
    std::lock_guard<std::mutex> l(im->mu);
    im->authorizations.push_back(req.get_header_value("Authorization"));
    return httplib::Server::HandlerResponse::Unhandled;
  });

  im->http.Get("/health", [this, im](const httplib::Request&, httplib::Response& res) {
    ++health_requests_;
    std::lock_guard<std::mutex> l(im->mu);
    const bool loading =
        im->opts.load_ms > 0 &&
        std::chrono::steady_clock::now() - im->started < std::chrono::milliseconds(im->opts.load_ms);
    if (im->health_seen++ < im->opts.health_503_count || loading) {
      res.status = 503;
      res.set_content(ErrorBody(503, "Loading model", "unavailable_error"), "application/json");
      return;
    }
    res.set_content("{\"status\":\"ok\"}", "application/json");
  });

  im->http.Get("/props", [im](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> l(im->mu);
    if (!im->opts.props_endpoint) {
      res.status = 404;
      res.set_content(ErrorBody(404, "File Not Found", "not_found_error"), "application/json");
      return;
    }
    nlohmann::json p;
    p["default_generation_settings"] = {{"n_ctx", im->opts.n_ctx}, {"params", {{"seed", 4294967295u}}}};
    p["total_slots"] = im->opts.slots;
    p["model_alias"] = im->opts.model_path;
    p["model_path"] = im->opts.model_path;
    p["build_info"] = im->opts.build_info;
    p["chat_template"] = "{%- for message in messages -%}chatml{%- endfor -%}";
    p["endpoint_slots"] = true;
    res.set_content(p.dump(), "application/json");
  });

  auto models = [im](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> l(im->mu);
    nlohmann::json m = {{"object", "list"},
                        {"data", {{{"id", im->opts.model_path}, {"object", "model"}, {"owned_by", "llamacpp"}}}}};
    res.set_content(m.dump(), "application/json");
  };
  im->http.Get("/v1/models", models);
  im->http.Get("/models", models);

  // What /tokenize and /apply-template share: the count, a 404 while the
  // endpoints are off, the delay, and a 400 unless the body is JSON with
  // `field` (a string when `string_field`). `answer` gets the body and sets
  // the reply.
  auto tokenizer_endpoint = [this, im](const char* field, bool string_field,
                                       std::function<void(const nlohmann::json&, httplib::Response&)> answer) {
    return [this, im, field, string_field, answer](const httplib::Request& req, httplib::Response& res) {
      ++tokenize_requests_;
      int delay;
      {
        std::lock_guard<std::mutex> l(im->mu);
        if (!im->opts.tokenize_endpoints) {
          res.status = 404;
          res.set_content(ErrorBody(404, "File Not Found", "not_found_error"), "application/json");
          return;
        }
        delay = im->opts.tokenize_delay_ms;
      }
      if (delay) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      auto j = nlohmann::json::parse(req.body, nullptr, false);
      if (j.is_discarded() || !j.contains(field) || (string_field && !j[field].is_string())) {
        res.status = 400;
        const std::string message = std::string("\"") + field + "\" must be provided";
        res.set_content(ErrorBody(400, message, "invalid_request_error"), "application/json");
        return;
      }
      answer(j, res);
    };
  };

  im->http.Post("/tokenize", tokenizer_endpoint("content", true, [](const nlohmann::json& j, httplib::Response& res) {
    int n = FakeTokenCount(j["content"].get<std::string>());
    // llama-server adds BOS when add_special is true (the default).
    if (j.value("add_special", false)) ++n;
    nlohmann::json toks = nlohmann::json::array();
    for (int i = 0; i < n; ++i) toks.push_back(100 + i % 300);
    res.set_content(nlohmann::json{{"tokens", toks}}.dump(), "application/json");
  }));

  im->http.Post("/apply-template",
                tokenizer_endpoint("messages", false, [](const nlohmann::json& j, httplib::Response& res) {
                  res.set_content(nlohmann::json{{"prompt", FakeApplyTemplate(j["messages"])}}.dump(),
                                  "application/json");
                }));

  im->http.Post("/v1/chat/completions", [this, im](const httplib::Request& req, httplib::Response& res) {
    ++chat_requests_;
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_discarded()) {
      res.status = 500;
      res.set_content(ErrorBody(500, "[json.exception.parse_error.101] parse error", "server_error"),
                      "application/json");
      return;
    }
    if (!body.contains("messages")) {
      res.status = 400;
      res.set_content(ErrorBody(400, "'messages' is required", "invalid_request_error"), "application/json");
      return;
    }
    Responder responder;
    int slots;
    bool check_context;
    int n_ctx;
    {
      std::lock_guard<std::mutex> l(im->mu);
      im->requests.push_back(body);
      responder = im->responder;
      slots = im->opts.slots;
      check_context = im->opts.check_context;
      n_ctx = im->opts.n_ctx;
    }
    const std::string prompt_text = FakeApplyTemplate(body["messages"]);
    const int prompt_tokens = FakeTokenCount(prompt_text) + 1;
    if (check_context && prompt_tokens >= n_ctx) {
      nlohmann::json e = {{"error",
                           {{"code", 400},
                            {"message", "request (" + std::to_string(prompt_tokens) +
                                            " tokens) exceeds the available context size (" +
                                            std::to_string(n_ctx) + " tokens), try increasing it"},
                            {"type", "exceed_context_size_error"},
                            {"n_prompt_tokens", prompt_tokens},
                            {"n_ctx", n_ctx}}}};
      res.status = 400;
      res.set_content(e.dump(), "application/json");
      return;
    }
    FakeReply reply = responder(body);

    // Take a slot; requests beyond the slots wait, as in llama-server.
    uint64_t generation;
    {
      std::unique_lock<std::mutex> l(im->mu);
      ++im->waiting;
      SetMax(max_waiting_, im->waiting - std::max(0, slots - im->running));
      im->cv.wait(l, [&] { return im->running < slots || im->stopping.load(); });
      --im->waiting;
      ++im->running;
      SetMax(max_running_, im->running);
      if (reply.fault == Fault::kContextOverflow) ++im->overflow_generation;
      generation = im->overflow_generation;
    }
    auto release = [&] {
      std::lock_guard<std::mutex> l(im->mu);
      --im->running;
      im->cv.notify_all();
    };
    auto overflow = [&] {
      res.status = 500;
      res.set_content(ErrorBody(500, "Context size has been exceeded.", "server_error"), "application/json");
    };
    if (reply.fault == Fault::kContextOverflow) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      release();
      overflow();
      return;
    }
    // Service time, in small steps so a context overflow reaches the running ones.
    int wait_ms = reply.fault == Fault::kHang ? reply.hang_ms : reply.delay_ms;
    for (int waited = 0; waited < wait_ms && !im->stopping.load(); waited += 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5, wait_ms - waited)));
      std::lock_guard<std::mutex> l(im->mu);
      if (im->overflow_generation != generation) break;
    }
    bool overflowed;
    {
      std::lock_guard<std::mutex> l(im->mu);
      overflowed = im->overflow_generation != generation;
    }
    release();
    if (overflowed) return overflow();

    std::string content = reply.content;
    if (reply.fault == Fault::kHugeBody)
      content = std::string(20 * 1024 * 1024, 'x') + (reply.content.empty() ? "" : "\n" + reply.content);
    const int completion_tokens = reply.completion_tokens >= 0 ? reply.completion_tokens
                                                               : std::max(1, FakeTokenCount(content));
    nlohmann::json msg = {{"role", "assistant"}, {"content", content}};
    if (!reply.reasoning_content.empty()) msg["reasoning_content"] = reply.reasoning_content;
    nlohmann::json out;
    out["choices"] = {{{"finish_reason", reply.finish_reason}, {"index", 0}, {"message", msg}}};
    out["created"] = 1796009101;
    out["model"] = body.value("model", std::string("models/fake.gguf"));
    out["system_fingerprint"] = "b10470-34af94c";
    out["object"] = "chat.completion";
    out["usage"] = {{"completion_tokens", completion_tokens},
                    {"prompt_tokens", prompt_tokens},
                    {"total_tokens", completion_tokens + prompt_tokens},
                    {"prompt_tokens_details", {{"cached_tokens", 0}}}};
    out["id"] = "chatcmpl-fake";
    double pms = std::max(1.0, prompt_tokens * 0.1), dms = std::max(1.0, reply.delay_ms * 1.0);
    out["timings"] = {{"cache_n", 0}, {"prompt_n", prompt_tokens}, {"prompt_ms", pms},
                      {"prompt_per_token_ms", pms / prompt_tokens}, {"prompt_per_second", prompt_tokens / pms * 1000},
                      {"predicted_n", completion_tokens}, {"predicted_ms", dms},
                      {"predicted_per_token_ms", dms / completion_tokens},
                      {"predicted_per_second", completion_tokens / dms * 1000}};
    switch (reply.fault) {
      case Fault::kHttp500:
        res.status = 500;
        res.set_content(ErrorBody(500, "Internal server error", "server_error"), "application/json");
        return;
      case Fault::kHttp503:
        res.status = 503;
        res.set_content(ErrorBody(503, "Loading model", "unavailable_error"), "application/json");
        return;
      case Fault::kHttp429:
        res.status = 429;
        res.set_content(ErrorBody(429, "Too many requests", "rate_limit_error"), "application/json");
        return;
      case Fault::kHttp400:
        res.status = 400;
        res.set_content(ErrorBody(400, "bad request", "invalid_request_error"), "application/json");
        return;
      case Fault::kMalformedJson:
        res.set_content("{\"choices\":[{\"finish_reason\":\"stop\",\"message\":{\"content\":\"A", "application/json");
        return;
      case Fault::kEmptyChoices:
        out["choices"] = nlohmann::json::array();
        break;
      case Fault::kErrorIn200:
        out = nlohmann::json{{"error", {{"code", 500}, {"message", "slot failed"}, {"type", "server_error"}}}};
        break;
      case Fault::kResetMidBody: {
        auto text = std::make_shared<std::string>(out.dump());
        res.set_content_provider(text->size(), "application/json",
                                 [text](size_t offset, size_t, httplib::DataSink& sink) {
                                   if (offset == 0) {
                                     sink.write(text->data(), text->size() / 2);
                                     return true;
                                   }
                                   return false;  // close mid-body
                                 });
        return;
      }
      default:
        break;
    }
    res.set_content(out.dump(), "application/json");
  });

  im->started = std::chrono::steady_clock::now();
  if (im->opts.port > 0) {
    if (!im->http.bind_to_port("127.0.0.1", im->opts.port)) return false;
    port_ = im->opts.port;
  } else {
    port_ = im->http.bind_to_any_port("127.0.0.1");
  }
  if (port_ <= 0) return false;
  im->thread = std::thread([im] { im->http.listen_after_bind(); });
  for (int i = 0; i < 200 && !im->http.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return im->http.is_running();
}

void FakeServer::Stop() {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    impl_->stopping.store(true);
  }
  impl_->cv.notify_all();
  if (impl_->http.is_running()) impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace evalrun::testing
