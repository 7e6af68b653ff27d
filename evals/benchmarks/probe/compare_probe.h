// `evalrun compare` on a probe part (probe.cc, verdict kind "logprobs",
// whose view hands its parts here: logprobs_kind.cc): how far B's next-token distributions moved from A's at the
// same positions of the same text (scorers/probe/probe_divergence.h for the
// math), and whether that is beyond the thresholds.
//
// Refused (InvalidInput, exit 1), naming the first difference: two runs of
// different texts (sha256), context words, top-K or planned positions; a
// position asked with different prompts (prompt_sha256); a position whose
// prompt token counts differ (another tokenizer: the same text is not the
// same token sequence, and the distributions are not of the same thing).
//
// Per position: KLD(A||B), top-1 agreement, |Δ logprob| of A's top token;
// their mean, median, p95, p99, max; the worst positions by KLD with a
// readable excerpt of the text before them. Thresholds (max_kld_mean,
// max_kld_p99, min_top1): the compare flags, else B's card keys of the part
// (recorded in results.json parts.<part>.info.thresholds), else A's; any
// exceeded is a regression (exit 4). None set: measured, no verdict.
// compare_probe_text.h shows the result.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_PROBE_COMPARE_PROBE_H_
#define EVALRUN_EVALS_BENCHMARKS_PROBE_COMPARE_PROBE_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/publish/compare_options.h"
#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"

namespace evalrun {

// The part's entry of evalrun.compare/1 `parts` (kind "logprobs"); its
// "verdict" is "regression", "within thresholds" or "measured".
Status CompareProbePart(const std::string& part, const RunFolder& a, const RunFolder& b,
                        const std::vector<SampleRecord>& sa, const std::vector<SampleRecord>& sb,
                        const CompareOptions& opts, nlohmann::json* out);

// With --noise A A2: `noise_a` against `noise_a2` (the same build probed
// twice) compared as CompareProbePart compares A with B, into `part_doc`
// (CompareProbePart's entry for A/B): "noise" = {a, a2, paired, kld,
// kld_histogram, abs_delta_top_logprob, top1_agreement, mean_ratio (A/B's
// mean KLD over the A/A pair's; null when that is 0), within_noise, label,
// text} and "within_noise". Within noise: A/B's mean KLD is not above the
// largest per-position KLD of the A/A pair. Like accuracy's label it never
// changes the verdict or the exit code. Refused (InvalidInput "--noise:
// ...") when the noise pair probes another text, positions or top-K than A,
// or pairs another number of positions than A/B.
Status ProbePartNoise(const std::string& part, const RunFolder& a, const RunFolder& noise_a,
                      const RunFolder& noise_a2, const std::vector<SampleRecord>& na,
                      const std::vector<SampleRecord>& na2, const CompareOptions& opts, nlohmann::json* part_doc);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_PROBE_COMPARE_PROBE_H_
