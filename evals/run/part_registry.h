// The part registry: one definition per part, registered by the benchmark
// table (evals/benchmarks/table.h: a benchmark's row lists its parts):
//
//   PartDefinition GsmDefinition() { ... }
//   EVALRUN_BENCHMARK(Benchmark{.name = "gsm", .parts = {GsmDefinition()}, ...});
//
// Everything that needs to know a part asks here: the card parser (its
// keys), the runner (its factory, whether it needs the server's tokenizer,
// the run key), the run-folder reader (run order), `report` and `compare`
// (display name, verdict kind, group dimensions) and the command line's
// help. None of them names a part.
//
// Registration runs during static initialisation (evalrun_core is an OBJECT
// library so that no registrar is dropped by the linker, CMakeLists.txt);
// the lookups are for after it, from any thread.
#ifndef EVALRUN_EVALS_RUN_PART_REGISTRY_H_
#define EVALRUN_EVALS_RUN_PART_REGISTRY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evals/run/card_keys.h"
#include "evals/run/verdict.h"

namespace evalrun {

class Part;           // a question set (evals/run/part.h)
class ProcedurePart;  // a part that drives the server itself (evals/run/part.h)

// One way `compare` groups a part's units (a table per dimension, a row per
// value) and the report labels a sample: the values of `fields` joined by
// " @ ". A field is an item field of the sample lines, or "category".
struct GroupDimension {
  std::string title;                // "length", "task @ length"
  std::vector<std::string> fields;  // {"length"}, {"task", "length"}
};

struct PartDefinition {
  std::string name;          // parts.<name> in the card; <job>/<name>/ in the run folder
  std::string display_name;  // "<Title>", in reports
  int run_order = 0;         // parts run, and are listed, by ascending run_order
  // The kind of its verdicts (evals/run/verdict.h); nullopt for a part that
  // writes no samples (not a question set).
  std::optional<VerdictKind> verdict;
  // Prepared only once the server answers, with its tokenizer (sizes
  // prompts by the server's own token counts).
  bool needs_tokenizer = false;
  std::vector<CardKey> keys;  // what parts.<name> takes, in the order they are checked
  // Resume scores the stored answers again and warns where a stored verdict
  // differs (evals/run/rescore_stored.h). A part whose scorer is costly (code
  // run in a sandbox) sets false: its stored verdicts are then trusted.
  bool rescore_on_resume = true;
  // `compare`: its group dimensions (a dimension a sample lacks a field of
  // is left out); empty: {category}. `label`: what names a unit beside a
  // flip and a sample in the report's browser; empty: {category}.
  std::vector<GroupDimension> groups;
  std::vector<std::string> label;
  // Exactly one is set: a question set (its items sent through the request
  // pool, each answer scored), or a procedure (one that restarts the engine, say).
  std::function<std::unique_ptr<Part>()> make_part;
  std::function<std::unique_ptr<ProcedurePart>()> make_procedure;

  bool question_set() const { return static_cast<bool>(make_part); }
};

// Registers `def` (a second definition of one name aborts: a programming
// error). Called by the benchmark table's registrar (EVALRUN_BENCHMARK).
void RegisterPart(PartDefinition def);

// A part that needs the tokenizer may declare this bool key: when the
// server cannot count tokens, the runner then gives it a byte-based
// estimate with a safety margin instead of stopping (exit 2).
inline constexpr const char* kAllowEstimatedTokensKey = "allow_estimated_tokens";
bool AcceptsEstimatedTokens(const PartDefinition& def, const PartSettings& settings);

// The definition of `name`, or null.
const PartDefinition* FindPartDefinition(std::string_view name);
// Every definition in run order (ties by name).
const std::vector<const PartDefinition*>& PartDefinitions();
// Their names, in run order.
const std::vector<std::string>& KnownPartNames();
// The display_name ("<Title>") of a registered part, else the name as it is.
std::string PartDisplayName(const std::string& name);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_PART_REGISTRY_H_
