// LiveCodeBench rows (livecodebench/code_generation_lite, test.jsonl ...
// test6.jsonl): one JSON object a line, parsed into LcbProblem as
// LiveCodeBench/LiveCodeBench lcb_runner/benchmarks/code_generation.py
// (CodeGenerationProblem.__post_init__) reads it, and selected by release and
// contest date as its load_code_generation_dataset does.
//
// The files are large (about 4.5 GB for release_v6, single lines of tens of
// MB): they are streamed a line at a time, never held whole, and a row is
// handed to the caller as soon as it is parsed.
//
// Errors are InvalidInput naming file:line and the field (a row the official
// loader would refuse: an unknown platform, difficulty or testtype, a date
// fromisoformat would not read, test cases that are not JSON lists), NotFound
// or IoError for files. Thread-safety: pure functions; ReadLcbFile reads one
// file on the calling thread.
#ifndef EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_ROWS_H_
#define EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_ROWS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

struct LcbTest {
  std::string input;   // stdin text, or one JSON value per line (the arguments)
  std::string output;  // expected stdout, or the JSON of the return value
  bool functional = false;  // testtype "functional" (else "stdin")
};

// A contest_date as datetime.fromisoformat reads "YYYY-MM-DD[(T| )HH:MM[:SS[.ffffff]]]"
// (naive; a time zone is refused: the official compares it with naive dates).
struct LcbDateTime {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, microsecond = 0;
  auto operator<=>(const LcbDateTime&) const = default;
};

struct LcbProblem {
  std::string question_title;
  std::string question_content;
  std::string platform;       // "leetcode", "codeforces", "atcoder"
  std::string question_id;
  std::string contest_id;
  std::string contest_date;   // as in the row, e.g. "2023-08-19T00:00:00"
  LcbDateTime date;           // contest_date parsed
  std::string starter_code;   // "" for stdin problems
  std::string difficulty;     // "easy", "medium", "hard"
  std::vector<LcbTest> public_tests;
  std::vector<LcbTest> private_tests;  // empty when not decoded (LcbReadOptions)
  bool private_tests_compressed = false;
  nlohmann::json metadata;    // the parsed `metadata` object
  std::string func_name;      // metadata.func_name; "" = a stdin program
  std::string source;         // "test2.jsonl:17"
  long long offset = -1;      // where its line starts in the file (ReadLcbFile), for reading it again alone

  // "2023-08" (the month its results are grouped by).
  std::string ContestMonth() const;
};

struct LcbReadOptions {
  // Decode private_test_cases (the expensive part). Off, only the other
  // fields are read (private_tests stays empty): a selection pass.
  bool decode_private_tests = true;
  // With decode_private_tests: decode only the rows this returns true for
  // (the others keep private_tests empty); unset: every row.
  std::function<bool(const LcbProblem&)> decode_only;
  // The date window, inclusive at both ends, compared with the full
  // contest_date as the official does (an end_date of 2025-01-31 means
  // midnight: a contest later that day is outside).
  std::optional<LcbDateTime> start, end;
};

// Parses one line (where = "file:line", for messages).
Status ParseLcbRow(std::string_view line, const std::string& where, const LcbReadOptions& options,
                   LcbProblem* out);

// "2024-08-01" (as datetime.strptime(s, "%Y-%m-%d")) or a full
// contest_date form; InvalidInput naming `what` otherwise.
Status ParseLcbDate(std::string_view text, const std::string& what, LcbDateTime* out);

// Streams `path` (name = what messages and LcbProblem::source call it):
// every row in the window goes to row() in file order; a row() error stops
// the read and is returned. *rows_read counts all rows read (in or out of
// the window) when not null.
Status ReadLcbFile(const std::string& path, const std::string& name, const LcbReadOptions& options,
                   const std::function<Status(LcbProblem&&)>& row, long long* rows_read = nullptr);

// The files a `release` names, as the dataset's loading script
// (code_generation_lite.py ALLOWED_FILES): "release_v1" .. "release_v6" and
// "release_latest" (cumulative: test.jsonl .. testN.jsonl), "v1" .. "v6" (one
// file), "vN_vM" (N < M: files N..M), or a file name "test.jsonl" ..
// "test6.jsonl". InvalidInput with the accepted forms otherwise.
Status LcbReleaseFiles(const std::string& release, std::vector<std::string>* files);

// The selection in words, for the console and run.json:
// "release_v6 (test.jsonl..test6.jsonl), contest_date 2024-08-01 .. 2025-02-01".
std::string LcbWindowText(const std::string& release, const std::vector<std::string>& files,
                          const std::string& start_date, const std::string& end_date);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_LIVECODEBENCH_LCB_ROWS_H_
