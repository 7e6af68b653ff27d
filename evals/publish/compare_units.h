// `evalrun compare`, step one: a part's records as the units that get
// paired between two runs, one list per metric (see evals/publish/compare.h
// for what each kind of part measures).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_

#include <string>
#include <vector>

#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"

namespace evalrun::compare_internal {

// One scored thing: a question, an instruction of a prompt, a RULER sample.
struct Unit {
  std::string key;                  // pairs A with B (the id, or id + position)
  std::string id;                   // the question id, as shown
  std::string label;                // shown beside flips: category, task @ length, ...
  std::vector<std::string> groups;  // one value per dimension of the metric
  double score = 0;                 // 0/1, or a fraction in [0, 1]
  std::string prompt_sha256;        // headline units only
  // What was answered, shown beside a flip: the extracted letter (or "(no
  // answer)"), "cut off" after it when the answer ran out of tokens; the
  // start of a RULER answer; the instructions a prompt did not follow.
  std::string answer;
};

struct Metric {
  std::string name;                 // "accuracy", "prompt_strict", ...
  std::string title;                // for people
  std::vector<std::string> dims;    // group dimensions ("category", ...)
  std::vector<Unit> units;
};

struct PartUnits {
  std::vector<Metric> metrics;      // metrics[0] is the headline
  std::string label_title;          // what Unit::label is: "category", "task @ length", "instructions"
};

// The units of `records` (all of `part`'s kind, *part.kind). Multiple
// choice and fractions: one metric, grouped by the definition's dimensions
// (those every record has the fields of; {category} without a definition);
// instruction following: prompt- and instruction-level strict, and loose
// when every record has it.
PartUnits ExtractUnits(const FolderPart& part, const std::vector<SampleRecord>& records);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_
