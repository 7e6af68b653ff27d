// The report page's horizontal bar chart (report_html.h): an inline SVG,
// no script, every text through HtmlEscape. Shared by the page's category
// charts and by a kind's own section that draws shares the same way
// (KindView, kind_view.h).
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_PUBLISH_BAR_CHART_H_
#define EVALRUN_EVALS_PUBLISH_BAR_CHART_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

// One bar per entry of `rows` ({name, n, score}: score in percent, 0..100,
// null drawn as 0 and written "—"), its label cut to 38 bytes (the whole
// name and the figures in its <title>).
std::string BarChart(const nlohmann::json& rows);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_BAR_CHART_H_
