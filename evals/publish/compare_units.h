// `evalrun compare`, step one: a part's records as the units that get
// paired between two runs, one list per metric (the types: kind_units.h).
// The units are the part's verdict kind's to make (its view, kind_view.h):
// choice and code one pass/fail unit per question, instruction prompt- and
// instruction-level units, fraction one scored unit per sample, a kind
// registered elsewhere whatever its view says.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_

#include <vector>

#include "evals/publish/kind_units.h"
#include "evals/publish/run_folder.h"
#include "evals/run/sample_record.h"

namespace evalrun::compare_internal {

// The units of `records` (all of `part`'s kind, *part.kind), by its kind's
// view; a kind without a view: one unit per record by its headline score.
PartUnits ExtractUnits(const FolderPart& part, const std::vector<SampleRecord>& records);

}  // namespace evalrun::compare_internal

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_UNITS_H_
