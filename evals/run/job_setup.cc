// The first step of a run: the card, its parts, the job folder and its lock.
#include <unistd.h>

#include <cstdlib>

#include "datasets/manifest.h"
#include "evals/base/redact.h"
#include "evals/base/exit_codes.h"
#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"
#include "evals/base/time_text.h"
#include "evals/run/run_steps.h"
#include "evals/run/shard_auto.h"
#include "evals/server/base_url.h"

namespace evalrun {

std::string DefaultJobName(const std::string& card_name) {
  return card_name + "-" + FormatUtcCompact(UnixSecondsNow());
}

namespace run_internal {

StepExit Stop(FILE* err, const Status& st, int code) {
  std::fprintf(err, "evalrun: %s\n", st.message().c_str());
  if (code == kExitIncomplete && st.code() == Status::Code::kIoError) code = kExitWriteFailed;
  if (code == kExitWriteFailed)
    std::fprintf(err, "evalrun: the answers already on disk are kept; make room and run the same command with "
                 "the same --job to resume\n");
  return code;
}

TransportFactory Server::Transports(const std::string& token) const {
  const std::string o = origin;
  return [o, token] { return MakeHttpTransport(o, token); };
}

TransportFactory ServerEndpoint::Transports() const {
  const std::string o = origin, t = token;
  return [o, t] { return MakeHttpTransport(o, t); };
}

Status ResolveParts(const Card& card, const std::vector<std::string>& asked, const std::string& flag,
                    bool procedures, Job* job, std::vector<std::string>* notes) {
  std::vector<std::string> names;
  if (asked.empty()) {
    for (const auto& n : KnownPartNames())
      if (card.FindPart(n)) names.push_back(n);
  } else {
    for (const auto& n : asked) {
      if (!FindPartDefinition(n))
        return Status::InvalidInput(flag + ": unknown part \"" + n + "\"" + DidYouMean(n, KnownPartNames()));
      if (!card.FindPart(n))
        return Status::InvalidInput(flag + ": part \"" + n + "\" is not in the card " + card.path +
                                    " (add parts." + n + " to it)");
      names.push_back(n);
    }
  }
  for (const auto& n : names) {
    PartRun r;
    r.name = n;
    r.def = FindPartDefinition(n);
    r.settings = card.FindPart(n)->settings;
    r.request = card.FindPart(n)->request;
    if (r.def->question_set()) {
      r.part = r.def->make_part();
      job->parts.push_back(std::move(r));
    } else if (procedures) {
      r.procedure = r.def->make_procedure();
      job->procedures.push_back(std::move(r));
    } else {
      notes->push_back("part " + n + " is not a question set and cannot be re-scored; skipped");
    }
  }
  if (job->parts.empty() && job->procedures.empty())
    return Status::InvalidInput("no part to run (card " + card.path + ")");
  return Status::Ok();
}

namespace {

// The names of the job's procedures, for messages ("<name>, <name>").
std::string ProcedureNames(const Job& job) {
  std::string s;
  for (const auto& r : job.procedures) s += (s.empty() ? "" : ", ") + r.name;
  return s;
}

// The card and the parts asked for; bad input is exit 1.
StepExit LoadParts(const RunOptions& opts, Job* job, FILE* err) {
  Status st = LoadCard(opts.card_path, &job->card);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  Card& card = job->card;
  if (!opts.base_url.empty() && !card.server.endpoints.empty())
    return Stop(err, Status::InvalidInput("--base-url: " + card.path + " lists server.endpoints (several servers); "
                                          "edit the card instead"),
                kExitBadInput);
  if (!opts.base_url.empty()) {
    st = CheckBaseUrl(opts.base_url, &card.server.base_url);
    if (!st.ok()) return Stop(err, st.Prefixed("--base-url"), kExitBadInput);
  }
  std::vector<std::string> notes;
  st = ResolveParts(card, opts.parts, "--parts", true, job, &notes);
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  if (job->shard.sharded() && !job->procedures.empty()) {
    // A procedure drives the engine as a whole: it has no items to share out.
    notes.push_back("--shard: " + ProcedureNames(*job) + " is not a question set and is not sharded; left out "
                    "(run it once on its own with --parts " + ProcedureNames(*job) + ")");
    job->procedures.clear();
    if (job->parts.empty()) return Stop(err, Status::InvalidInput("--shard: no question part to run"), kExitBadInput);
  }
  for (const auto& n : notes) std::fprintf(err, "evalrun: note: %s\n", n.c_str());
  job->managed = !card.server.command.empty();
  if (job->managed && !job->parts.empty() && (card.server.context <= 0 || card.server.slots <= 0)) {
    const std::string others = job->procedures.empty() ? "" : " (all but " + ProcedureNames(*job) + ")";
    return Stop(err, Status::InvalidInput(card.path + ": server.command is set: the question parts" + others +
                                          " need server.context (the engine's {context}) and a number in "
                                          "server.slots"),
                kExitBadInput);
  }
  return std::nullopt;
}

}  // namespace

StepExit ResolveJob(const RunOptions& opts, Job* job, FILE* err) {
  if (opts.shard == "auto") {
    std::string from;
    Status st = ResolveAutoShard([](const char* name) { return std::getenv(name); }, &job->shard, &from);
    if (!st.ok()) return Stop(err, st, kExitBadInput);
    std::fprintf(err, "evalrun: --shard auto: shard %s from %s\n", job->shard.Text().c_str(), from.c_str());
  } else if (!opts.shard.empty()) {
    Status st = ParseShard(opts.shard, "--shard", &job->shard);
    if (!st.ok()) return Stop(err, st, kExitBadInput);
  }
  if (StepExit e = LoadParts(opts, job, err)) return e;
  job->data_dir = opts.data_dir.empty() ? DefaultDataDir() : opts.data_dir;
  job->limit = opts.limit;
  job->unsafe_exec = opts.unsafe_exec;
  job->sandbox_min = opts.sandbox_min;
  job->force_resume = opts.force_resume;
  job->repeat = opts.repeat > 0 ? opts.repeat : job->card.repeat;
  // The job folder, locked for this process (evals/run/job_dir.h); removed
  // again on a failure before run.json is written.
  Status st = job->dir.Open(opts.out_dir, opts.job, DefaultJobName(job->card.name));
  if (!st.ok()) return Stop(err, st, kExitBadInput);
  // Resume or new: an existing job is continued, never overwritten.
  job->resuming = ReadFileToString(job->dir.path() + "/run.json", &job->old_run_text).ok();
  // A job that began a second repeat goes on with it unless --repeat says otherwise.
  if (job->resuming && opts.repeat == 0 && job->repeat < 2 && access(RepeatDir(*job).c_str(), F_OK) == 0) {
    job->repeat = 2;
    std::fprintf(err, "evalrun: %s exists: the job runs every part twice (--repeat 1 to stop that)\n",
                 RepeatDir(*job).c_str());
  }
  if (access(job->dir.path().c_str(), W_OK) != 0)
    return Stop(err, Status::InvalidInput(job->dir.path() + ": output folder is not writable"), kExitBadInput);
  // Each endpoint's token (server.endpoints[k].api_key_env, else server.api_key_env).
  const ServerConfig& server = job->card.server;
  for (size_t k = 0; k < server.EndpointCount(); ++k) {
    const std::string env = server.ForEndpoint(k).api_key_env;
    const std::string field =
        server.endpoints.empty() ? "server.api_key_env" : "server.endpoints[" + std::to_string(k) + "].api_key_env";
    std::string token;
    if (!env.empty()) {
      const char* t = std::getenv(env.c_str());
      if (!t || !*t)
        return Stop(err, Status::InvalidInput(job->card.path + ": " + field + ": the environment variable " + env +
                                              " is not set"),
                    kExitBadInput);
      token = t;
      if (Status k = CheckApiKey(token, job->card.path + ": " + field, env); !k.ok())
        return Stop(err, k, kExitBadInput);
      RegisterSecret(token);
    }
    job->tokens.push_back(token);
  }
  job->token = job->tokens[0];
  return std::nullopt;
}

}  // namespace run_internal
}  // namespace evalrun
