#include "evals/run/verdict_kind.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "evals/run/results.h"

namespace evalrun {
namespace {

// Written during static initialisation only (one thread), read after.
std::map<std::string, const VerdictKindDefinition*, std::less<>>& Kinds() {
  static auto* kinds = new std::map<std::string, const VerdictKindDefinition*, std::less<>>();
  return *kinds;
}

}  // namespace

VerdictKindRegistrar::VerdictKindRegistrar(const VerdictKindDefinition* def) {
  const std::string name(def->Kind().name());
  if (name.empty() || !Kinds().emplace(name, def).second) {
    std::fprintf(stderr, "evalrun: verdict kind \"%s\" registered twice (or without a name)\n", name.c_str());
    std::abort();
  }
}

const VerdictKindDefinition* FindVerdictKind(std::string_view name) {
  auto it = Kinds().find(name);
  return it == Kinds().end() ? nullptr : it->second;
}

const VerdictKindDefinition& VerdictKindOf(VerdictKind kind) {
  const VerdictKindDefinition* def = FindVerdictKind(kind.name());
  if (!def) {
    std::fprintf(stderr, "evalrun: verdict kind \"%s\" is not registered in this program\n",
                 std::string(kind.name()).c_str());
    std::abort();
  }
  return *def;
}

namespace codec_internal {
const VerdictCodec& CodecFor(VerdictKind kind) { return VerdictKindOf(kind); }
}  // namespace codec_internal

std::vector<VerdictKind> RegisteredVerdictKinds() {
  std::vector<VerdictKind> out;
  for (const auto& [name, def] : Kinds()) out.push_back(def->Kind());
  return out;
}

std::string VerdictKindName(VerdictKind kind) { return std::string(kind.name()); }

bool VerdictKindByName(std::string_view name, VerdictKind* kind) {
  const VerdictKindDefinition* def = FindVerdictKind(name);
  if (!def) return false;
  *kind = def->Kind();
  return true;
}

nlohmann::json VerdictKindDefinition::Aggregate(const std::vector<SampleRecord>& records, int failed) const {
  return AggregateByHeadline(records, failed);
}

nlohmann::json AggregateByHeadline(const std::vector<SampleRecord>& records, int failed) {
  const int n = static_cast<int>(records.size());
  int correct = 0, cut = 0;
  bool binary = true;
  double sum = 0, sum_sq = 0;
  for (const auto& s : records) {
    const double h = HeadlineScore(s.verdict);
    sum += h;
    sum_sq += h * h;
    correct += h >= 1;
    cut += IsCutOff(s.verdict);
    binary = binary && (h == 0 || h == 1);
  }
  const double mean = n ? sum / n : 0.0;
  double se = BinomialStderr(mean, n);
  if (!binary && n >= 2) se = std::sqrt(std::max(0.0, (sum_sq - n * mean * mean) / (n - 1)) / n);
  nlohmann::json r;
  r["score"] = Round(mean, 6);
  r["n"] = n;
  r["correct"] = correct;
  r["cut_off"] = cut;
  r["failed"] = failed;
  r["stderr"] = Round(se, 6);
  AddSpeeds(records, &r);
  return r;
}

}  // namespace evalrun
