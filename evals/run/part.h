// A part is what a card's parts.<name> runs. Each is defined in its
// benchmark's folder, evals/benchmarks/<name>/ (its PartDefinition,
// evals/run/part_registry.h: name, card keys, verdict kind, factory), and
// registered by the benchmark's row of the table (evals/benchmarks/
// table.h); its own grading lives in scorers/<name>/ and its data manifest
// beside it.
//
// Two kinds of part:
//   - a question set (Part): the runner asks it for its items (Prepare),
//     sends them through the request pool, and scores each answer once, as
//     it arrives (Score, on the writer thread). Aggregate turns the scored
//     records into the part's object in results.json. `evalrun score`
//     re-scores recorded responses with the same Score.
//   - a procedure (ProcedurePart): given the engine and a way to talk
//     to it, it runs on its own and returns its results object.
#ifndef EVALRUN_EVALS_RUN_PART_H_
#define EVALRUN_EVALS_RUN_PART_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/cancel.h"
#include "evals/base/status.h"
#include "evals/run/card.h"
#include "evals/run/prompt_spool.h"
#include "evals/run/sample_record.h"
#include "evals/run/verdict.h"
#include "evals/server/engine.h"
#include "evals/server/http.h"
#include "evals/server/tokenizer.h"
#include "evals/server/types.h"

namespace evalrun {

struct PartContext {
  const Card* card = nullptr;
  const PartSettings* settings = nullptr;  // parts.<name>, read through the part's keys
  const RequestSettings* request = nullptr;  // its sampling, thinking, budget, cache (null: the card's)
  std::string data_dir;
  Tokenizer* tokenizer = nullptr;   // the server's tokenizer (PartDefinition::needs_tokenizer); else null
  bool all_items = false;           // `score`: every item, ignoring the selection
  std::string input_override;       // `score --input FILE`: another dataset file
  int limit = -1;                   // --limit N: at most N items (smoke runs)
  bool unsafe_exec = false;         // --unsafe-exec: run model-written code without isolation if need be
  std::string sandbox_min;          // --sandbox LEVEL: the weakest sandbox level accepted ("": the part's key)
  // A fresh connection to the server, for a part prepared after it
  // (PartDefinition::needs_tokenizer) that asks it something of its own
  // before any item (a check of the server's thinking switch); else empty.
  TransportFactory server;
};

// One question as sent: the prompt plus what the scorer needs.
struct Item {
  std::string id;          // the dataset's question id, as a string
  std::string category;
  // The messages; when `spooled` is valid, the first message's content is
  // not here but in PreparedPart::spool (long prompts are kept on disk).
  Prompt prompt;
  SpoolRef spooled;
  std::string prompt_sha256;
  ItemFields fields;             // written into each sample line (gold, choice_order, task, ...)
  int counted_prompt_tokens = -1;  // the exact prompt tokens the part counted (-1: not counted)
  int scorer_index = -1;         // private to the part: where its scorer keeps this item's data
  // The item's own request settings, applied instead of the part's (a part
  // may ask the same question with thinking on and off); unset:
  // the part's. run.json and results.json record the part's.
  std::optional<RequestSettings> request;
};

struct PreparedPart {
  std::vector<Item> items;                 // in dataset order
  std::shared_ptr<PromptSpool> spool;      // where spooled prompts are (may be null)
  nlohmann::json info = nlohmann::json::object();  // selection, dataset sha256, profile: into results.json
  std::vector<std::string> notes;          // printed for the user (skipped tasks, ...)
};

// The item's prompt, whole (a spooled first message read back).
Status LoadItemPrompt(const PreparedPart& part, const Item& item, Prompt* out);

// What the runner does with a part's work against the server's context of
// one request, decided by the part before it is prepared (FitToContext).
struct ContextFit {
  bool skip_items = false;  // an item over the context is left out (else: exit 1)
  nlohmann::json skipped = nlohmann::json::array();  // {task, length, reason} left out of the settings
};

class Part {
 public:
  virtual ~Part() = default;
  // Called once the server's per-request context is known (`request_ctx`
  // tokens; <= 0: unknown), before Prepare of a part that needs the
  // tokenizer: may leave settings out (lengths over the context) and say so in
  // fit->skipped. InvalidInput (naming parts.<name>.<key>) stops the run
  // before any request. Default: nothing left out, items over are an error.
  virtual Status FitToContext(int64_t request_ctx, PartSettings* settings, ContextFit* fit) const;
  // Loads and checks the data, selects the items, builds the prompts. Errors
  // name the file and field. Called once, before any request.
  virtual Status Prepare(const PartContext& ctx, PreparedPart* out) = 0;
  // Finds the item a recorded response belongs to (`evalrun score`). The
  // default matches the line's "id" to Item::id. -1 when none matches; then
  // *why may say why (else the runner's message names the id).
  virtual int FindItem(const nlohmann::json& response_line,
                       const std::unordered_map<std::string, int>& index_by_id, std::string* why) const;
  // The verdict on `answer` to `item`, of the definition's verdict kind.
  // Pure and callable from any thread (the writer thread calls it once per
  // answer, as it arrives; `score` on recorded responses).
  virtual Verdict Score(const Item& item, const Completion& answer) const = 0;
  // The part's object of results.json from the records (in item order, each
  // read back as written) and the number of failed requests.
  virtual nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                                   const PreparedPart& prepared) const = 0;
};

// What a procedure part gets from the runner.
struct ProcedureEnv {
  const Card* card = nullptr;
  const PartSettings* settings = nullptr;
  std::string data_dir;
  std::string job_dir;               // the run folder (a part writes its files under <job_dir>/<name>/)
  Engine* engine = nullptr;          // the managed engine (restartable), or the running server
  TransportFactory transports;       // a fresh transport to the engine's origin per call
  CancelToken* cancel = nullptr;
  // The GPU memory in use now (MiB), nullopt when unreadable; empty when the
  // card names no GPU.
  std::function<std::optional<double>()> gpu_mem_mib;
  // A token counter for the server behind a transport (evals/server/server_tokenizer.h).
  std::function<std::unique_ptr<Tokenizer>(std::unique_ptr<HttpTransport>)> make_tokenizer;
  std::function<void(const std::string&)> log;  // progress lines for the user
};

class ProcedurePart {
 public:
  virtual ~ProcedurePart() = default;
  // Before any server is asked: checks the data and the settings. Errors
  // name the file or key (exit 1).
  virtual Status Check(const PartContext& ctx) = 0;
  // Runs on the caller's thread, after the question sets, with the managed
  // engine stopped. *result is the part's object of results.json, set also
  // when the status is not Ok. Cancelled: interrupted (resumable).
  virtual Status Run(const ProcedureEnv& env, nlohmann::json* result) = 0;
  // One line for stdout after the run ("" for none).
  virtual std::string Headline(const nlohmann::json& result) const { return ""; }
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_PART_H_
