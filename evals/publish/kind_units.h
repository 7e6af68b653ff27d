// What `compare` pairs between two runs: a part's records as units, one
// list per metric. A verdict kind's view (kind_view.h) makes them; the
// helpers here are what the kinds share (one unit per record, scored by its
// headline, grouped by the part definition's dimensions).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_KIND_UNITS_H_
#define EVALRUN_EVALS_PUBLISH_KIND_UNITS_H_

#include <functional>
#include <string>
#include <vector>

#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"

namespace evalrun::compare_internal {

// One scored thing: a question, an instruction of a prompt, a sample scored
// as a fraction.
struct Unit {
  std::string key;                  // pairs A with B (the id, or id + position)
  std::string id;                   // the question id, as shown
  std::string label;                // shown beside flips: category, task @ length, ...
  std::vector<std::string> groups;  // one value per dimension of the metric
  double score = 0;                 // 0/1, or a fraction in [0, 1]
  std::string prompt_sha256;        // headline units only
  // What was answered, shown beside a flip: the extracted letter (or "(no
  // answer)"), "cut off" after it when the answer ran out of tokens; the
  // start of an answer scored as a fraction; the instructions a prompt did
  // not follow.
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

// What a unit shows as its answer, from its record.
using AnswerOf = std::function<std::string(const SampleRecord&)>;

// One unit per record, scored by its headline (HeadlineScore), in one
// metric `m`, grouped by the part definition's dimensions (those every
// record has the fields of; {category} without a definition) and, when
// the records name two or more endpoints, by endpoint.
PartUnits ScoredUnits(const FolderPart& part, const std::vector<SampleRecord>& records, Metric m,
                      const AnswerOf& answer);

// The start of the response (80 bytes, one line): the default answer shown.
std::string ResponseStart(const SampleRecord& r);
// `s` cut to the bytes shown beside a flip.
std::string ShownAnswer(const std::string& s);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_KIND_UNITS_H_
