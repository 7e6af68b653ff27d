#include "tests/support/fake_server.h"

#include <chrono>
#include <ctime>
#include <thread>

#include "tests/support/fake_server_impl.h"

namespace evalrun::testing {
namespace {

bool JsonBody(const FakeHttpRequest& req, FakeHttpResponse* res, nlohmann::json* out) {
  try {
    *out = nlohmann::json::parse(req.body);
    return true;
  } catch (const nlohmann::json::exception& e) {
    FakeError(res, 500, e.what(), "server_error");  // llama-server answers a parse error so
    return false;
  }
}

}  // namespace

FakeServer::Impl::Impl(FakeServer* s, const FakeServerOptions& o)
    : self(s),
      slots(SlotsConfig(o)),
      http([this](const FakeHttpRequest& req, FakeHttpResponse* res) { Handle(req, res); }),
      opts(o) {
  responder = [](const nlohmann::json&) { return FakeReply{"A", "", "stop"}; };
}

FakeSlotsConfig FakeServer::Impl::SlotsConfig(const FakeServerOptions& o) {
  FakeSlotsConfig c;
  c.slots = o.slots;
  c.n_ctx_slot = o.n_ctx;
  c.kv_unified = o.kv_unified;
  c.kv_size = o.kv_size > 0 ? o.kv_size : o.slots * o.n_ctx;
  return c;
}

FakeServerOptions FakeServer::Impl::options() const {
  std::lock_guard<std::mutex> l(mu);
  return opts;
}

FakeServerFacts FakeServer::Impl::Facts() const {
  std::lock_guard<std::mutex> l(mu);
  FakeServerFacts f;
  f.total_slots = opts.slots;
  f.n_ctx_slot = opts.n_ctx;
  f.n_ctx_train = opts.n_ctx_train;
  f.model_alias = opts.alias.empty() ? opts.model_path : opts.alias;
  f.model_path = opts.model_path;
  f.build_info = opts.build_info;
  f.endpoint_metrics = opts.metrics;
  f.endpoint_slots = opts.slots_endpoint;
  f.thinking_switch = opts.thinking_switch;
  return f;
}

std::string FakeServer::Impl::NextId() {
  // Deterministic letters (llama-server's are random).
  uint64_t x = ++ids * 0x9E3779B97F4A7C15ull;
  std::string id = "chatcmpl-";
  for (int i = 0; i < 32; ++i) {
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    const uint64_t k = (x >> 32) % 52;
    id += static_cast<char>(k < 26 ? 'a' + k : 'A' + (k - 26));
  }
  return id;
}

void FakeServer::Impl::Handle(const FakeHttpRequest& req, FakeHttpResponse* res) {
  // llama-server's boundary (ex_wrapper): an exception is a 500 server_error.
  try {
    Route(req, res);
  } catch (const std::exception& e) {
    *res = FakeHttpResponse();
    FakeError(res, 500, e.what(), "server_error");
  }
}

void FakeServer::Impl::Route(const FakeHttpRequest& req, FakeHttpResponse* res) {
  bool loading;
  {
    std::lock_guard<std::mutex> l(mu);
    authorizations.push_back(req.Header("Authorization"));
    loading = opts.load_ms > 0 &&
              std::chrono::steady_clock::now() - started < std::chrono::milliseconds(opts.load_ms);
  }
  const std::string& p = req.path;
  const bool get = req.method == "GET", post = req.method == "POST";
  if (get && (p == "/health" || p == "/v1/health")) ++self->health_requests_;
  if (loading) {  // llama-server answers every endpoint so while it loads
    res->status = 503;
    res->body = FakeMiddlewareErrorBody(503, "Loading model", "unavailable_error");
    return;
  }
  const FakeServerOptions o = options();
  if (!o.api_key.empty() && p != "/health" && p != "/v1/health" && p != "/models" && p != "/v1/models") {
    std::string key = req.Header("Authorization");
    if (key.empty()) key = req.Header("X-Api-Key");
    if (key.rfind("Bearer ", 0) == 0) key.erase(0, 7);
    if (key != o.api_key) {
      res->status = 401;
      res->body = FakeMiddlewareErrorBody(401, "Invalid API Key", "authentication_error");
      return;
    }
  }

  if (get && (p == "/health" || p == "/v1/health")) {
    std::lock_guard<std::mutex> l(mu);
    if (health_seen++ < opts.health_503_count) {
      res->status = 503;
      res->body = FakeMiddlewareErrorBody(503, "Loading model", "unavailable_error");
      return;
    }
    res->body = "{\"status\":\"ok\"}";
    return;
  }
  if (p == "/props" && o.props_endpoint) {
    if (post)
      return FakeError(res, 501, "This server does not support changing global properties. Start it with `--props`",
                       "not_supported_error");
    if (get) {
      res->body = FakePropsBody(Facts());
      return;
    }
  }
  if (get && p == "/slots") {
    if (!o.slots_endpoint)
      return FakeError(res, 501, "This server does not support slots endpoint. Start it with `--slots`",
                       "not_supported_error");
    if (req.query.find("fail_on_no_slot=") != std::string::npos && slots.idle_slots() == 0)
      return FakeError(res, 503, "no slot available", "unavailable_error");
    res->body = slots.SlotsJson().dump();
    return;
  }
  if (get && p == "/metrics") {
    if (!o.metrics)
      return FakeError(res, 501, "This server does not support metrics endpoint. Start it with `--metrics`",
                       "not_supported_error");
    res->headers.emplace_back("Process-Start-Time-Unix", std::to_string(start_unix));
    res->content_type = "text/plain; version=0.0.4";
    res->body = FakeMetricsBody(slots.ScrapeMetrics());
    return;
  }
  if (get && (p == "/models" || p == "/v1/models")) {
    res->body = FakeModelsBody(Facts(), start_unix);
    return;
  }

  if (post && (p == "/tokenize" || p == "/detokenize" || p == "/apply-template")) {
    ++self->tokenize_requests_;
    if (!o.tokenize_endpoints) {
      res->status = 404;
      res->body = FakeMiddlewareErrorBody(404, "File Not Found", "not_found_error");
      return;
    }
    if (o.tokenize_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.tokenize_delay_ms));
    nlohmann::json j;
    if (!JsonBody(req, res, &j)) return;
    try {
      if (p == "/tokenize") {
        // No "content": no tokens (llama-server); add_special (BOS) is off by default.
        const std::string text = j.contains("content") ? j.at("content").get<std::string>() : "";
        const bool pieces = j.value("with_pieces", false);
        OrderedJson toks = OrderedJson::array();
        auto add = [&](int id, const std::string& piece) {
          if (pieces) toks.push_back(OrderedJson{{"id", id}, {"piece", piece}});
          else toks.push_back(id);
        };
        if (j.contains("content") && j.value("add_special", false)) add(kFakeBos, "<s>");
        for (const auto& t : FakeTokenize(text)) {
          const std::string piece = text.substr(t.begin, t.end - t.begin);
          add(FakeTokenId(piece), piece);
        }
        res->body = OrderedJson{{"tokens", toks}}.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
      } else if (p == "/detokenize") {
        std::string text;
        if (j.contains("tokens"))
          for (int id : j.at("tokens").get<std::vector<int>>())
            if (id != kFakeBos && id != kFakeEos) text += FakeTokenPiece(id);
        res->body = OrderedJson{{"content", text}}.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
      } else {
        if (!j.contains("messages")) return FakeError(res, 400, "'messages' is required", "invalid_request_error");
        if (!j["messages"].is_array())
          return FakeError(res, 400, "Expected 'messages' to be an array", "invalid_request_error");
        res->body = OrderedJson{{"prompt", FakeApplyTemplate(j["messages"], j.value("add_generation_prompt", true),
                                                              o.thinking_switch && FakeThinkingOff(j))}}
                        .dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
      }
    } catch (const nlohmann::json::exception& e) {
      FakeError(res, 500, e.what(), "server_error");
    }
    return;
  }

  if (post && (p == "/v1/chat/completions" || p == "/chat/completions")) return Generate(req, res, true, true);
  if (post && (p == "/v1/completions" || p == "/completions")) return Generate(req, res, false, true);
  if (post && p == "/completion") return Generate(req, res, false, false);

  res->status = 404;
  res->body = FakeMiddlewareErrorBody(404, "File Not Found", "not_found_error");
}

FakeServer::FakeServer(FakeServerOptions opts) : impl_(std::make_unique<Impl>(this, opts)) {}

FakeServer::~FakeServer() { Stop(); }

void FakeServer::SetResponder(Responder r) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->responder = std::move(r);
}

void FakeServer::SetOptions(const FakeServerOptions& o) {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    impl_->opts = o;
  }
  impl_->slots.Configure(Impl::SlotsConfig(o));
}

int FakeServer::max_running() const { return impl_->slots.max_running(); }
int FakeServer::max_waiting() const { return impl_->slots.max_deferred(); }
int FakeServer::connections() const { return impl_->http.connections_accepted(); }

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
  int port;
  {
    std::lock_guard<std::mutex> l(im->mu);
    im->started = std::chrono::steady_clock::now();
    im->start_unix = static_cast<long long>(std::time(nullptr));
    port = im->opts.port;
  }
  if (!im->http.Listen(port)) return false;
  port_ = im->http.port();
  return true;
}

void FakeServer::Stop() {
  if (!impl_) return;
  impl_->stopping.store(true);
  // Nothing is answered from here on (not even /health), before the
  // running requests are cut short: a server that goes away does not
  // answer a health check in between.
  impl_->http.BeginStop();
  impl_->slots.Shutdown();
  impl_->http.Stop();
}

}  // namespace evalrun::testing
