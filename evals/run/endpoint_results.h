// The per-endpoint block of a part's results.json when the card lists
// several endpoints (docs/results-schema.md "endpoints"): each endpoint's
// slots, its share of the answers, its latencies and the speeds it
// reported, from the part's records (SampleRecord::endpoint) and the pool's
// counts for this run.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_RUN_ENDPOINT_RESULTS_H_
#define EVALRUN_EVALS_RUN_ENDPOINT_RESULTS_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "evals/run/request_pool.h"
#include "evals/run/sample_record.h"

namespace evalrun {

// An array, one object per endpoint of `pool` in its order. `records`: the
// part's (this run's and earlier ones'), each naming its endpoint.
nlohmann::json EndpointResults(const RequestPool& pool, const std::vector<SampleRecord>& records);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_RUN_ENDPOINT_RESULTS_H_
