// A part's failed requests for the report: <run>/<part>/
// failed.jsonl (the runner's: one line per request that failed after its
// retries, {id, error, http_status, attempts, time_utc}) read without
// changing it, each id once (its last line), the ids answered since (a
// resumed run) left out, grouped by
// error text so that 16 identical HTTP 500s are one row.
//
// The model: {part, requests, groups: [{error, http_status, count, ids
// (the first 5, in file order)}]}, groups by count (most first), then by
// first appearance; null when the part has no failed.jsonl or nothing in
// it is still unanswered. A line that is not a JSON object with an `id` is
// skipped and counted in `unreadable` (never fatal: the page still shows the
// rest). Errors are cut to 300 bytes (UTF-8 whole).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_FAILED_REQUESTS_H_
#define EVALRUN_EVALS_PUBLISH_FAILED_REQUESTS_H_

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

// `answered`: the ids the part's samples.jsonl holds.
nlohmann::json FailedRequestsModel(const std::string& run_dir, const std::string& part,
                                   const std::set<std::string>& answered);

// "## Failed requests" with one table row per group; "" when `failures`
// (an array of the models above) is empty.
std::string FailedRequestsMarkdown(const nlohmann::json& failures);
std::string FailedRequestsHtml(const nlohmann::json& failures);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_FAILED_REQUESTS_H_
