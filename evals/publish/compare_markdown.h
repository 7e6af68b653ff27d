// The Markdown of `evalrun compare`, rendered from the comparison document
// alone (BuildComparison, evals/publish/compare.h).
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_MARKDOWN_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_MARKDOWN_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

// The Markdown that CompareRuns prints for a BuildComparison document; at
// most `max_flips_shown` flipped questions per part.
std::string ComparisonMarkdown(const nlohmann::json& cmp, int max_flips_shown);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_MARKDOWN_H_
