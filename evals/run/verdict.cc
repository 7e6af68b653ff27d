// KindOf by the variant's alternative; the rest asks the kind's
// registration (evals/run/verdict_kind.h; the built-in kinds' in
// evals/kinds/ and the benchmark folder that brings one).
#include "evals/run/verdict.h"

#include "evals/run/verdict_kind.h"

namespace evalrun {

VerdictKind KindOf(const Verdict& v) {
  switch (v.index()) {
    case 0: return VerdictKind::kChoice;
    case 1: return VerdictKind::kInstruction;
    case 2: return VerdictKind::kFraction;
    case 3: return VerdictKind::kLogprobs;
    case 4: return VerdictKind::kCode;
    default: return std::get<OtherVerdict>(v).kind;
  }
}

double HeadlineScore(const Verdict& v) { return VerdictKindOf(KindOf(v)).Headline(v); }

bool IsCutOff(const Verdict& v) { return VerdictKindOf(KindOf(v)).CutOff(v); }

void MarkTooLong(Verdict* v) { VerdictKindOf(KindOf(*v)).MarkTooLong(v); }

}  // namespace evalrun
