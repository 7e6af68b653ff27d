#include "evals/publish/compare_units.h"

#include "evals/publish/kind_view.h"

namespace evalrun::compare_internal {

PartUnits ExtractUnits(const FolderPart& part, const std::vector<SampleRecord>& records) {
  if (part.kind)
    if (const KindView* view = FindKindView(*part.kind)) return view->Units(part, records);
  return ScoredUnits(part, records, Metric{"score", "mean score", {}, {}}, nullptr);
}

}  // namespace evalrun::compare_internal
