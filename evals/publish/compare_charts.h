// The inline SVG charts of the comparison page (evals/publish/compare_html.h),
// drawn from parts of the evalrun.compare/1 document. No script, no
// external asset; every text goes through HtmlEscape.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_CHARTS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_CHARTS_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

// A forest plot of B - A: one row per entry of `rows` (objects with name, n,
// delta, ci_low, ci_high, p_value: the paired statistics of compare, as
// fractions), the delta as a dot and its 95 % interval as a whisker on an
// axis in percentage points through 0. Red when the whole interval is below
// 0, green when above. With `noise_mde` (a fraction: the detectable
// difference of an A/A pair), the band -mde..+mde is shaded: a delta inside
// it is within noise.
std::string DeltaChart(const nlohmann::json& rows, std::optional<double> noise_mde);

// The per-position KLD distribution of a comparison of next-token
// distributions (a kind that compares on its own, kind_view.h): `histogram` is
// the part's kld_histogram (an "exactly 0" bar, then one bar per decade
// from the lowest to the highest one that holds a position), `marks` a list
// of {name, value, limit: bool}: thresholds (limit, a red dashed line) and
// observed statistics (mean, p99; grey) placed on the same log axis. With
// `noise_histogram` (not null: the kld_histogram of the A/A pair), each
// column has a second, paler bar for it and a legend says which is which.
std::string KldHistogramChart(const nlohmann::json& histogram, const nlohmann::json& marks,
                              const nlohmann::json& noise_histogram = nullptr);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_CHARTS_H_
