// The steps of RunJob and ScoreJob (evals/run/runner.h), each in a file
// named for its job:
//   job_setup.cc      ResolveJob: the card, its parts, the job folder and its lock
//   prepare_parts.cc  PrepareBeforeServer, PrepareAfterServer
//   server_start.cc   StartServer: the managed engine, /health, /props, slots
//   run_key.cc        OpenRun (run key, run.json, resume check), LoadAnswered
//   shard_step.cc     ApplyShard, WriteShardFile (--shard I/N, evals/run/shard.h)
//   run_part.cc       RunQuestionPart: the pool, the writer, the records, the result
//   results_file.cc   WriteResults, PrintTable, the result's common keys
//   run_job.cc        RunJob: the steps in order, the procedures, the exit code
//   score_job.cc      ScoreJob
// A step that ends the job prints its message on `err` and returns the exit
// code (evals/base/exit_codes.h); nullopt: go on.
//
// Thread-safety: the steps run on the caller's thread; only the pool's
// workers and the writer run elsewhere (run_part.cc, answer_writer.h).
#ifndef EVALRUN_EVALS_RUN_RUN_STEPS_H_
#define EVALRUN_EVALS_RUN_RUN_STEPS_H_

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/cancel.h"
#include "evals/run/answer_journal.h"
#include "evals/run/card.h"
#include "evals/run/job_dir.h"
#include "evals/run/part.h"
#include "evals/run/part_registry.h"
#include "evals/run/runner.h"
#include "evals/run/sample_record.h"
#include "evals/run/shard.h"
#include "evals/server/client.h"
#include "evals/server/engine.h"
#include "evals/server/kv_capacity.h"
#include "evals/server/server_watch.h"
#include "evals/server/http.h"
#include "evals/server/server_info.h"

namespace evalrun::run_internal {

using StepExit = std::optional<int>;

// Prints "evalrun: <message>" on `err`; returns `code`. Exit 3 is for failed
// requests: a write error (kIoError) given with kExitIncomplete returns
// kExitWriteFailed instead, and kExitWriteFailed adds that the answers on
// disk are kept and how to resume.
StepExit Stop(FILE* err, const Status& st, int code);

// One part of the job: a question set (part) or a procedure.
struct PartRun {
  std::string name;
  const PartDefinition* def = nullptr;
  PartSettings settings;                  // the card's, narrowed by Part::FitToContext
  RequestSettings request;                // what every request of the part is sent with
  std::unique_ptr<Part> part;             // a question set, or
  std::unique_ptr<ProcedurePart> procedure;
  PreparedPart prepared;
  std::unordered_map<std::string, int> index_by_id;  // Item::id -> index in prepared.items
  ContextFit context;                     // what FitToContext left out
  std::string dir;                        // <job>/<name>
  std::vector<SampleRecord> answered;     // read back from samples.jsonl on resume
  // Answers the journal (answers.jsonl) holds and samples.jsonl lacks: an
  // earlier run was stopped before it scored them. By item index.
  std::vector<std::pair<size_t, UnscoredAnswer>> journaled;
  // --shard: every id of the selection before it was narrowed to this
  // shard's, in item order (empty when not sharded), and the part's "shard"
  // object of results.json ({index, count, selected}; null when not sharded).
  std::vector<std::string> selected;
  nlohmann::json shard;
  std::vector<SampleRecord> answered_repeat;  // the same from <job>/repeat-2/<name> (repeat 2)
  std::vector<std::pair<size_t, UnscoredAnswer>> journaled_repeat;
};

struct Job {
  Card card;
  std::vector<PartRun> parts;        // the question sets, in run order
  std::vector<PartRun> procedures;   // the others (procedures), in run order
  std::string data_dir;
  std::string token;                 // the bearer token (server.api_key_env), never written
  std::vector<std::string> tokens;   // each endpoint's (server.endpoints), tokens[0] == token
  JobDir dir;                        // <out>/<job>, locked for this process
  bool resuming = false;
  std::string old_run_text;          // run.json as found (resuming)
  bool managed = false;              // server.command: evalrun starts the engine
  int limit = -1;                    // --limit
  bool unsafe_exec = false;          // --unsafe-exec (PartContext::unsafe_exec)
  std::string sandbox_min;           // --sandbox LEVEL (PartContext::sandbox_min)
  bool force_resume = false;
  ShardSpec shard;                   // --shard I/N (count 0: not sharded)
  std::string run_key_sha256;        // set by ApplyShard when sharded
  int repeat = 1;                    // 2: every question part run twice (RunRepeat)
};

// One server of the card: server.endpoints[k], or the one at base_url.
struct ServerEndpoint {
  ServerConfig config;               // the card's server, as this endpoint's (ServerConfig::ForEndpoint)
  std::string origin;
  std::string token;                 // its bearer token, never written
  std::unique_ptr<HttpTransport> transport;
  ServerProps props;
  int slots = 1;
  TransportFactory Transports() const;
};

// The first endpoint's origin, transport and props (with several, the
// smallest n_ctx of all, which the items are fitted to); `slots` is every
// endpoint's together; `endpoints` has them all ([0] the first).
struct Server {
  std::string origin;
  std::unique_ptr<Engine> engine;    // managed, or the server at base_url
  std::unique_ptr<HttpTransport> transport;
  ServerProps props;
  int slots = 1;
  std::vector<ServerEndpoint> endpoints;
  TransportFactory Transports(const std::string& token) const;
};

// Resolves the names asked for (`flag`: "--parts", "--part"; empty: all the
// card's parts in run order) into job->parts and, when `procedures` is set,
// job->procedures (else a procedure is noted and left out).
Status ResolveParts(const Card& card, const std::vector<std::string>& asked, const std::string& flag,
                    bool procedures, Job* job, std::vector<std::string>* notes);

// The card, the parts, the job folder (claimed and locked), the token.
StepExit ResolveJob(const RunOptions& opts, Job* job, FILE* err);
// What the first Ctrl-C means until the first request (CancelToken::SetStopNote).
inline constexpr const char* kStopWhilePreparing = "preparation stops before any request is sent";

// Everything that needs no server, checked before any request. A cancelled
// preparation (Ctrl-C, SIGTERM) stops between parts and inside a part's
// token counting: "interrupted during preparation", exit 130.
StepExit PrepareBeforeServer(Job* job, CancelToken* cancel, FILE* err);
// The engine started (managed), /health, /props, the slots; with several
// endpoints each of them, and that they all serve the same model, build,
// context and chat template (exit 1 naming the fields and endpoints,
// unless server.endpoints_differ).
StepExit StartServer(const Job& job, CancelToken* cancel, Server* server, FILE* err);
// FitToContext, the parts that need the tokenizer, every item against the
// context. The tokenizer a part prepares with fails every count once
// `cancel` fires, so a long preparation (sizing prompts) stops within one count.
StepExit PrepareAfterServer(Job* job, const Server& server, CancelToken* cancel, FILE* err);
// The run key checked against a resumed job's (or run.json written); the
// job folder kept from then on.
StepExit OpenRun(Job* job, const Server& server, FILE* err);
// Every part's samples.jsonl read back through its codec before any request.
StepExit LoadAnswered(Job* job, FILE* err);

// The run key: the card without the keys its parts leave out of it (the
// question counts), the datasets' sha256, the server's build and model.
nlohmann::json RunKey(const Job& job, const Server& server);
// --shard I/N (evals/run/shard.h): every part's items narrowed to this
// shard's, after PrepareAfterServer; a resumed job must be the same shard.
// Nothing when the job is not sharded.
StepExit ApplyShard(Job* job, const Server& server, FILE* err);
// <job>/shard.json, after OpenRun (a resumed shard's is checked, not
// rewritten). Nothing when the job is not sharded.
StepExit WriteShardFile(const Job& job, FILE* err);
// {index, count, run_key_sha256}: "shard" of run.json and results.json.
nlohmann::json ShardJson(const Job& job);
// One endpoint as the pool uses it.
struct EndpointService {
  std::string name;                   // its base_url
  int slots = 1;
  ClientFactory make_client;          // one OpenAiClient per pool worker
  ServerWatch* watch = nullptr;       // outages and a changed server (evals/server/server_watch.h)
  KvCapacity kv;                      // whether its slots share one KV cache
};

// What every question part's run shares: the server, the clients, the
// watchers (RunJob makes them once, after OpenRun).
struct RunServices {
  const Job* job = nullptr;
  Server* server = nullptr;
  CancelToken* cancel = nullptr;
  FILE* err = nullptr;
  std::vector<EndpointService> endpoints;  // server->endpoints, in order
  std::function<bool()> pause;        // the load guard (may be empty)
  bool tty = false;                   // progress overprinted on a terminal
};

struct PartOutcome {
  nlohmann::json result;  // the part's object of results.json
  std::vector<SampleRecord> records;  // the part's records, scored, in item order
  int failed = 0;         // requests that failed after their retries
  Status stopped;         // why the pool stopped early (server gone or changed); Ok otherwise
};

// Sends the part's unanswered items through the pool; the writer scores and
// writes each answer as it arrives. A write error ends the job (exit 5,
// kExitWriteFailed, through Stop).
StepExit RunQuestionPart(PartRun* r, const RunServices& s, PartOutcome* out);

// --repeat 2: the part asked a second time, right after its first run, into
// a run folder of its own, <job>/repeat-2 (RepeatDir): its <name>/samples.jsonl
// and failed.jsonl, and its results.json (job "<job>/repeat-2"), so that
// nothing of the job itself changes but one key: `first->result` gets
// `repeat` (evals/run/repeat_summary.h: the flip rate between the two
// repeats and the smallest difference a comparison of this many items can
// detect, or what the kind measures between them itself). Resumes as the
// first run does (answered_repeat).
StepExit RunRepeat(PartRun* r, const RunServices& s, PartOutcome* first);
// <job>/repeat-2.
std::string RepeatDir(const Job& job);

// The runner's own keys of a part's results object.
void AddPartKeys(const PartRun& r, nlohmann::json* result);
// <job dir>/results.json with `parts_done` merged into what it holds.
Status WriteResults(const std::string& job_dir, const Card& card, const std::string& job,
                    const nlohmann::json& parts_done, const nlohmann::json& extra);
void PrintTable(FILE* out, const std::vector<PartRun>& runs, const nlohmann::json& parts);

// The records of `r` for its items, in item order (a record for an id not
// asked now is left out; of two for one id the last counts).
std::vector<SampleRecord> InItemOrder(const PartRun& r, std::vector<SampleRecord> records);

}  // namespace evalrun::run_internal

#endif  // EVALRUN_EVALS_RUN_RUN_STEPS_H_
