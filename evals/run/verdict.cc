#include "evals/run/verdict.h"

#include <cmath>
#include <iterator>

namespace evalrun {
namespace {

constexpr const char* kNames[] = {"choice", "instruction", "fraction", "logprobs", "code"};

}  // namespace

const char* VerdictKindName(VerdictKind kind) { return kNames[static_cast<int>(kind)]; }

bool VerdictKindByName(std::string_view name, VerdictKind* kind) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i) {
    if (name == kNames[i]) {
      *kind = static_cast<VerdictKind>(i);
      return true;
    }
  }
  return false;
}

VerdictKind KindOf(const Verdict& v) { return static_cast<VerdictKind>(v.index()); }

double HeadlineScore(const Verdict& v) {
  if (const auto* c = std::get_if<ChoiceVerdict>(&v)) return c->correct ? 1.0 : 0.0;
  if (const auto* i = std::get_if<InstructionVerdict>(&v)) return i->strict.all ? 1.0 : 0.0;
  if (const auto* l = std::get_if<LogprobsVerdict>(&v)) return l->top.empty() ? 0.0 : std::exp(l->top[0].logprob);
  if (const auto* c = std::get_if<CodeVerdict>(&v)) return c->passed ? 1.0 : 0.0;
  return std::get<FractionVerdict>(v).score;
}

bool IsCutOff(const Verdict& v) {
  return std::visit([](const auto& x) { return x.cut_off; }, v);
}

void MarkTooLong(Verdict* v) {
  if (auto* c = std::get_if<ChoiceVerdict>(v)) {
    c->cut_off = false;
    c->no_answer = false;
  } else if (auto* i = std::get_if<InstructionVerdict>(v)) {
    i->cut_off = false;
  } else if (auto* f = std::get_if<FractionVerdict>(v)) {
    f->cut_off = false;
    f->null = false;
  } else if (auto* l = std::get_if<LogprobsVerdict>(v)) {
    l->cut_off = false;
  } else if (auto* c = std::get_if<CodeVerdict>(v)) {
    c->cut_off = false;
  }
}

}  // namespace evalrun
