// LiveCodeBench's rows for a run of the part (evals/benchmarks/livecodebench/livecodebench.cc):
// the files a release names (checked against the manifest
// evals/benchmarks/livecodebench/livecodebench.json) or one file given instead (`score --input`, the card's
// `data_file`: its sha256 computed as it is read), the rows in the date
// window, and the tests of the problems picked, kept on disk.
//
// The files are never held whole and read through once: that pass reads
// every row without decoding its private tests (ScanLcbWindow) and keeps
// where each row's line starts; once the pick is made, the picked rows'
// lines alone are read again at those offsets, their tests decoded and
// appended to a spool (SpoolLcbTests, evals/run/prompt_spool.h), from which
// each answer's grading reads its problem's tests back (LoadLcbTests).
//
// Errors name the file (and line, evals/benchmarks/livecodebench/lcb_rows.h); a missing or changed
// release file names the command that fetches it. Thread-safety: the
// functions run on the caller's thread; LoadLcbTests may run on several at
// once (PromptSpool::Read is thread-safe).
#ifndef EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_DATA_H_
#define EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_DATA_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/benchmarks/livecodebench/lcb_rows.h"
#include "evals/base/status.h"
#include "evals/run/part.h"
#include "evals/run/prompt_spool.h"
#include "scorers/livecodebench/lcb_grade.h"

namespace evalrun {

// Where the rows come from.
struct LcbSource {
  std::string label;                // the release ("release_v6"), or "data_file", or "input"
  std::vector<std::string> names;   // as messages and the window name them: "test.jsonl", or the path
  std::vector<std::string> paths;
  std::vector<std::string> sha256;  // the manifest's, or computed
  std::vector<long long> rows;      // rows read per file (ScanLcbWindow)
};

// The files: ctx.input_override when given, else `data_file` when not
// empty, else the files of `release` under <data dir>/livecodebench/.
Status FindLcbSource(const PartContext& ctx, const std::string& release, const std::string& data_file,
                     LcbSource* out);

// One problem in the window, without its tests until SpoolLcbTests.
struct LcbRow {
  std::string question_id, title, content, starter_code, platform, difficulty, contest_date, contest_month;
  size_t file = 0;   // index into LcbSource::paths
  long long offset = -1;  // where its line starts in that file
  std::string where;      // "test2.jsonl:17"
  SpoolRef tests;    // set by SpoolLcbTests
  int test_count = 0;
};

// Pass one: every row in `window` (private tests not decoded), in file
// order; sets source->rows. A question_id seen twice is InvalidInput.
Status ScanLcbWindow(LcbSource* source, const LcbReadOptions& window, std::vector<LcbRow>* rows);

// Then: the tests of `picked` (public, then private, as the official
// get_evaluation_sample lists them) decoded and appended to `spool`; each
// row's `tests` and `test_count` set. Reads only the picked rows' lines (at
// their offsets); a line that no longer holds its question_id (the file
// changed) is InvalidInput.
Status SpoolLcbTests(const LcbSource& source, const LcbReadOptions& window, const std::vector<LcbRow*>& picked,
                     PromptSpool* spool);

// A picked row's tests, read back.
Status LoadLcbTests(const PromptSpool& spool, const LcbRow& row, LcbTestCases* out);

// What info.dataset records: the release or file, every file with its
// sha256 and rows, and one sha256 over them (what the run key holds).
nlohmann::json LcbDatasetInfo(const LcbSource& source);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_DATA_H_
