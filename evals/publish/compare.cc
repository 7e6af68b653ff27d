#include "evals/publish/compare.h"

#include <algorithm>

#include "evals/publish/compare_html.h"
#include "evals/publish/compare_markdown.h"
#include "evals/publish/compare_noise.h"
#include "evals/publish/compare_setup.h"
#include "evals/publish/compare_stats.h"
#include "evals/publish/compare_units.h"
#include "evals/publish/kind_view.h"
#include "evals/base/exit_codes.h"
#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"
#include "evals/publish/run_folder.h"
#include "evals/publish/table_text.h"
#include "evals/publish/compare_section.h"
#include "evals/run/run_files.h"

namespace evalrun {
namespace {

using compare_internal::CompareMetric;
using compare_internal::LoadNoisePair;
using compare_internal::NoiseFloorSummary;
using compare_internal::NoisePair;
using compare_internal::PartNoise;
using compare_internal::ExtractUnits;
using compare_internal::PartUnits;
using compare_internal::ReadNoiseRecords;
using compare_internal::RunHeader;
using compare_internal::SetupRows;

constexpr const char* kCompareSchema = "evalrun.compare/1";

// The `kind` of a part in evalrun.compare/1: its view's name for it (the
// verdict kind's name, or the one a view keeps because the schema has had it
// from the start, as the instruction verdicts' view does).
std::string CompareKindName(VerdictKind kind) {
  const KindView* view = FindKindView(kind);
  return view ? view->CompareKindName() : VerdictKindName(kind);
}

// `scale` of a part in evalrun.compare/1: "fraction" when its units score
// fractions (shown as numbers, A > B), else "pass_fail" (✓/✗).
const char* CompareScale(VerdictKind kind) {
  const KindView* view = FindKindView(kind);
  return view && view->Fractional() ? "fraction" : "pass_fail";
}

Status CheckOptions(const CompareOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 1))
    return Status::InvalidInput("--alpha: expected a number between 0 and 1, got " + std::to_string(o.alpha));
  if (!(o.min_delta >= 0 && o.min_delta <= 100))
    return Status::InvalidInput("--min-delta: expected percentage points in [0, 100], got " +
                                std::to_string(o.min_delta));
  if (o.resamples < 1 || o.resamples > 1000000)
    return Status::InvalidInput("bootstrap resamples: expected 1..1000000");
  if (o.run_a.empty() || o.run_b.empty()) return Status::InvalidInput("compare: two run folders are needed");
  return Status::Ok();
}

// The parts to compare: --parts (each must be in both runs), else every
// part both runs have (a note for each that only one has).
Status ChooseParts(const CompareOptions& opts, const RunFolder& a, const RunFolder& b,
                   std::vector<std::string>* out, nlohmann::json* notes) {
  std::vector<std::string>& parts = *out;
  if (opts.parts.empty()) {
    for (const auto& p : a.parts) {
      if (std::find(b.parts.begin(), b.parts.end(), p) != b.parts.end()) parts.push_back(p);
      else notes->push_back("part " + p + " is only in A; not compared");
    }
    for (const auto& p : b.parts)
      if (std::find(a.parts.begin(), a.parts.end(), p) == a.parts.end())
        notes->push_back("part " + p + " is only in B; not compared");
    if (parts.empty())
      return Status::InvalidInput("no part in common: " + a.dir + " has [" + Join(a.parts, ", ") + "], " + b.dir +
                                  " has [" + Join(b.parts, ", ") + "]");
  } else {
    for (const auto& p : opts.parts) {
      for (const RunFolder* r : {&a, &b}) {
        if (std::find(r->parts.begin(), r->parts.end(), p) == r->parts.end())
          return Status::InvalidInput("--parts: part \"" + p + "\" is not in " + r->dir + "/results.json" +
                                      DidYouMean(p, r->parts) + " (it has: " + Join(r->parts, ", ") + ")");
      }
      if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
    }
  }
  return Status::Ok();
}

// The document's head: the two runs, the settings, the noise floor, the
// setup rows and the card fields that differ.
nlohmann::json ComparisonHead(const CompareOptions& opts, const RunFolder& a, const RunFolder& b,
                              const NoisePair& noise, nlohmann::json* notes) {
  nlohmann::json doc;
  doc["schema"] = kCompareSchema;
  doc["a"] = RunHeader(a);
  doc["b"] = RunHeader(b);
  doc["settings"] = {{"alpha", opts.alpha},
                     {"min_delta_points", opts.min_delta},
                     {"bootstrap", {{"resamples", opts.resamples}, {"seed", opts.seed}, {"level", 0.95},
                                    {"rng", "CPython random.Random (PyRandom), _randbelow(n) per draw"}}},
                     {"test", "exact two-sided McNemar (sign test on pairs whose scores differ)"}};
  doc["noise_floor"] = NoiseFloorSummary(noise, opts);
  doc["setup"] = SetupRows(a, b);
  const auto& card_a = JsonAt(a.run, {"card"});
  const auto& card_b = JsonAt(b.run, {"card"});
  if (card_a.is_object() && card_b.is_object()) {
    doc["card_diff"] = JsonDiff(card_a, card_b);
  } else {
    doc["card_diff"] = nullptr;
    notes->push_back("card fields not compared: run.json (with the card) is missing in " +
                     std::string(card_a.is_object() ? "B" : card_b.is_object() ? "A" : "both runs") +
                     " (a `score` job)");
  }
  return doc;
}

// The parts that regressed and improved, as the part documents are made.
struct PartVerdicts {
  nlohmann::json regressions = nlohmann::json::array();
  nlohmann::json improvements = nlohmann::json::array();
};

// A part's samples in both runs, read as `kind` (a note for a torn last line).
Status ReadPartSamples(const RunFolder& a, const RunFolder& b, const std::string& part, VerdictKind kind,
                       std::vector<SampleRecord>* sa, std::vector<SampleRecord>* sb, nlohmann::json* notes) {
  bool torn_a = false, torn_b = false;
  const std::string pa = SamplesPath(a, part), pb = SamplesPath(b, part);
  Status st = ReadRecordsReadOnly(pa, kind, sa, &torn_a);
  if (!st.ok()) return Status::InvalidInput(st.message() + " (part " + part + " is in " + a.dir + "/results.json)");
  st = ReadRecordsReadOnly(pb, kind, sb, &torn_b);
  if (!st.ok()) return Status::InvalidInput(st.message() + " (part " + part + " is in " + b.dir + "/results.json)");
  if (torn_a) notes->push_back(TornTailNote(pa));
  if (torn_b) notes->push_back(TornTailNote(pb));
  return Status::Ok();
}

// A part whose kind compares it on its own, not by units (kind_view.h).
Status CompareOwnPart(const KindView& view, const std::string& part, VerdictKind kind, const RunFolder& a,
                      const RunFolder& b, const std::vector<SampleRecord>& sa, const std::vector<SampleRecord>& sb,
                      const NoisePair& noise, const CompareOptions& opts, nlohmann::json* out,
                      PartVerdicts* verdicts, nlohmann::json* notes) {
  nlohmann::json pd;
  EVALRUN_RETURN_IF_ERROR(view.ComparePart(part, a, b, sa, sb, opts, &pd));
  pd["noise"] = nullptr;
  pd["within_noise"] = nullptr;
  if (noise.given) {
    std::vector<SampleRecord> na, na2;
    EVALRUN_RETURN_IF_ERROR(ReadNoiseRecords(noise, part, kind, &na, &na2, notes));
    EVALRUN_RETURN_IF_ERROR(view.ComparePartNoise(part, a, noise.a, noise.a2, na, na2, opts, &pd));
  }
  if (pd["regression"].get<bool>()) verdicts->regressions.push_back(part);
  *out = std::move(pd);
  return Status::Ok();
}

// A part with scores: its metrics paired, the flips, the verdict of its
// first metric and, with an A/A pair, its noise floor.
Status CompareScoredPart(const std::string& part, const FolderPart& fa, const std::vector<SampleRecord>& sa,
                         const std::vector<SampleRecord>& sb, const NoisePair& noise, const CompareOptions& opts,
                         nlohmann::json* out, PartVerdicts* verdicts, nlohmann::json* notes) {
  const PartUnits ua = ExtractUnits(fa, sa), ub = ExtractUnits(fa, sb);
  nlohmann::json pd;
  pd["part"] = part;
  pd["kind"] = CompareKindName(*fa.kind);
  pd["scale"] = CompareScale(*fa.kind);
  pd["label_title"] = ua.label_title;
  pd["samples_a"] = sa.size();
  pd["samples_b"] = sb.size();
  nlohmann::json metrics = nlohmann::json::array();
  nlohmann::json flips;
  int prompt_changed = 0, duplicates = 0, other_duplicates = 0;
  for (size_t m = 0; m < ua.metrics.size() && m < ub.metrics.size(); ++m) {
    if (ua.metrics[m].name != ub.metrics[m].name) continue;
    metrics.push_back(CompareMetric(ua.metrics[m], ub.metrics[m], m == 0, opts,
                                    m == 0 ? &duplicates : &other_duplicates, &flips, &prompt_changed));
  }
  if (duplicates > 0)
    notes->push_back("part " + part + ": " + std::to_string(duplicates) +
                     " repeated sample ids; the last line of each counts");
  const nlohmann::json& head = metrics[0];
  pd["headline"] = head["name"];
  pd["paired"] = head["paired"];
  pd["only_in_a"] = head["only_in_a"];
  pd["only_in_b"] = head["only_in_b"];
  pd["prompt_changed"] = prompt_changed;
  pd["metrics"] = metrics;
  int64_t a_better = 0, b_better = 0;
  for (const auto& f : flips) (f["a"].get<double>() > f["b"].get<double>() ? a_better : b_better)++;
  pd["flipped_a_better"] = a_better;
  pd["flipped_b_better"] = b_better;
  pd["flipped"] = flips;
  const std::string verdict = head["overall"]["verdict"];
  pd["verdict"] = verdict;
  pd["regression"] = verdict == "regression";
  if (verdict == "regression") verdicts->regressions.push_back(part);
  if (verdict == "improvement") verdicts->improvements.push_back(part);
  pd["noise"] = nullptr;
  pd["within_noise"] = nullptr;
  if (noise.given) {
    nlohmann::json nj;
    EVALRUN_RETURN_IF_ERROR(PartNoise(noise, part, *fa.kind, ua.metrics[0], ub.metrics[0],
                                      head["overall"]["delta"].get<double>(), opts, &nj, notes));
    pd["within_noise"] = nj["within_noise"];
    pd["noise"] = std::move(nj);
  }
  if (head["only_in_a"].get<int64_t>() > 0 || head["only_in_b"].get<int64_t>() > 0)
    notes->push_back("part " + part + ": compared on the " + head["paired"].dump() + " ids both runs answered (" +
                     head["only_in_a"].dump() + " only in A, " + head["only_in_b"].dump() + " only in B)");
  if (prompt_changed > 0)
    notes->push_back("part " + part + ": " + std::to_string(prompt_changed) +
                     " paired questions were asked with different prompts (prompt_sha256 differs)");
  *out = std::move(pd);
  return Status::Ok();
}

// One part's document; *out stays null when the part has no verdicts.
Status ComparePart(const std::string& part, const RunFolder& a, const RunFolder& b, const NoisePair& noise,
                   const CompareOptions& opts, nlohmann::json* out, PartVerdicts* verdicts, nlohmann::json* notes) {
  FolderPart fa, fb;
  EVALRUN_RETURN_IF_ERROR(DescribeFolderPart(a, part, &fa));
  EVALRUN_RETURN_IF_ERROR(DescribeFolderPart(b, part, &fb));
  if (fa.kind && fb.kind && *fa.kind != *fb.kind)
    return Status::InvalidInput("part " + part + ": " + a.dir + " records " + VerdictKindName(*fa.kind) +
                                " verdicts, " + b.dir + " " + VerdictKindName(*fb.kind) + " verdicts");
  if (!fa.kind) fa.kind = fb.kind;
  if (!fa.kind) {
    notes->push_back("part " + part + ": no verdicts (not a question set, or not known to this evalrun); not compared");
    return Status::Ok();
  }
  std::vector<SampleRecord> sa, sb;
  EVALRUN_RETURN_IF_ERROR(ReadPartSamples(a, b, part, *fa.kind, &sa, &sb, notes));
  if (const KindView* view = FindKindView(*fa.kind); view && view->ComparesOnItsOwn())
    EVALRUN_RETURN_IF_ERROR(CompareOwnPart(*view, part, *fa.kind, a, b, sa, sb, noise, opts, out, verdicts, notes));
  else
    EVALRUN_RETURN_IF_ERROR(CompareScoredPart(part, fa, sa, sb, noise, opts, out, verdicts, notes));
  AddCompareSection(part, a.results, b.results, out, notes);  // a part's own view (compare_section.h)
  (*out)["tables"] = nlohmann::json::array();  // none since PartSection went; kept for evalrun.compare/1's readers
  return Status::Ok();
}

// BuildComparison without the safety net for nlohmann's exceptions.
Status BuildComparisonOrThrow(const CompareOptions& opts, nlohmann::json* out) {
  EVALRUN_RETURN_IF_ERROR(CheckOptions(opts));
  RunFolder a, b;
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(opts.run_a, &a));
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(opts.run_b, &b));
  NoisePair noise;
  EVALRUN_RETURN_IF_ERROR(LoadNoisePair(opts, &noise));

  nlohmann::json notes = nlohmann::json::array();
  std::vector<std::string> parts;
  EVALRUN_RETURN_IF_ERROR(ChooseParts(opts, a, b, &parts, &notes));
  nlohmann::json doc = ComparisonHead(opts, a, b, noise, &notes);
  nlohmann::json part_docs = nlohmann::json::array();
  PartVerdicts verdicts;
  for (const auto& part : parts) {
    nlohmann::json pd;
    EVALRUN_RETURN_IF_ERROR(ComparePart(part, a, b, noise, opts, &pd, &verdicts, &notes));
    if (!pd.is_null()) part_docs.push_back(std::move(pd));
  }
  if (part_docs.empty()) return Status::InvalidInput("nothing to compare: no part with verdicts in both runs");
  doc["parts"] = std::move(part_docs);
  doc["regressions"] = verdicts.regressions;
  doc["improvements"] = verdicts.improvements;
  doc["notes"] = notes;
  doc["exit_code"] = verdicts.regressions.empty() ? kExitOk : kExitRegression;
  *out = std::move(doc);
  return Status::Ok();
}

}  // namespace

Status BuildComparison(const CompareOptions& opts, nlohmann::json* out) {
  try {
    return BuildComparisonOrThrow(opts, out);
  } catch (const nlohmann::json::exception& e) {
    // A field of an unexpected type that the readers did not guard.
    return Status::Internal("compare: unexpected JSON in " + opts.run_a + " or " + opts.run_b + ": " + e.what());
  }
}

int CompareRuns(const CompareOptions& opts, FILE* out, FILE* err) {
  nlohmann::json doc;
  Status st = BuildComparison(opts, &doc);
  if (!st.ok()) {
    std::fprintf(err, "evalrun compare: %s\n", st.message().c_str());
    return kExitBadInput;
  }
  if (opts.json) {
    std::string s = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fprintf(out, "%s\n", s.c_str());
  } else {
    std::string md = ComparisonMarkdown(doc, opts.max_flips_shown);
    std::fwrite(md.data(), 1, md.size(), out);
  }
  std::fflush(out);
  if (!opts.html_path.empty()) {
    st = WriteFileAtomically(opts.html_path, ComparisonHtml(doc));
    if (!st.ok()) {
      std::fprintf(err, "evalrun compare: --html: %s\n", st.message().c_str());
      return kExitBadInput;
    }
    std::fprintf(err, "wrote %s\n", opts.html_path.c_str());
  }
  return doc["exit_code"].get<int>();
}

}  // namespace evalrun
