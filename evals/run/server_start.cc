// Waiting for the server: the managed engine started (server.command), then
// GET /health until it is ready, GET /props for its facts, and the slots.
#include "evals/base/exit_codes.h"
#include "evals/run/run_steps.h"
#include "evals/server/client.h"

namespace evalrun::run_internal {
namespace {

// The managed engine (for the question parts: a procedure restarts it
// itself), /health, /props.
StepExit AwaitServer(const Job& job, CancelToken* cancel, Server* server, FILE* err) {
  const ServerConfig& cfg = job.card.server;
  if (job.managed) {
    std::fprintf(err, "evalrun: starting the engine (context %lld, %d slots); log: %s\n",
                 static_cast<long long>(cfg.context), cfg.slots, server->engine->log_path().c_str());
    Status st = server->engine->Start(cfg.context, cfg.slots, cancel);
    if (st.code() == Status::Code::kCancelled) return Stop(err, st, kExitInterrupted);
    if (!st.ok()) return Stop(err, st.Prefixed("engine"), kExitUnreachable);
  }
  std::string log;
  std::fprintf(err, "evalrun: waiting for %s (up to %.0f s)\n", server->origin.c_str(), cfg.ready_timeout_s);
  Status st = WaitUntilReady(server->transport.get(), cfg, cfg.ready_timeout_s, cancel, &log);
  if (!log.empty()) std::fprintf(err, "evalrun: %s", log.c_str());
  if (st.code() == Status::Code::kCancelled) return Stop(err, st, kExitInterrupted);
  if (!st.ok()) return Stop(err, st, kExitUnreachable);
  st = FetchServerProps(server->transport.get(), cfg, &server->props);
  if (!st.ok()) return Stop(err, st, kExitUnreachable);
  return std::nullopt;
}

// The card's slots, "auto" from /props; a disagreeing number is used, with
// a warning.
StepExit ResolveSlots(const Job& job, Server* server, FILE* err) {
  int slots = job.card.server.slots;
  const int total = server->props.total_slots;
  if (slots == 0 && job.parts.empty()) {
    slots = 1;
  } else if (slots == 0) {
    if (total <= 0)
      return Stop(err, Status::InvalidInput(job.card.path + ": server.slots is \"auto\" but " + server->origin +
                                            "/props gives no total_slots; set server.slots to a number"),
                  kExitBadInput);
    slots = total;
  } else if (total > 0 && total != slots) {
    std::fprintf(err, "evalrun: warning: the card says %d slots but the server has %d (GET /props total_slots); "
                 "using %d\n", slots, total, slots);
  }
  server->slots = slots;
  return std::nullopt;
}

}  // namespace

StepExit StartServer(const Job& job, CancelToken* cancel, Server* server, FILE* err) {
  const Card& card = job.card;
  server->origin = card.server.Origin();
  // The engine: started (and always stopped) by evalrun when the card gives
  // server.command; else the server at base_url, used as is.
  server->engine = MakeEngine(card.server, job.dir.path() + "/server.log", job.token);
  server->transport = MakeHttpTransport(server->origin, job.token);
  // Only procedures and a managed engine: they start it themselves.
  if (!job.parts.empty() || !job.managed)
    if (StepExit e = AwaitServer(job, cancel, server, err)) return e;
  return ResolveSlots(job, server, err);
}

}  // namespace evalrun::run_internal
