// How `evalrun compare` shows a probe part (the logprobs kind's view,
// logprobs_kind.cc), from its entry of the evalrun.compare/1 document
// (CompareProbePart, compare_probe.h) alone: its line in the verdict list
// and its section, in the Markdown and on the page of --html (the
// statistics, the thresholds, the per-position KLD distribution as a chart
// with the A/A pair's beside it, the positions whose top token changed and
// the worst ones with their text).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_PROBE_COMPARE_PROBE_TEXT_H_
#define EVALRUN_EVALS_BENCHMARKS_PROBE_COMPARE_PROBE_TEXT_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

// "- **Regression** in probe: max_kld_mean 1e-09 (--max-kld-mean): ...";
// "" when no threshold was set (measured only).
std::string ProbeVerdictMarkdown(const nlohmann::json& part_doc);
// "## <part> (logprob probe)" and what follows it.
std::string ProbePartMarkdown(const nlohmann::json& part_doc);

// " KLD mean ..., p99 ..., top-1 agreement ... %": after the part's badges
// in the page's verdict list.
std::string ProbeVerdictHtml(const nlohmann::json& part_doc);
// The part's whole <section> of the page (id CompareAnchor(part)).
std::string ProbePartHtml(const nlohmann::json& part_doc);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_PROBE_COMPARE_PROBE_TEXT_H_
