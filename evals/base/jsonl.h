// JSON Lines in and out.
//
// Thread-safety: pure functions (the row callback runs on the caller's thread).
#ifndef EVALRUN_EVALS_BASE_JSONL_H_
#define EVALRUN_EVALS_BASE_JSONL_H_

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

// Calls `line(line_number, text)` for every line of `text` that is not
// blank (spaces and tabs), a trailing '\r' cut; stops at the first error.
// The lines ParseJsonl parses, for a reader that parses only some of them.
Status ForEachJsonlLine(std::string_view text, const std::function<Status(int, std::string_view)>& line);

// Calls `row(line_number, json)` for every non-empty line of `text`. A line
// that is not JSON stops with InvalidInput naming `source:line`. A last line
// without its newline is parsed like the others (use ReadJsonlPrefix to
// treat it as torn).
Status ParseJsonl(std::string_view text, const std::string& source,
                  const std::function<Status(int, const nlohmann::json&)>& row);

// One line of JSON Lines, parsed as ParseJsonl parses each: bounds checked
// (json_bounds.h), then InvalidInput "<where>: not a JSON line" when it is
// not JSON.
Status ParseJsonLine(std::string_view line, const std::string& where, nlohmann::json* out);

// One JSON value as a single line (UTF-8; invalid bytes replaced), no newline.
std::string DumpLine(const nlohmann::json& j);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_JSONL_H_
