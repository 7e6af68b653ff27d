// `evalrun report`: report.md from the report's model (report_model.h):
// the results table, the instruction and by-length tables, categories,
// setup, noise, notes.
//
// Thread-safety: a pure function.
#ifndef EVALRUN_EVALS_PUBLISH_REPORT_MARKDOWN_H_
#define EVALRUN_EVALS_PUBLISH_REPORT_MARKDOWN_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

std::string RenderReportMarkdown(const nlohmann::json& model);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_REPORT_MARKDOWN_H_
