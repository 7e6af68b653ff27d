// `evalrun compare RUN_A RUN_B`: did quality move between two runs?
//
// Answers are paired by question id, part by part. For each part's headline
// metric, per category and per task/length/instruction id:
//   - the paired scores of A and B and the delta B - A;
//   - the discordant counts (A right & B wrong, A wrong & B right) and the
//     exact McNemar p-value on them (scorers/statistics.h);
//   - a paired-bootstrap 95 % interval of the delta (kBootstrapResamples
//     resamples, PyRandom seed kBootstrapSeed: the same numbers everywhere);
//   - the questions that flipped.
// What a part's unit and metric are:
//   - multiple choice (and any part whose samples carry a bool `correct`): one
//     question, 0/1; groups: `category` (and `subdomain` when every sample
//     has one).
//   - instruction following: headline = prompt-level strict
//     (`strict.follow_all_instructions` per prompt); also instruction-level
//     strict (one unit per entry of `instruction_id_list`, paired on (prompt
//     id, position, instruction id), from `strict.follow_instruction_list`;
//     grouped by instruction id), and prompt/instruction-level loose.
//     Instruction units are resampled independently (not clustered by
//     prompt).
//   - partial credit (and any part whose samples carry a numeric `score`):
//     one sample, a fraction in [0, 1]; groups: length, and task @ length.
//     The delta and its interval use the fractions as they are. The test is
//     the exact sign test: a pair is "A better" when A's score > B's, "B
//     better" when below; on pairs whose scores are both 0 or 1 this is
//     McNemar's test, and pairs with partial scores count by the sign of
//     their difference (the count of such pairs is reported as `partial`).
// A significant regression: in any part's headline metric, B < A with
// p < alpha and |delta| >= min_delta (percentage points). Group p-values are
// shown but not corrected for multiple comparisons and never decide the exit
// code.
//
// Runs on different question sets are compared on the ids both answered;
// the ids only in A / only in B are counted and said. Nothing in a run
// folder is modified (a torn last sample line is skipped, not cut off: the
// folders are read by evals/publish/run_folder.h).
//
// The work is split by job: compare_options.h (the options), compare_units.h
// (records -> units), compare_stats.h (pairing, statistics), compare_setup.h
// (what differs between the runs), compare_markdown.h (the Markdown),
// compare_html.h (the page of --html), this file's .cc (the document and
// the exit code).
//
// Thread-safety: the functions share no state.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_H_

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/publish/compare_options.h"

namespace evalrun {

// Compares the two runs and prints Markdown (or JSON) on `out`; with
// opts.html_path also writes the page there (atomically; "wrote <path>" on
// `err`, so that `out` stays the document). Messages go to `err`. Returns
// kExitOk, kExitRegression (a significant regression, see above) or
// kExitBadInput (a missing folder, not a run, an unreadable or malformed
// file, a part not in both runs, bad options, a page that cannot be
// written; the message names the file, line and field). The document is
// printed before the page is written, so a page that fails still leaves it.
int CompareRuns(const CompareOptions& opts, FILE* out, FILE* err);

// The same comparison as a JSON document (schema "evalrun.compare/1"; the
// Markdown is rendered from it). `exit_code` in it is what CompareRuns
// returns. Fails with InvalidInput / NotFound as above.
Status BuildComparison(const CompareOptions& opts, nlohmann::json* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_H_
