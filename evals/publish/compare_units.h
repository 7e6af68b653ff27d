// `evalrun compare`, step one: a part's sample lines as the units that get
// paired between two runs, one list per metric (see evals/publish/compare.h for
// what each kind of part measures).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun::compare_internal {

// One scored thing: a question, an instruction of a prompt, a RULER sample.
struct Unit {
  std::string key;                  // pairs A with B (the id, or id + position)
  std::string id;                   // the question id, as shown
  std::string label;                // shown beside flips: category, task @ length, ...
  std::vector<std::string> groups;  // one value per dimension of the metric
  double score = 0;                 // 0/1, or a fraction in [0, 1]
  std::string prompt_sha256;        // headline units only
};

struct Metric {
  std::string name;                 // "accuracy", "prompt_strict", ...
  std::string title;                // for people
  std::vector<std::string> dims;    // group dimensions ("category", ...)
  std::vector<Unit> units;
};

struct PartUnits {
  std::string kind;                 // "choice", "ifeval", "fraction"
  std::vector<Metric> metrics;      // metrics[0] is the headline
};

// The kind of a part: by name for the built-in parts, else from the first
// sample that carries a verdict (`strict` object: "ifeval", boolean
// `correct`: "choice", numeric `score`: "fraction"); "" when none does.
std::string GuessKind(const std::string& part, const std::vector<nlohmann::json>& samples);

// The units of `samples` (read from `path`) for `kind` (one GuessKind
// returned, not ""). InvalidInput names the path, the sample's number (1
// for the first) and id, and the field: "runs/a/mmlupro/samples.jsonl: sample 12 (id \"q7\"):
// correct: expected true or false".
Status ExtractUnits(const std::string& kind, const std::string& path,
                    const std::vector<nlohmann::json>& samples, PartUnits* out);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_
