// Bounds on every JSON input: how deep it nests and how large it is.
//
// nlohmann::json parses nesting of any depth, but copying, comparing and
// dumping a value recurse once per level: 200,000 levels ('[' x 200,000,
// 400 KB) overflow the stack, and 20,000 levels dumped with an indent are
// 800 MB. So every parse of text evalrun did not write itself in this run
// (server replies, cards, run files read back, data files) goes through
// CheckJsonBounds first: a linear scan that counts nesting outside strings
// and stops at the first level past the bound, before any parsing.
// ParseJsonText / ParseJsonl (json_fields.h, jsonl.h) call it; sites that
// only ask "JSON or not" use ParseJsonOrDiscarded. What is copied from a
// server into a run file goes through BoundedCopy.
//
// Pure functions; thread-safe.
#ifndef EVALRUN_EVALS_BASE_JSON_BOUNDS_H_
#define EVALRUN_EVALS_BASE_JSON_BOUNDS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

// No JSON evalrun reads nests deeper than a few levels (a sample line ~6).
inline constexpr int kMaxJsonDepth = 128;
// The largest JSON document (or JSONL line) evalrun reads: 1 GiB.
inline constexpr size_t kMaxJsonBytes = size_t{1} << 30;
// The most of one server value (/props strings, /v1/models) copied into
// run.json and results.json.
inline constexpr size_t kMaxCopiedServerBytes = size_t{64} << 10;

// Ok, or InvalidInput "<source>: JSON nested deeper than 128 levels (at
// byte 129)" / "<source>: 2000000000 bytes of JSON, more than evalrun reads
// (1024 MiB)". Brackets inside strings (escapes included) do not count;
// the text need not be valid JSON (the parser says that afterwards).
Status CheckJsonBounds(std::string_view text, const std::string& source, size_t max_bytes = kMaxJsonBytes,
                       int max_depth = kMaxJsonDepth);

// CheckJsonBounds, then the parse: InvalidInput naming `source` for either.
Status ParseJsonBounded(std::string_view text, const std::string& source, nlohmann::json* out,
                        size_t max_bytes = kMaxJsonBytes);

// As nlohmann::json::parse(text, nullptr, false), bounded: a discarded
// value when the text is not JSON or is out of bounds.
nlohmann::json ParseJsonOrDiscarded(std::string_view text, size_t max_bytes = kMaxJsonBytes);

// `v` when its compact dump is at most `max_bytes`, else a string saying
// what was left out ("(left out: 123456 bytes of JSON, over evalrun's 65536
// byte bound for <what>)").
nlohmann::json BoundedCopy(const nlohmann::json& v, const std::string& what,
                           size_t max_bytes = kMaxCopiedServerBytes);

// `s` cut to at most `max_bytes` (at a UTF-8 boundary), with "..." when cut.
std::string BoundedString(const std::string& s, size_t max_bytes = kMaxCopiedServerBytes);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_JSON_BOUNDS_H_
