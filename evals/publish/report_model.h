// `evalrun report`, step one: a run folder (evals/publish/run_folder.h) as
// the report's model, a JSON document both renderings read
// (report_markdown.h, report_html.h). The numbers come from results.json;
// the records add what it lacks (the standard error of a fraction part's
// mean, per-instruction strict accuracy, the sample browser). Each part is
// shown by its verdict kind's view (evals/publish/kind_view.h; the built-in
// kinds' in evals/kinds/: choice accuracy and categories, instruction four
// accuracies and per instruction, fraction mean score and by length, code
// pass@1 and its groups; a kind brought by a benchmark, its folder's), and
// by its own page section when it registered one (page_section.h); a part
// without a view by its score as recorded.
//
// The model: {job, title, subtitle,
//   summary: [{part, metric, score (%), stderr (%), n, cut_off, no_answer,
//              failed, raw_fallback, server_parse_error (null in runs that
//              did not record them), prompt_tps, decode_tps, prompt_tokens, completion_tokens}],
//   under_the_table: [{part, markdown, html}] (lines under the results table
//             rendered by a kind: ReportSection::under_table_*),
//   by_length: {title, lengths: [{length, label, score, tasks}], tasks} or null,
//   with_the_results: [{part, markdown, html}] (sections rendered by their
//             owner, placed with the results: ReportSection::results_*),
//   failures: [{part, requests, unreadable, groups: [{error, http_status,
//               count, ids}]}] (each part's failed.jsonl, failed_requests.h),
//   categories: [{part, title, dimension, rows: [{name, n, correct, score}]}],
//   tables: [{part, title, columns, rows, note}] (the sections' SectionTables),
//   fragments: [{part, markdown, html}] (sections rendered by their owner),
//   setup: [[field, text]], setup_command: {line, source} or absent
//          (setup_command.h: the engine's command as run), noise: {text, details} or null, notes,
//   repeats: [{part, pairs, flips, flip_rate (%), mde (pp) or null,
//              mde_below (pp) or null, text, formula, kld_mean, kld_max}]
//            (a --repeat 2 run) or null, repeat_formula (the first
//            formula), repeat_clauses (the parts' kinds' KindView::RepeatClause),
//   page_sections: {part: model} of each registered page section
//             (page_section.h; null where the run has none of it),
//   samples: [{part, id, category, verdict, gold, extracted, response, ...}]
//            (each part's by id, numbers in ids by value: ".../4096/0" before
//            ".../32768/0"),
//   sample_parts, max_text_chars}.
//
// Thread-safety: no shared state.
#ifndef EVALRUN_EVALS_PUBLISH_REPORT_MODEL_H_
#define EVALRUN_EVALS_PUBLISH_REPORT_MODEL_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

// Reads <run_dir> (results.json, run.json, each part's samples.jsonl through
// its codec) into *model; responses cut to `max_text_chars` bytes. Errors
// name the folder, file, line and field (LoadRunFolder, ReadRecordsReadOnly).
Status BuildReportModel(const std::string& run_dir, int max_text_chars, nlohmann::json* model);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_REPORT_MODEL_H_
