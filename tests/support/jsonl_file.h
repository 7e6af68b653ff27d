// Reading JSON Lines in tests: the run files evalrun writes (samples.jsonl,
// failed.jsonl, load.jsonl) and the reference files the parity tests compare
// against. Tests only.
//
//   for (const nlohmann::json& row : ReadJsonLines(dir + "/samples.jsonl")) ...
//
// A file is split at '\n'. A line that is empty or only spaces, tabs and a
// '\r' is skipped, but counts for the line numbers. Every other line is one
// JSON value: evalrun's bounds first (json_bounds.h: 128 levels deep), then
// nlohmann's parser. A line that fails either is left out and named,
// "<path>:<line>: <what>"; the lines after it are still read.
//
// Pure functions of the file; thread-safe (the failures ReadJsonLines and
// ParseJsonLines record go to the current test, as ADD_FAILURE does).
#ifndef EVALRUN_TESTS_SUPPORT_JSONL_FILE_H_
#define EVALRUN_TESTS_SUPPORT_JSONL_FILE_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun::testing {

// One line of a JSON Lines file.
struct JsonLine {
  int number = 0;  // 1-based, blank lines counted
  nlohmann::json value;
};

// What a JSON Lines text holds: the lines that parsed, in order, and what
// went wrong: "" when nothing did, else one line per problem, "<source>:
// cannot open" or "<source>:<line>: <what>".
struct JsonLines {
  std::vector<JsonLine> lines;
  std::string error;

  // The values of `lines`, without their numbers.
  std::vector<nlohmann::json> values() const;
};

// The lines of `text`; `source` names it in `error`. Records no test
// failure, and needs no GoogleTest library, as LoadJsonLines (the bench,
// which links none, reads its fixtures with them).
JsonLines SplitJsonLines(const std::string& text, const std::string& source);

// The lines of the file at `path`, as SplitJsonLines; a file that cannot be
// opened is "<path>: cannot open" and no lines. Records no test failure: for
// a fixture loaded once for several tests, each of which reports `error`.
JsonLines LoadJsonLines(const std::string& path);

// The values of the file at `path`. A file that cannot be opened or a line
// that is not JSON is a failure of the calling test naming the path and line
// (ADD_FAILURE: the test goes on with the lines that parsed).
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  const JsonLines file = LoadJsonLines(path);
  if (!file.error.empty()) ADD_FAILURE() << file.error;
  return file.values();
}

// As ReadJsonLines, for text already read; `source` names it in a failure.
inline std::vector<nlohmann::json> ParseJsonLines(const std::string& text, const std::string& source) {
  const JsonLines lines = SplitJsonLines(text, source);
  if (!lines.error.empty()) ADD_FAILURE() << lines.error;
  return lines.values();
}

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_JSONL_FILE_H_
