// The report's section of a probe part (the logprobs kind's view,
// logprobs_kind.cc), placed with the results (ReportSection::results_*,
// evals/publish/kind_view.h): what its next-token distributions look like;
// `evalrun compare` says how they moved (compare_probe.h).
//
// The model: {part, title, positions, confident_pct (% of positions whose
// top token has p > 0.5), top1_logprob {mean, min, p05, median, p95, max}
// (results.json), prompt_tokens_mean, top_logprobs (K), text (its file),
// histogram: [{name, n, score (%)}] of the top-1 probability by tenths,
// rows: [{position, token, logprob, p, excerpt, next_word}] (the first
// kProbeRowsShown positions), rows_cut}.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_PROBE_PROBE_REPORT_H_
#define EVALRUN_EVALS_BENCHMARKS_PROBE_PROBE_REPORT_H_

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"

namespace evalrun {

inline constexpr size_t kProbeRowsShown = 200;

// The model above from the part's results.json object `results_part` and
// its records (logprobs verdicts).
nlohmann::json ProbeReportModel(const FolderPart& part, const nlohmann::json& results_part,
                                const std::vector<SampleRecord>& records);

// The top-1 logprob summary under "### <title>: next-token distributions".
std::string ProbeReportMarkdown(const nlohmann::json& model);
// <section id="probe">: the summary, the histogram as a bar chart, the
// positions.
std::string ProbeReportHtml(const nlohmann::json& model);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_PROBE_PROBE_REPORT_H_
