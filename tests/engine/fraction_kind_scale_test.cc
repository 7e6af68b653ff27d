// The fraction kind states its scale: a sample's score 0..1, the part's
// score in results.json 0..100 (what its report section reads as it is),
// and its own aggregation writes that scale, so a part that takes the
// kind's aggregation as it is is shown right.
#include <gtest/gtest.h>

#include <vector>

#include "evals/run/sample_record.h"
#include "evals/run/verdict_kind.h"

namespace evalrun::testing {
namespace {

SampleRecord Scored(double score, bool null = false) {
  SampleRecord r;
  FractionVerdict v;
  v.score = score;
  v.null = null;
  r.verdict = v;
  return r;
}

TEST(FractionKindScale, TheKindsAggregationWritesZeroToHundred) {
  const std::vector<SampleRecord> records = {Scored(0.5), Scored(1.0), Scored(0.0, true), Scored(0.75)};
  const nlohmann::json r = VerdictKindOf(VerdictKind::kFraction).Aggregate(records, 1);
  EXPECT_DOUBLE_EQ(r["score"].get<double>(), 56.25);
  EXPECT_EQ(r["n"], 4);
  EXPECT_EQ(r["nulls"], 1);
  EXPECT_EQ(r["failed"], 1);
  // The sample standard deviation over sqrt(n), on the same scale.
  EXPECT_NEAR(r["stderr"].get<double>(), 100 * 0.42695628 / 2, 0.01);
}

}  // namespace
}  // namespace evalrun::testing
