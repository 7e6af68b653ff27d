#include "evals/server/server_watch.h"

#include <cstdio>

#include "evals/server/endpoint_identity.h"

namespace evalrun {

std::string ServerIdentityDiff(const ServerProps& a, const ServerProps& b) {
  std::string d;
  auto field = [&](const char* name, const std::string& x, const std::string& y) {
    if (x == y) return;
    if (!d.empty()) d += "; ";
    d.append(name).append(": \"").append(x).append("\" -> \"").append(y).append("\"");
  };
  if (a.has_props || b.has_props) {
    field("model_path", a.model_path, b.model_path);
    field("build_info", a.build_info, b.build_info);
    field("chat_template_sha256", a.chat_template_sha256, b.chat_template_sha256);
  } else {
    // vLLM / SGLang: the served model ids are all there is.
    field("models", ServedModelIds(a.models), ServedModelIds(b.models));
  }
  return d;
}

HttpServerWatch::HttpServerWatch(TransportFactory transports, ServerConfig server, ServerProps expected,
                                 double ready_timeout_s, std::function<void(const std::string&)> log,
                                 Clock* clock)
    : transports_(std::move(transports)),
      server_(std::move(server)),
      expected_(std::move(expected)),
      ready_timeout_s_(ready_timeout_s),
      log_(std::move(log)),
      clock_(clock) {}

Status HttpServerWatch::CheckSame() {
  std::lock_guard<std::mutex> l(mu_);
  return CheckSameLocked();
}

Status HttpServerWatch::CheckSameLocked() {
  if (!t_) t_ = transports_();
  ServerProps now;
  Status st = FetchServerProps(t_.get(), server_, &now);
  if (!st.ok()) return st;
  const std::string diff = ServerIdentityDiff(expected_, now);
  if (diff.empty()) return Status::Ok();
  return Status::Changed(server_.Origin() + " now serves something else than when the run began (" + diff +
                         "); stopping so that two models' answers are not mixed in one job. The answers "
                         "so far are kept; run the same job again against the first server, or start another job");
}

Status HttpServerWatch::AwaitRecovery(CancelToken* cancel, bool* was_down) {
  std::lock_guard<std::mutex> l(mu_);
  const Stopwatch waited(clock_);
  *was_down = false;
  t_ = transports_();  // the old connection may be gone with the server
  std::string last;
  for (;;) {
    HttpResponse r = t_->Get("/health", 2);
    if (r.transport_ok() && (r.status == 200 || r.status == 404)) break;
    if (!*was_down && log_)
      log_("the server at " + server_.Origin() + " stopped answering; waiting for it (up to " +
           std::to_string(static_cast<int>(ready_timeout_s_)) + " s, server.ready_timeout_s)");
    *was_down = true;
    last = r.transport_ok() ? "HTTP " + std::to_string(r.status) : r.error;
    if (waited.Seconds() > ready_timeout_s_)
      return Status::Unavailable(server_.Origin() + " did not come back within " +
                                 std::to_string(static_cast<int>(ready_timeout_s_)) +
                                 " s (server.ready_timeout_s); last: " + last +
                                 ". The answers so far are kept: run the same job again to go on");
    if (!clock_->SleepFor(0.5, cancel)) return Status::Cancelled("interrupted while waiting for the server");
  }
  Status st = CheckSameLocked();
  if (log_ && st.ok() && *was_down) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", waited.Seconds());
    log_("the server at " + server_.Origin() + " answers again after " + buf + " s, serving the same model; going on");
  }
  return st;
}

}  // namespace evalrun
