#include "evals/server/server_info.h"
#include "evals/base/json_bounds.h"

#include <chrono>

#include "evals/server/openai_wire.h"
#include "evals/base/sha256.h"

namespace evalrun {

nlohmann::json ServerProps::ToJson() const {
  nlohmann::json j;
  j["has_props"] = has_props;
  j["build_info"] = build_info;
  j["model_path"] = model_path;
  j["n_ctx"] = n_ctx;
  j["total_slots"] = total_slots;
  j["chat_template_sha256"] = chat_template_sha256;
  j["models"] = models;
  return j;
}

Status WaitUntilReady(HttpTransport* t, const ServerConfig& server, double timeout_s,
                      CancelToken* cancel, std::string* log) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  int unreachable = 0;
  bool said_loading = false;
  for (int i = 0; i < 1000000; ++i) {
    HttpResponse r = t->Get("/health", 5);
    if (r.transport_ok()) {
      unreachable = 0;
      if (r.status == 200 || r.status == 404) return Status::Ok();
      if (r.status == 503) {
        if (!said_loading && log) *log += "server is loading (GET /health: 503), waiting\n";
        said_loading = true;
      } else if (r.status == 401 || r.status == 403) {
        return Status::Unavailable(server.Origin() + "/health: HTTP " + std::to_string(r.status) +
                                   " (check server.api_key_env)");
      }
    } else if (++unreachable >= 3 && !said_loading) {
      return Status::Unavailable(
          "no server answers at " + server.Origin() + " (" + r.error +
          "). Start one, e.g.:\n  llama-server -m MODEL.gguf --host 127.0.0.1 --port 8080 -np 4 -c 32768\n"
          "or point the card's server.base_url (or --base-url) at a running server.");
    }
    if (elapsed() > timeout_s)
      return Status::Unavailable(server.Origin() + " not ready after " +
                                 std::to_string(static_cast<int>(timeout_s)) +
                                 " s (server.ready_timeout_s); last: " +
                                 (r.transport_ok() ? "HTTP " + std::to_string(r.status) : r.error));
    if (cancel ? !cancel->SleepFor(0.5) : false) return Status::Cancelled("interrupted while waiting for the server");
  }
  return Status::Unavailable("server not ready");
}

Status FetchServerProps(HttpTransport* t, const ServerConfig& server, ServerProps* out) {
  HttpResponse r = t->Get("/props", 10);
  if (r.transport_ok() && r.status == 200) {
    // A reply nested past the bound is refused whole (it would crash the
    // copies below); what is copied into run.json is bounded in size.
    if (Status b = CheckJsonBounds(r.body, "GET " + server.Origin() + "/props: reply"); !b.ok())
      return Status::ServerError(b.message());
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (!j.is_discarded() && j.is_object()) {
      out->has_props = true;
      if (j.contains("build_info") && j["build_info"].is_string())
        out->build_info = BoundedString(j["build_info"].get<std::string>(), 1024);
      if (j.contains("model_path") && j["model_path"].is_string())
        out->model_path = BoundedString(j["model_path"].get<std::string>(), 4096);
      if (j.contains("total_slots") && j["total_slots"].is_number_integer())
        out->total_slots = j["total_slots"].get<int>();
      auto dg = j.find("default_generation_settings");
      if (dg != j.end() && dg->is_object() && dg->contains("n_ctx") && (*dg)["n_ctx"].is_number_integer())
        out->n_ctx = (*dg)["n_ctx"].get<int>();
      if (j.contains("chat_template") && j["chat_template"].is_string())
        out->chat_template_sha256 = Sha256Hex(j["chat_template"].get<std::string>());
    }
  } else if (!r.transport_ok()) {
    return Status::Unavailable("GET " + server.Origin() + "/props: " + r.error);
  }
  HttpResponse m = t->Get(server.PathPrefix() + "/models", 10);
  if (m.transport_ok() && m.status == 200) {
    const std::string source = "GET " + server.Origin() + server.PathPrefix() + "/models: reply";
    if (Status b = CheckJsonBounds(m.body, source); !b.ok()) return Status::ServerError(b.message());
    auto j = nlohmann::json::parse(m.body, nullptr, false);
    if (!j.is_discarded()) out->models = BoundedCopy(j, source.substr(4));
  }
  return Status::Ok();
}

}  // namespace evalrun
