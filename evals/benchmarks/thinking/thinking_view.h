// How `evalrun report` and `evalrun compare` show the thinking part
// (evals/benchmarks/thinking/thinking.cc), rendered from its results.json object
// (`parts.thinking`, docs/results-schema.md) and, for compare, the part's
// paired statistics that compare already made (compare_stats.h: the headline
// metric's "arm @ benchmark" rows).
//
// The report: the switch check's verdict in plain words, the off arm's
// obedience, the budget; accuracy on vs off per benchmark with McNemar's
// exact p on the paired questions; reasoning tokens (median, p90, max),
// cut-offs inside the reasoning apart from cut-offs in the answer, budget
// ends and reasoning left in the answer, per benchmark and arm; accuracy
// against reasoning tokens spent (each arm's `by_reasoning_tokens`), as a
// table, and in HTML as an inline SVG chart as well.
//
// Compare: a changed switch verdict first ("the switch reached the template
// in A and is dropped on the way in B"), and a changed off-arm obedience;
// per benchmark and arm accuracy A vs B with McNemar on the paired items and
// the reasoning tokens of A and of B; each run's on − off difference.
//
// Every renderer returns "" for a null or non-object argument (a run without
// the part), so a caller may call it unconditionally. Numbers absent from an
// older results.json show as "—". Registered as the thinking part's page
// section (evals/publish/page_section.h) and compare section
// (evals/publish/compare_section.h), so publishing names no part.
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_VIEW_H_
#define EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_VIEW_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/publish/compare_section.h"
#include "evals/publish/page_section.h"

namespace evalrun {

// The report's section for `part` (results.json `parts.thinking`).
std::string ThinkingReportMarkdown(const nlohmann::json& part);
std::string ThinkingReportHtml(const nlohmann::json& part);

// compare's view of the thinking part: {switch_a, switch_b (each {verdict,
// text} or null), switch_changed (the sentence, "" when the verdicts agree),
// off_switch_a, off_switch_b, off_switch_changed, budget_a, budget_b,
// rows: [{benchmark, arm, n, score_a, score_b, delta, ci_low, ci_high,
// a_better, b_better, p_value, reasoning_a, reasoning_b ({median, p90, max}
// or null), cut_off_a, cut_off_b ({in_reasoning, in_answer} or null)}],
// on_vs_off: [{benchmark, a, b}] (each run's `paired`: difference,
// mcnemar_p, p_text, or null)}. `part_a`/`part_b` are the two runs'
// `parts.thinking`, `part_doc` the part's compare document (its metrics).
nlohmann::json ThinkingComparison(const nlohmann::json& part_a, const nlohmann::json& part_b,
                                  const nlohmann::json& part_doc);

// For compare.cc: when `part` is "thinking" and *part_doc is an object,
// sets (*part_doc)["thinking"] from the two results.json documents and puts
// a changed switch verdict (then a changed off-arm obedience) first in
// *notes. Anything else: nothing.
void AddThinkingComparison(const std::string& part, const nlohmann::json& results_a,
                           const nlohmann::json& results_b, nlohmann::json* part_doc, nlohmann::json* notes);

// A comparison document's (evalrun.compare/1) thinking changes as the
// first thing under its verdict: "**Thinking: <change>.**" lines, or a red
// banner each; "" when nothing changed or the part was not compared.
std::string ThinkingChangesMarkdown(const nlohmann::json& cmp);
std::string ThinkingChangesHtml(const nlohmann::json& cmp);

// The comparison above (a part document's "thinking"), rendered.
std::string ThinkingCompareMarkdown(const nlohmann::json& thinking);
std::string ThinkingCompareHtml(const nlohmann::json& thinking);

// The views above as the page (with the results) and `compare` place them.
PageSection ThinkingPageSection();
CompareSection ThinkingCompareSection();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_THINKING_THINKING_VIEW_H_
