// RunJob: the steps of a live run in order (evals/run/run_steps.h), the
// procedure parts after the question sets, and the exit code.
#include <unistd.h>

#include "evals/base/exit_codes.h"
#include "evals/run/load_log.h"
#include "evals/run/run_steps.h"
#include "evals/run/utc_now.h"
#include "evals/server/server_tokenizer.h"

namespace evalrun {
namespace run_internal {
namespace {

// How the run went, for the exit code.
struct Tally {
  nlohmann::json parts_done = nlohmann::json::object();
  int failed = 0;
  bool interrupted = false;
};

// Every question part through the pool; results.json after each.
StepExit RunQuestionParts(Job* job, Server* server, LoadLog* load, CancelToken* cancel, Tally* tally, FILE* err) {
  const Card& card = job->card;
  RetryPolicy retry;
  retry.retries = card.server.retries;
  RunServices s;
  s.job = job;
  s.server = server;
  s.cancel = cancel;
  s.err = err;
  // Per endpoint: its clients; its watch (it may go away and come back
  // mid-run: the pool waits for it and checks that it still serves the same
  // model, evals/server/server_watch.h); whether its slots share one KV
  // cache (evals/server/kv_capacity.h).
  std::vector<std::unique_ptr<HttpServerWatch>> watches;
  for (const ServerEndpoint& ep : server->endpoints) {
    EndpointService es;
    es.name = ep.config.base_url;
    es.slots = ep.slots;
    const ServerConfig* cfg = &ep.config;
    const std::string origin = ep.origin, token = ep.token;
    es.make_client = [cfg, origin, token, retry, cancel]() -> std::unique_ptr<Client> {
      return std::make_unique<OpenAiClient>(
          MakeHttpTransport(origin, token, static_cast<size_t>(cfg->max_reply_mb) << 20), *cfg, retry, cancel);
    };
    watches.push_back(std::make_unique<HttpServerWatch>(
        ep.Transports(), ep.config, ep.props, card.server.ready_timeout_s,
        [err](const std::string& line) { std::fprintf(err, "\nevalrun: %s\n", line.c_str()); }));
    es.watch = watches.back().get();
    es.kv = ResolveKvCapacity(ep.config, job->managed ? card.server.command : std::vector<std::string>(),
                              card.server.context, ep.props, ep.transport.get());
    s.endpoints.push_back(std::move(es));
  }
  if (card.load_sampling.guard) s.pause = [load] { return load->sampler()->ShouldPause(); };
  s.tty = isatty(fileno(err));
  for (auto& r : job->parts) {
    if (cancel->cancelled()) break;
    PartOutcome o;
    if (StepExit e = RunQuestionPart(&r, s, &o)) return e;
    auto write = [&]() {
      tally->parts_done[r.name] = o.result;
      nlohmann::json extra = {{"finished_utc", UtcNow()}, {"server", server->props.ToJson()},
                              {"load", load->sampler()->Summary()}};
      if (job->shard.sharded()) extra["shard"] = ShardJson(*job);
      return WriteResults(job->dir.path(), card, job->dir.job(), tally->parts_done, extra);
    };
    Status st = write();
    if (!st.ok()) return Stop(err, st, kExitWriteFailed);
    // --repeat 2: the part again into <job>/repeat-2; results.json once more with its `repeat`.
    if (job->repeat >= 2 && o.stopped.ok() && !cancel->cancelled()) {
      if (StepExit e = RunRepeat(&r, s, &o)) return e;
      st = write();
      if (!st.ok()) return Stop(err, st, kExitWriteFailed);
    }
    tally->failed += o.failed;
    if (cancel->cancelled()) tally->interrupted = true;
    if (!o.stopped.ok()) {
      // The server changed model or build, or never came back: what was
      // answered is kept (results.json says how far it got); resumable.
      std::fprintf(err, "evalrun: %s: %s\n", r.name.c_str(), o.stopped.message().c_str());
      if (job->managed) server->engine->Stop();
      return o.stopped.code() == Status::Code::kChanged ? kExitIncomplete : kExitUnreachable;
    }
  }
  return std::nullopt;
}

// What a procedure gets: the engine, transports, the GPU reading (the
// card's GPU at its peak per step), a tokenizer factory, the log.
ProcedureEnv EnvFor(const Job& job, const PartRun& r, Server* server, GpuReader* gpu, CancelToken* cancel,
                    FILE* err) {
  const Card& card = job.card;
  ProcedureEnv env;
  env.card = &card;
  env.settings = &r.settings;
  env.data_dir = job.data_dir;
  env.job_dir = job.dir.path();
  env.engine = server->engine.get();
  env.transports = server->Transports(job.token);
  env.cancel = cancel;
  const GpuSelector sel = CardGpu(card);
  if (sel.kind != GpuSelector::Kind::kNone) {
    env.gpu_mem_mib = [gpu, sel]() -> std::optional<double> {
      GpuInfo g;
      if (!gpu->Read(sel, &g).ok()) return std::nullopt;
      return g.mem_used_mib;
    };
  }
  env.make_tokenizer = [&card, &r](std::unique_ptr<HttpTransport> t) {
    return MakeServerTokenizer(std::move(t), card.server, r.request.thinking);
  };
  env.log = [err](const std::string& l) { std::fprintf(err, "evalrun: %s\n", l.c_str()); };
  return env;
}

// The procedures, each on this thread with the managed engine stopped.
StepExit RunProcedures(Job* job, Server* server, LoadLog* load, CancelToken* cancel, Tally* tally, FILE* out,
                       FILE* err) {
  RealCommandRunner smi_runner;
  GpuReader gpu(&smi_runner);
  for (auto& r : job->procedures) {
    if (cancel->cancelled()) break;
    nlohmann::json result;
    Status st = r.procedure->Run(EnvFor(*job, r, server, &gpu, cancel, err), &result);
    if (st.code() == Status::Code::kCancelled) tally->interrupted = true;
    else if (!st.ok()) return Stop(err, st.Prefixed("part " + r.name), kExitUnreachable);
    tally->parts_done[r.name] = result;
    st = WriteResults(job->dir.path(), job->card, job->dir.job(), tally->parts_done,
                      {{"finished_utc", UtcNow()}, {"load", load->sampler()->Summary()}});
    if (!st.ok()) return Stop(err, st, kExitWriteFailed);
    const std::string headline = r.procedure->Headline(result);
    if (!headline.empty()) std::fprintf(out, "\n%s\n", headline.c_str());
  }
  return std::nullopt;
}

int Finish(const Job& job, const Tally& tally, LoadLog* load, CancelToken* cancel, FILE* out, FILE* err) {
  PrintTable(out, job.parts, tally.parts_done);
  for (const auto& r : job.parts) {
    if (!tally.parts_done.contains(r.name) || !tally.parts_done[r.name].contains("repeat")) continue;
    std::fprintf(out, "repeat 2 of %s (%s/repeat-2): %s\n", r.name.c_str(), job.dir.path().c_str(),
                 tally.parts_done[r.name]["repeat"]["text"].get<std::string>().c_str());
  }
  std::fprintf(out, "\nmachine load: %s\n", load->sampler()->SummaryLine().c_str());
  std::fprintf(out, "results: %s/results.json\n", job.dir.path().c_str());
  if (tally.interrupted || cancel->cancelled()) {
    std::fprintf(err, "evalrun: interrupted; answers are kept. Resume with the same command and --job %s\n",
                 job.dir.job().c_str());
    return kExitInterrupted;
  }
  if (tally.failed > job.card.max_failed) {
    std::fprintf(err, "evalrun: %d requests failed (tolerance max_failed = %d); see */failed.jsonl. "
                 "Run the same command with --job %s to ask them again\n", tally.failed, job.card.max_failed,
                 job.dir.job().c_str());
    return kExitIncomplete;
  }
  return kExitOk;
}

}  // namespace
}  // namespace run_internal

int RunJob(const RunOptions& opts, CancelToken* cancel, FILE* out, FILE* err) {
  using namespace run_internal;
  Job job;
  Server server;
  cancel->SetStopNote(kStopWhilePreparing);
  if (StepExit e = ResolveJob(opts, &job, err)) return *e;
  if (StepExit e = PrepareBeforeServer(&job, cancel, err)) return *e;
  if (StepExit e = StartServer(job, cancel, &server, err)) return *e;
  if (StepExit e = PrepareAfterServer(&job, server, cancel, err)) return *e;
  if (StepExit e = ApplyShard(&job, server, err)) return *e;
  if (StepExit e = OpenRun(&job, server, err)) return *e;
  if (StepExit e = WriteShardFile(job, err)) return *e;
  if (StepExit e = LoadAnswered(&job, err)) return *e;

  LoadLog load(job.card, server.origin, job.dir.path() + "/load.jsonl",
                 job.managed ? static_cast<int>(server.engine->pid()) : 0, err);
  Tally tally;
  cancel->SetStopNote("no new requests; waiting for the answers in flight");
  if (StepExit e = RunQuestionParts(&job, &server, &load, cancel, &tally, err)) return *e;
  if (job.managed && !job.parts.empty()) {
    Status st = server.engine->Stop();
    if (!st.ok()) std::fprintf(err, "evalrun: warning: engine: %s\n", st.message().c_str());
  }
  cancel->SetStopNote("the procedure stops its step and the engine");
  if (StepExit e = RunProcedures(&job, &server, &load, cancel, &tally, out, err)) return *e;
  return Finish(job, tally, &load, cancel, out, err);
}

}  // namespace evalrun
