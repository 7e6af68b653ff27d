#include "evals/publish/compare_noise.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "evals/publish/table_text.h"
#include "scorers/noise_floor.h"

namespace evalrun::compare_internal {
namespace {

// The keys of `a` also in `b` in a's order (the last unit of a repeated key
// counts, as CompareMetric has it), with both scores.
struct Paired {
  std::vector<std::string> keys;
  std::vector<double> x, y;
  std::vector<std::string> prompts_x, prompts_y;
};

Paired PairUnits(const Metric& a, const Metric& b) {
  std::unordered_map<std::string, const Unit*> last_a, last_b;
  for (const auto& u : a.units) last_a[u.key] = &u;
  for (const auto& u : b.units) last_b[u.key] = &u;
  Paired p;
  for (const auto& u : a.units) {
    if (last_a[u.key] != &u) continue;
    auto it = last_b.find(u.key);
    if (it == last_b.end()) continue;
    p.keys.push_back(u.key);
    p.x.push_back(u.score);
    p.y.push_back(it->second->score);
    p.prompts_x.push_back(u.prompt_sha256);
    p.prompts_y.push_back(it->second->prompt_sha256);
  }
  return p;
}

Status CheckCovers(const NoisePair& pair, const std::string& part) {
  for (const RunFolder* r : {&pair.a, &pair.a2})
    if (std::find(r->parts.begin(), r->parts.end(), part) == r->parts.end())
      return Status::InvalidInput("--noise: part " + part + " is compared but not in " + r->dir +
                                  "/results.json (it has: " + Join(r->parts, ", ") +
                                  "): the noise pair must cover the same parts and items as A/B");
  return Status::Ok();
}

Status ReadPartRecords(const RunFolder& run, const std::string& part, VerdictKind kind, FolderPart* fp,
                       std::vector<SampleRecord>* records, nlohmann::json* notes) {
  EVALRUN_RETURN_IF_ERROR(DescribeFolderPart(run, part, fp));
  if (fp->kind && *fp->kind != kind)
    return Status::InvalidInput("--noise: part " + part + ": " + run.dir + " records " + VerdictKindName(*fp->kind) +
                                " verdicts, the compared runs " + VerdictKindName(kind) +
                                ": the noise pair must cover the same parts and items as A/B");
  fp->kind = kind;
  bool torn = false;
  Status st = ReadRecordsReadOnly(SamplesPath(run, part), kind, records, &torn);
  if (!st.ok()) return Status::InvalidInput("--noise: " + st.message());
  if (torn) notes->push_back(TornTailNote(SamplesPath(run, part)));
  return Status::Ok();
}

Status ReadHeadline(const RunFolder& run, const std::string& part, VerdictKind kind, Metric* out,
                    nlohmann::json* notes) {
  FolderPart fp;
  std::vector<SampleRecord> records;
  EVALRUN_RETURN_IF_ERROR(ReadPartRecords(run, part, kind, &fp, &records, notes));
  PartUnits units = ExtractUnits(fp, records);
  *out = std::move(units.metrics[0]);
  return Status::Ok();
}

std::string Pair(const NoisePair& p) { return p.a.dir + " and " + p.a2.dir; }

}  // namespace

Status LoadNoisePair(const CompareOptions& opts, NoisePair* out) {
  *out = NoisePair();
  if (opts.noise_a.empty() && opts.noise_a2.empty()) return Status::Ok();
  if (opts.noise_a.empty() || opts.noise_a2.empty())
    return Status::InvalidInput("--noise: expected two run folders (the same build run twice: --noise A A2)");
  for (auto [dir, dst] : {std::pair{&opts.noise_a, &out->a}, std::pair{&opts.noise_a2, &out->a2}}) {
    Status st = LoadRunFolder(*dir, dst);
    if (!st.ok()) return st.Prefixed("--noise");
  }
  out->given = true;
  return Status::Ok();
}

nlohmann::json NoiseFloorSummary(const NoisePair& pair, const CompareOptions& opts) {
  nlohmann::json j;
  j["measured"] = pair.given;
  j["alpha"] = opts.alpha;
  j["power"] = kNoisePower;
  j["formula"] = kNoiseFloorFormula;
  if (!pair.given) {
    j["a"] = j["a2"] = nullptr;
    j["text"] = "no noise floor was measured: give --noise A A2 (the same build run twice, e.g. runs/<job> and "
                "runs/<job>/repeat-2 of `evalrun run --repeat 2`) to know which differences are only run-to-run "
                "noise";
    return j;
  }
  j["a"] = pair.a.dir;
  j["a2"] = pair.a2.dir;
  j["text"] = "noise floor from the A/A pair " + Pair(pair) + ": " + kNoiseFloorFormula + " (alpha " +
              FormatDouble("%g", opts.alpha) + ", power " + FormatDouble("%g", kNoisePower) +
              "); a headline difference below it is labelled \"within noise\" (the label does not change the "
              "verdict or the exit code)";
  return j;
}

Status ReadNoiseRecords(const NoisePair& pair, const std::string& part, VerdictKind kind,
                        std::vector<SampleRecord>* a, std::vector<SampleRecord>* a2, nlohmann::json* notes) {
  EVALRUN_RETURN_IF_ERROR(CheckCovers(pair, part));
  FolderPart fa, fa2;
  EVALRUN_RETURN_IF_ERROR(ReadPartRecords(pair.a, part, kind, &fa, a, notes));
  return ReadPartRecords(pair.a2, part, kind, &fa2, a2, notes);
}

Status PartNoise(const NoisePair& pair, const std::string& part, VerdictKind kind, const Metric& head_a,
                 const Metric& head_b, double delta, const CompareOptions& opts, nlohmann::json* out,
                 nlohmann::json* notes) {
  EVALRUN_RETURN_IF_ERROR(CheckCovers(pair, part));
  Metric na, na2;
  EVALRUN_RETURN_IF_ERROR(ReadHeadline(pair.a, part, kind, &na, notes));
  EVALRUN_RETURN_IF_ERROR(ReadHeadline(pair.a2, part, kind, &na2, notes));
  const Paired ab = PairUnits(head_a, head_b);
  const Paired aa = PairUnits(na, na2);
  std::vector<std::string> kab = ab.keys, kaa = aa.keys;
  std::sort(kab.begin(), kab.end());
  std::sort(kaa.begin(), kaa.end());
  if (kab != kaa) {
    std::vector<std::string> only_ab, only_aa;
    std::set_difference(kab.begin(), kab.end(), kaa.begin(), kaa.end(), std::back_inserter(only_ab));
    std::set_difference(kaa.begin(), kaa.end(), kab.begin(), kab.end(), std::back_inserter(only_aa));
    std::string msg = "--noise: part " + part + ": A/B pairs " + std::to_string(kab.size()) +
                      " items, the noise pair " + Pair(pair) + " " + std::to_string(kaa.size());
    if (!only_ab.empty())
      msg += "; " + std::to_string(only_ab.size()) + " compared in A/B are not answered in both noise runs (e.g. " +
             only_ab[0] + ")";
    if (!only_aa.empty())
      msg += "; " + std::to_string(only_aa.size()) + " of the noise pair are not compared in A/B (e.g. " +
             only_aa[0] + ")";
    return Status::InvalidInput(msg + ": the noise pair must cover the same parts and items as A/B");
  }
  int changed = 0;
  for (size_t i = 0; i < aa.keys.size(); ++i) changed += aa.prompts_x[i] != aa.prompts_y[i];
  if (changed > 0)
    notes->push_back("part " + part + ": " + std::to_string(changed) +
                     " items of the noise pair were asked with different prompts (prompt_sha256 differs): it is "
                     "not a clean A/A pair");
  const NoiseFloor f =
      ComputeNoiseFloor(aa.x, aa.y, static_cast<int64_t>(ab.keys.size()), opts.alpha, kNoisePower);
  nlohmann::json j = NoiseFloorJson(f);
  const bool within = WithinNoise(f, delta);
  j["delta"] = delta;
  j["within_noise"] = within;
  j["label"] = within ? "within noise" : "beyond noise";
  *out = std::move(j);
  return Status::Ok();
}

std::string DetectableDifferenceText(const nlohmann::json& n) {
  if (n["mde"].is_number()) return FormatDouble("%.2f", n["mde"].get<double>() * 100);
  if (n["mde_below"].is_number()) return "< " + FormatDouble("%.2f", n["mde_below"].get<double>() * 100) + " (no flips)";
  return "(nothing paired)";
}

}  // namespace evalrun::compare_internal
