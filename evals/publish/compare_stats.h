// `evalrun compare`, step two: one metric's units of run A paired with run
// B's by key, and the paired statistics over all pairs and per group (see
// evals/publish/compare.h for the tests and intervals used).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_STATS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_STATS_H_

#include <nlohmann/json.hpp>

#include "evals/publish/compare_options.h"
#include "evals/publish/compare_units.h"

namespace evalrun::compare_internal {

// The comparison of metric `ma` (run A) with `mb` (run B, the same metric):
// {name, title, headline, units_a, units_b, paired, only_in_a, only_in_b,
//  only_in_a_ids, only_in_b_ids (at most 20 each), overall, groups}, where
// `overall` and each row of `groups[d].rows` (one group per dimension, rows
// in natural order: "q2" < "q10") hold {n, score_a, score_b, delta, ci_low,
// ci_high, a_better, b_better, partial, p_value} and `overall` a `verdict`
// ("regression", "improvement", "no significant change", "significant,
// below min-delta", "nothing paired") under opts.alpha and opts.min_delta.
// A key seen twice in one run counts the last unit and adds one to
// *duplicates. For the `headline` metric only: *flips gets the pairs whose
// scores differ ({id, label, a, b}; A better first, then B better, each in
// A's order) and *prompt_changed the pairs whose prompt_sha256 differs;
// otherwise they are left alone.
nlohmann::json CompareMetric(const Metric& ma, const Metric& mb, bool headline, const CompareOptions& opts,
                             int* duplicates, nlohmann::json* flips, int* prompt_changed);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_STATS_H_
