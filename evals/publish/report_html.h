// `evalrun report`: report.html from the report's model (report_model.h),
// one self-contained page: inline CSS, inline SVG charts (bars per
// category, score by length), and a small inline script for the sample
// browser; the samples embedded with JsonForScriptBlock (html_text.h) and
// rendered with textContent only. No external asset, no network.
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_PUBLISH_REPORT_HTML_H_
#define EVALRUN_EVALS_PUBLISH_REPORT_HTML_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

std::string RenderReportHtml(const nlohmann::json& model);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_REPORT_HTML_H_
