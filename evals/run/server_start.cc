// Waiting for the server: the managed engine started (server.command), then
// GET /health until it is ready, GET /props for its facts, and the slots;
// with several endpoints (server.endpoints) each of them, and that they all
// serve the same thing (evals/server/endpoint_identity.h).
#include <algorithm>

#include "evals/base/exit_codes.h"
#include "evals/run/run_steps.h"
#include "evals/server/client.h"
#include "evals/server/endpoint_identity.h"

namespace evalrun::run_internal {
namespace {

// The managed engine (for the question parts: a procedure restarts it
// itself).
StepExit StartEngine(const Job& job, CancelToken* cancel, Server* server, FILE* err) {
  const ServerConfig& cfg = job.card.server;
  std::fprintf(err, "evalrun: starting the engine (context %lld, %d slots); log: %s\n",
               static_cast<long long>(cfg.context), cfg.slots, server->engine->log_path().c_str());
  Status st = server->engine->Start(cfg.context, cfg.slots, cancel);
  if (st.code() == Status::Code::kCancelled) return Stop(err, st, kExitInterrupted);
  if (!st.ok()) return Stop(err, st.Prefixed("engine"), kExitUnreachable);
  return std::nullopt;
}

// /health, /props of one endpoint.
StepExit AwaitEndpoint(const Job& job, CancelToken* cancel, ServerEndpoint* ep, FILE* err) {
  const ServerConfig& cfg = ep->config;
  std::string log;
  std::fprintf(err, "evalrun: waiting for %s (up to %.0f s)\n", ep->origin.c_str(), cfg.ready_timeout_s);
  Status st = WaitUntilReady(ep->transport.get(), cfg, cfg.ready_timeout_s, cancel, &log);
  if (!log.empty()) std::fprintf(err, "evalrun: %s", log.c_str());
  if (st.code() == Status::Code::kCancelled) return Stop(err, st, kExitInterrupted);
  if (!st.ok()) return Stop(err, st, kExitUnreachable);
  st = FetchServerProps(ep->transport.get(), cfg, &ep->props);
  if (!st.ok()) return Stop(err, st, kExitUnreachable);
  (void)job;
  return std::nullopt;
}

// The card's slots for one endpoint, "auto" from its /props; a disagreeing
// number is used, with a warning.
StepExit ResolveSlots(const Job& job, ServerEndpoint* ep, const std::string& field, FILE* err) {
  int slots = ep->config.slots;
  const int total = ep->props.total_slots;
  if (slots == 0 && job.parts.empty()) {
    // Procedures only: no pool to size; the server's own count,
    // for the record and the page, where it gives a believable one.
    slots = total > 0 && total <= kMaxServerSlots ? total : 1;
  } else if (slots == 0) {
    if (total <= 0)
      return Stop(err, Status::InvalidInput(job.card.path + ": " + field + " is \"auto\" but " + ep->origin +
                                            "/props gives no total_slots; set " + field + " to a number"),
                  kExitBadInput);
    // A worker thread and a connection per slot: a server's claim is held
    // to the card's own bound.
    if (total > kMaxServerSlots)
      return Stop(err, Status::InvalidInput(job.card.path + ": " + field + " is \"auto\" but " + ep->origin +
                                            "/props claims " + std::to_string(total) + " slots (total_slots), more "
                                            "than the " + std::to_string(kMaxServerSlots) + " a card allows; nothing "
                                            "was asked. Set " + field + " to the number the server really has"),
                  kExitBadInput);
    slots = total;
  } else if (total > 0 && total != slots) {
    std::fprintf(err, "evalrun: warning: the card says %d slots but %s has %d (GET /props total_slots); "
                 "using %d\n", slots, ep->origin.c_str(), total, slots);
  }
  ep->slots = slots;
  return std::nullopt;
}

// Every endpoint against the first: the same model, build, context and chat
// template, or exit 1 (a note only with server.endpoints_differ).
StepExit CheckSameServed(const Job& job, Server* server, FILE* err) {
  std::string differ;
  for (size_t k = 1; k < server->endpoints.size(); ++k) {
    const auto diffs = EndpointIdentityDiff(server->endpoints[0].props, server->endpoints[k].props);
    if (diffs.empty()) continue;
    differ += "\n  " + server->endpoints[0].config.base_url + " vs " + server->endpoints[k].config.base_url + ": " +
              DescribeDifferences(diffs);
  }
  if (differ.empty()) return std::nullopt;
  if (job.card.server.endpoints_differ) {
    std::fprintf(err, "evalrun: note: the endpoints serve different things (server.endpoints_differ is set; "
                 "every sample records its endpoint):%s\n", differ.c_str());
    return std::nullopt;
  }
  return Stop(err, Status::InvalidInput(job.card.path + ": server.endpoints do not all serve the same model, build, "
                                        "context and chat template (GET /props, /v1/models):" + differ +
                                        "\nnothing was asked. Serve the same model on every endpoint, or set "
                                        "server.endpoints_differ to true to run them side by side on purpose"),
              kExitBadInput);
}

}  // namespace

StepExit StartServer(const Job& job, CancelToken* cancel, Server* server, FILE* err) {
  const Card& card = job.card;
  server->origin = card.server.Origin();
  // The engine: started (and always stopped) by evalrun when the card gives
  // server.command; else the server at base_url, used as is.
  server->engine = MakeEngine(card.server, job.dir.path() + "/server.log", job.token);
  server->transport = MakeHttpTransport(server->origin, job.token);
  const size_t n = card.server.EndpointCount();
  for (size_t k = 0; k < n; ++k) {
    ServerEndpoint ep;
    ep.config = card.server.ForEndpoint(k);
    ep.origin = ep.config.Origin();
    ep.token = k < job.tokens.size() ? job.tokens[k] : job.token;
    ep.transport = MakeHttpTransport(ep.origin, ep.token);
    server->endpoints.push_back(std::move(ep));
  }
  // Only procedures and a managed engine: they start it themselves.
  if (!job.parts.empty() || !job.managed) {
    if (job.managed)
      if (StepExit e = StartEngine(job, cancel, server, err)) return e;
    for (auto& ep : server->endpoints)
      if (StepExit e = AwaitEndpoint(job, cancel, &ep, err)) return e;
  }
  server->slots = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::string field = card.server.endpoints.empty() ? "server.slots"
                                                            : "server.endpoints[" + std::to_string(k) + "].slots";
    if (StepExit e = ResolveSlots(job, &server->endpoints[k], field, err)) return e;
    server->slots += server->endpoints[k].slots;
  }
  if (StepExit e = CheckSameServed(job, server, err)) return e;
  server->props = server->endpoints[0].props;
  for (const auto& ep : server->endpoints)
    if (ep.props.n_ctx > 0 && (server->props.n_ctx <= 0 || ep.props.n_ctx < server->props.n_ctx))
      server->props.n_ctx = ep.props.n_ctx;
  return std::nullopt;
}

}  // namespace evalrun::run_internal
