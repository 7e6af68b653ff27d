// The page of `evalrun compare A B --html FILE`: the comparison as one
// self-contained HTML file (the frame of evals/publish/html_page.h: inline
// CSS and SVG, no script, no external asset), rendered from the
// evalrun.compare/1 document alone (BuildComparison, compare.h), so that it
// says exactly what the Markdown and --json say:
//   - the verdict and the runs; the summary of every accuracy part with a
//     chart of each headline delta and its 95 % interval;
//   - the noise floor (A/A): flips, flip rate, the detectable difference and
//     the within/beyond-noise label per part, or that none was measured;
//   - per part: the delta by group as a chart (shaded by the noise floor when
//     one was measured) and a table, and the flipped items with what each
//     run answered (at most kHtmlFlipsShown; --json lists all);
//   - per part of a kind that compares on its own (kind_view.h): the
//     section its view renders (compare_html_parts.h has the pieces);
//   - what differs between the runs, and the notes.
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_HTML_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_HTML_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

inline constexpr int kHtmlFlipsShown = 1000;  // per part

std::string ComparisonHtml(const nlohmann::json& cmp);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_HTML_H_
