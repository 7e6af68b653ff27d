// The report's "How fast it runs" section: the speed part's object of
// results.json (evals/benchmarks/speed/speed_run.h, docs/results-schema.md) as
// Markdown and as HTML, beside the quality and fit sections. One row per
// step: what it measures, the client's figure and the server's (median,
// min-max, n), their gap, TTFT, the attempts the load guard took and the
// step's marks; the cold row with its cold/warm ratios; the refused steps.
// The speed part's page section (SpeedPageSection, evals/publish/
// page_section.h), listed in the speed benchmark's row of the table.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_SECTION_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_SECTION_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/publish/page_section.h"

namespace evalrun {

// results.json's parts.speed, or null when the run has no speed part.
nlohmann::json SpeedSectionModel(const nlohmann::json& results);

// "" for a null model.
std::string RenderSpeedMarkdown(const nlohmann::json& speed);
std::string RenderSpeedHtml(const nlohmann::json& speed);

// The section above as the page places it (after the repeat's section).
PageSection SpeedPageSection();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_SECTION_H_
