// The options of `evalrun compare` (evals/publish/compare.h), shared by its
// steps, and the names its document uses.
//
// Thread-safety: plain values.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_OPTIONS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scorers/statistics.h"

namespace evalrun {

struct CompareOptions {
  std::string run_a;                // run folders (runs/<job>)
  std::string run_b;
  std::vector<std::string> parts;   // empty: every part both runs have
  double alpha = 0.05;              // significance level, (0, 1)
  double min_delta = 0.0;           // percentage points, >= 0
  bool json = false;                // JSON instead of Markdown on `out`
  // --html FILE: also write the comparison as one self-contained page
  // (evals/publish/compare_html.h); "": none.
  std::string html_path;
  int resamples = kBootstrapResamples;
  uint64_t seed = kBootstrapSeed;
  int max_flips_shown = 50;         // per part in Markdown (JSON lists all)
  // --noise A A2: the same build run twice (an A/A pair), from which each
  // part's noise floor is measured (evals/publish/compare_noise.h); empty:
  // none measured.
  std::string noise_a;
  std::string noise_a2;
  // For a kind compared by its distributions of next tokens (a kind that
  // compares on its own, kind_view.h): thresholds that override its parts'
  // card keys of the same names; unset: the card's, if any.
  std::optional<double> max_kld_mean, max_kld_p99, min_top1;
  int worst_positions_shown = 10;   // its worst positions listed (JSON and Markdown)
};


}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_OPTIONS_H_
