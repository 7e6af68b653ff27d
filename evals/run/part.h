// A part is one benchmark (MMLU-Pro, GPQA, IFEval, RULER, fit). Adding a
// benchmark means one file in evals/parts/, one scorer in scorers/, one
// manifest in datasets/manifests/, and a line in the registry.
//
// The runner asks a part for its items (Prepare), sends them, and scores
// each saved answer with Score — the same code for a live run, a resumed run
// and `evalrun score` on recorded answers. Aggregate turns the scored sample
// lines into the part's object in results.json.
#ifndef EVALRUN_EVALS_RUN_PART_H_
#define EVALRUN_EVALS_RUN_PART_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/card.h"
#include "evals/run/prompt_spool.h"
#include "evals/base/status.h"
#include "evals/server/tokenizer.h"
#include "evals/server/types.h"

namespace evalrun {

struct PartContext {
  const Card* card = nullptr;
  const PartConfig* config = nullptr;
  std::string data_dir;
  Tokenizer* tokenizer = nullptr;   // the server's tokenizer (RULER); may be null
  bool all_items = false;           // `score`: every item, ignoring the selection
  std::string input_override;       // `score --input FILE`: another dataset file
  int limit = -1;                   // --limit N: at most N items (smoke runs)
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
  nlohmann::json fields = nlohmann::json::object();  // written into samples.jsonl (gold, choice_order, ...)
  nlohmann::json score_data;                          // private to the part's scorer
};

struct PreparedPart {
  std::vector<Item> items;                 // in dataset order
  std::shared_ptr<PromptSpool> spool;      // where spooled prompts are (may be null)
  nlohmann::json info = nlohmann::json::object();  // selection, dataset sha256, profile: into results.json
  std::vector<std::string> notes;          // printed for the user (skipped tasks, ...)
};

// The item's prompt, whole (a spooled first message read back).
Status LoadItemPrompt(const PreparedPart& part, const Item& item, Prompt* out);

class Part {
 public:
  virtual ~Part() = default;
  virtual std::string name() const = 0;
  // True when Prepare needs the server's tokenizer (it then runs after the
  // server is ready; the others are prepared before any request).
  virtual bool NeedsTokenizer() const { return false; }
  // Finds the item a recorded response belongs to (`evalrun score`). The
  // default matches the line's "id" to Item::id; -1 when none matches.
  virtual int FindItem(const nlohmann::json& response_line, const PreparedPart& prepared,
                       const std::unordered_map<std::string, int>& index_by_id) const;
  // Loads and checks the data, selects the items, builds the prompts. Errors
  // name the file and field. Called once, before any request.
  virtual Status Prepare(const PartContext& ctx, PreparedPart* out) = 0;
  // Adds the verdict fields (extracted, correct, ...) to `sample`, which
  // already holds the common ones (response, finish_reason, ...). Pure and
  // callable from any thread.
  virtual void Score(const Item& item, const Completion& answer, nlohmann::json* sample) const = 0;
  // The part's object of results.json from the scored samples (in item
  // order) and the number of failed requests.
  virtual nlohmann::json Aggregate(const std::vector<nlohmann::json>& samples, int failed,
                                   const PreparedPart& prepared) const = 0;
  // Short rows for the stdout table: {label, value}.
  virtual std::vector<std::pair<std::string, std::string>> Summary(const nlohmann::json& result) const;
};

// The part registry (a table, cf. ninja's tools). Returns null for unknown
// names; `KnownPartNames()` lists them.
std::unique_ptr<Part> MakePart(const std::string& name);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_PART_H_
