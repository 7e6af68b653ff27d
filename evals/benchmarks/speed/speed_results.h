// The speed part's figures from its request records (evals/benchmarks/speed/
// speed_request.h) and the definitions written beside them in results.json.
//
//   decode (decode, ctx steps): the client's (n-1)/(last token - first
//     token) and the server's predicted_n/predicted_ms, each the median of
//     the step's requests with min, max and n, and the gap between the two
//     medians in %; beyond 2 % the step says why it may differ.
//   prefill (prefill, ctx): the client's prompt tokens / time to first token
//     and the server's prompt_n/prompt_ms, likewise.
//   conc/Cn: total = all answer tokens of a round / the round's wall time
//     (first send to last [DONE]), median over rounds; per request = answer
//     tokens / that request's end-to-end time, median over all requests;
//     TTFT; the most requests in flight at once.
//   ttft_s and e2e_s: medians over requests.
// Each step's `marks` gathers its requests' marks (once each, with a count)
// and the guard's verdict of a step still disturbed after its last try.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_RESULTS_H_
#define EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_RESULTS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/benchmarks/speed/speed_plan.h"

namespace evalrun {

// The step's `result` object from its final attempt's measured records;
// `walls`: the rounds' wall times (conc); `peak`: the most in flight.
nlohmann::json SummarizeStep(const SpeedStep& step, const std::vector<nlohmann::json>& records,
                             const std::vector<double>& walls, int peak);

// Each distinct mark of the records, "<mark>" or "<mark> (N requests)".
std::vector<std::string> CollectMarks(const std::vector<nlohmann::json>& records);

// The cold row: the first request after the start, whether it is cold (and
// why not), and its ratios to the warm decode step of the same prompt id
// (cold / warm decode speed, cold / warm TTFT), null when either is missing.
nlohmann::json ColdRow(const nlohmann::json& record, bool cold, const std::string& why_not,
                       const nlohmann::json& steps);

// The definitions, in words, for results.json.
nlohmann::json SpeedDefinitions();

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_SPEED_SPEED_RESULTS_H_
