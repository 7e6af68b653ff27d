#include "tests/real/counting_proxy.h"

#include <httplib.h>

#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

struct CountingProxy::Impl {
  std::string upstream;
  httplib::Server http;
  std::thread thread;
  mutable std::mutex mu;
  std::map<std::string, int> counts;
  std::atomic<bool> strip_kwargs{false};
};

namespace {

bool IsChat(const std::string& path) {
  const std::string tail = "/chat/completions";
  return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
}

// The body without chat_template_kwargs (as it is when not JSON).
std::string WithoutKwargs(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return body;
  j.erase("chat_template_kwargs");
  return j.dump();
}

}  // namespace

CountingProxy::CountingProxy(std::string upstream) : impl_(std::make_unique<Impl>()) {
  impl_->upstream = std::move(upstream);
}

CountingProxy::~CountingProxy() { Stop(); }

bool CountingProxy::Start() {
  Impl* im = impl_.get();
  auto forward = [im](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> l(im->mu);
      ++im->counts[req.method + " " + req.path];
    }
    httplib::Client c(im->upstream);
    c.set_read_timeout(3600, 0);
    c.set_write_timeout(600, 0);
    httplib::Headers h;
    if (req.has_header("Authorization")) h.emplace("Authorization", req.get_header_value("Authorization"));
    const std::string body = im->strip_kwargs && IsChat(req.path) ? WithoutKwargs(req.body) : req.body;
    auto r = req.method == "POST" ? c.Post(req.path, h, body, "application/json") : c.Get(req.path, h);
    if (!r) {
      res.status = 502;
      res.set_content("{\"error\":{\"code\":502,\"message\":\"proxy: upstream did not answer\"}}",
                      "application/json");
      return;
    }
    res.status = r->status;
    res.set_content(r->body, r->get_header_value("Content-Type"));
  };
  im->http.Get(".*", forward);
  im->http.Post(".*", forward);
  im->http.new_task_queue = [] { return new httplib::ThreadPool(32); };
  port_ = im->http.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return false;
  im->thread = std::thread([im] { im->http.listen_after_bind(); });
  for (int i = 0; i < 200 && !im->http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return im->http.is_running();
}

void CountingProxy::Stop() {
  if (!impl_) return;
  if (impl_->http.is_running()) impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void CountingProxy::StripChatTemplateKwargs() { impl_->strip_kwargs = true; }

int CountingProxy::Count(const std::string& key) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  auto it = impl_->counts.find(key);
  return it == impl_->counts.end() ? 0 : it->second;
}

}  // namespace evalrun::testing
