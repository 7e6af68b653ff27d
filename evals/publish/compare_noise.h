// `evalrun compare A B --noise A A2`: the noise floor of each part, measured
// on an A/A pair (the same build run twice, e.g. the two repeats of
// `evalrun run --repeat 2`: runs/<job> and runs/<job>/repeat-2), and
// whether A/B's headline difference is within it (scorers/noise_floor.h
// for the formula).
//
// The noise pair must cover the same parts and items as A/B: every part
// compared must be in both noise runs, with the same verdict kind, and the
// headline units paired in the noise pair must be exactly those paired in
// A/B; anything else is refused (InvalidInput naming the part, the folders
// and an example id).
//
// Thread-safety: pure functions over their arguments.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_NOISE_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_NOISE_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/publish/compare_options.h"
#include "evals/publish/compare_units.h"
#include "evals/publish/run_folder.h"

namespace evalrun::compare_internal {

struct NoisePair {
  bool given = false;   // --noise was given
  RunFolder a, a2;
};

// Loads the --noise folders when opts names them (both or neither: the
// flag takes two). NotFound / InvalidInput as LoadRunFolder, prefixed
// "--noise: ".
Status LoadNoisePair(const CompareOptions& opts, NoisePair* out);

// The document's top-level `noise_floor`: {measured, a, a2, alpha, power,
// formula, text}; without --noise {measured: false, text: "no noise floor
// was measured ..."}.
nlohmann::json NoiseFloorSummary(const NoisePair& pair, const CompareOptions& opts);

// The records of `part` in both noise runs (InvalidInput "--noise: ..." when
// a run lacks the part or records another verdict kind); a torn last line
// gets a note.
Status ReadNoiseRecords(const NoisePair& pair, const std::string& part, VerdictKind kind,
                        std::vector<SampleRecord>* a, std::vector<SampleRecord>* a2, nlohmann::json* notes);

// Part `part`'s `noise` object: NoiseFloorJson of the noise pair's headline
// metric for the n items A/B paired (`head_a`, `head_b`), plus
// {delta (A/B's), within_noise, label ("within noise" / "beyond noise")}.
// *notes gets a line when the noise pair's prompts differ.
Status PartNoise(const NoisePair& pair, const std::string& part, VerdictKind kind, const Metric& head_a,
                 const Metric& head_b, double delta, const CompareOptions& opts, nlohmann::json* out,
                 nlohmann::json* notes);

// A part's detectable difference in percentage points as shown in a table:
// "1.72", "< 0.25 (no flips)" or "(nothing paired)" (plain text).
std::string DetectableDifferenceText(const nlohmann::json& noise);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_NOISE_H_
