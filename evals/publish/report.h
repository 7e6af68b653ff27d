// `evalrun report RUN`: a run folder made ready to publish.
//
// Writes two files into the run folder (each replaced atomically):
//   RUN/report.md    a Markdown table per run: parts, score ± stderr, n,
//                    cut-offs, no-answer, failed, speeds; the instruction
//                    kind's four accuracies, scores by length, categories;
//                    the setup (model, engine, hardware from the card;
//                    build, model file and slots from the server) and the
//                    noise summary.
//   RUN/report.html  the same in one self-contained page (inline CSS, JS and
//                    SVG: no external asset, no network), with charts
//                    (per-category bars per part, score by length) and
//                    a sample browser (search; filters for wrong, cut-off,
//                    no answer). The samples are embedded as JSON in a
//                    <script type="application/json"> block, with '<', '>',
//                    '&', U+2028 and U+2029 written as \u escapes so no text
//                    can close the block; the page renders them with
//                    textContent only. Every other text is HTML-escaped.
// The numbers come from results.json (the published ones). The samples add
// what results.json lacks: the fraction kind's standard error, the
// instruction kind's per-instruction strict accuracy, and the browser. A
// part whose samples.jsonl is missing is reported from results.json alone,
// with a note. Long responses are cut to `max_text_chars` in the page (the
// full text stays in samples.jsonl).
//
// Nothing but report.md and report.html is written; samples.jsonl is read
// without being changed. The work is split by job: report_model.h (the run
// folder as the report's model), report_markdown.h and report_html.h (the
// two renderings), html_text.h (escaping). Thread-safety: no shared state.
#ifndef EVALRUN_EVALS_PUBLISH_REPORT_H_
#define EVALRUN_EVALS_PUBLISH_REPORT_H_

#include <cstdio>
#include <string>

#include "evals/base/status.h"

namespace evalrun {

struct ReportOptions {
  std::string run_dir;            // runs/<job>
  int max_text_chars = 4000;      // per response / reasoning in the page (bytes, cut at UTF-8 boundaries)
};

// Writes RUN/report.md and RUN/report.html and prints their paths on `out`.
// Returns kExitOk, or kExitBadInput with a message on `err` naming the
// folder or file (missing folder, not a run, malformed results.json or
// samples.jsonl, a file that cannot be written).
int ReportRun(const ReportOptions& opts, FILE* out, FILE* err);

// The two documents, without writing them.
Status BuildReport(const ReportOptions& opts, std::string* markdown, std::string* html);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_REPORT_H_
