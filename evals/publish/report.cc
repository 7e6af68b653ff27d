#include "evals/publish/report.h"

#include "evals/base/exit_codes.h"
#include "evals/publish/report_html.h"
#include "evals/publish/report_markdown.h"
#include "evals/publish/report_model.h"
#include "evals/publish/run_folder.h"
#include "evals/run/run_files.h"

namespace evalrun {

using nlohmann::json;

Status BuildReport(const ReportOptions& opts, std::string* markdown, std::string* html) {
  if (opts.run_dir.empty()) return Status::InvalidInput("report: a run folder is needed");
  if (opts.max_text_chars < 0) return Status::InvalidInput("--max-text: expected a number >= 0");
  try {
    json model;
    EVALRUN_RETURN_IF_ERROR(BuildReportModel(opts.run_dir, opts.max_text_chars, &model));
    *markdown = RenderReportMarkdown(model);
    *html = RenderReportHtml(model);
  } catch (const json::exception& e) {
    // A field of an unexpected type that the readers above did not guard.
    return Status::Internal(opts.run_dir + ": unexpected JSON while building the report: " + e.what());
  }
  return Status::Ok();
}

int ReportRun(const ReportOptions& opts, FILE* out, FILE* err) {
  std::string md, html;
  Status st = BuildReport(opts, &md, &html);
  if (!st.ok()) {
    std::fprintf(err, "evalrun report: %s\n", st.message().c_str());
    return kExitBadInput;
  }
  const std::string dir = TrimRunDir(opts.run_dir);
  for (const auto& [name, text] : {std::pair<std::string, const std::string*>{"report.md", &md},
                                   std::pair<std::string, const std::string*>{"report.html", &html}}) {
    const std::string path = dir + "/" + name;
    st = WriteFileAtomically(path, *text);
    if (!st.ok()) {
      std::fprintf(err, "evalrun report: %s\n", st.message().c_str());
      return kExitBadInput;
    }
    std::fprintf(out, "wrote %s\n", path.c_str());
  }
  return kExitOk;
}

}  // namespace evalrun