// The report's "How much context fits" section: the fit part's object of
// results.json (fit_ladder.h, docs/results-schema.md) as Markdown and HTML,
// after the quality parts and before "How fast it runs". One row per size
// tried: the context asked, the slot's context the server gave, the prompt,
// whether it loaded, answered and found the needle, the speeds and the GPU's
// peak memory; errors and caps as numbered notes under the table.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_FIT_FIT_SECTION_H_
#define EVALRUN_EVALS_BENCHMARKS_FIT_FIT_SECTION_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/publish/page_section.h"

namespace evalrun {

// "" for a null model (a run without the fit part).
std::string RenderFitMarkdown(const nlohmann::json& fit);
std::string RenderFitHtml(const nlohmann::json& fit);

// The section above as the page places it (after the repeat's section,
// before the speed part's), in place of a row of the results table.
PageSection FitPageSection();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_FIT_FIT_SECTION_H_
