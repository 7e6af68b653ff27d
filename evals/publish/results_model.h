// results.json (docs/results-schema.md, evalrun.results/1) read into typed
// structs at the edge, for the publishers: the run's title fields and each
// part's common fields (counts, score, completeness, speeds, the repeat's
// flip rate). What is a kind's own (the instruction kind's four accuracies,
// the fraction kind's lengths, the code kind's groups) stays in `raw` for
// that kind's view (evals/publish/kind_view.h), which alone reads it.
//
// Every field is optional, as results.json has grown by additions only: a
// number or text absent (or of another type) in an older file is nullopt /
// "". Reading never fails on a missing field.
//
// Thread-safety: pure functions; plain values.
#ifndef EVALRUN_EVALS_PUBLISH_RESULTS_MODEL_H_
#define EVALRUN_EVALS_PUBLISH_RESULTS_MODEL_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

struct PartSpeeds {
  std::optional<double> prompt_tps, decode_tps, prompt_tokens, completion_tokens;
};

// `repeat` (evalrun run --repeat 2): fractions as written (0..1).
struct PartRepeat {
  std::optional<double> pairs, flips, flip_rate, mde, mde_below;
  std::optional<double> kld_mean, kld_max;  // a repeat of distributions: the KLD between them
  std::string text, formula;
};

struct PartResults {
  std::string kind;  // "" when not recorded
  std::optional<double> score, stderr_value, n, cut_off, no_answer, failed, planned;
  // Answers recovered from the server's raw text after its output parser
  // failed (`raw_fallback`), and answers lost to that parser, counted wrong
  // (`server_parse_error`): integers, nullopt in runs that did not record them.
  std::optional<double> raw_fallback, server_parse_error;
  std::optional<bool> complete;
  PartSpeeds speeds;
  std::optional<PartRepeat> repeat;
  nlohmann::json raw;  // parts.<name> as written
};

struct RunTitle {
  std::string job, card_name, card_path, card_sha256, finished_utc;
};

// parts.<name> of results.json (any JSON; a non-object reads as empty).
PartResults ReadPartResults(const nlohmann::json& part);
RunTitle ReadRunTitle(const nlohmann::json& results);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_RESULTS_MODEL_H_
