#include "evals/publish/compare_markdown.h"

#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/compare_noise.h"
#include "evals/publish/compare_options.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"
#include "evals/publish/compare_section.h"
#include "scorers/statistics.h"

namespace evalrun {
namespace {

std::string Pct(const nlohmann::json& v) { return FormatDouble("%.2f", v.get<double>() * 100); }
std::string Pp(const nlohmann::json& v) { return FormatPoints(v.get<double>()); }
std::string Ci(const nlohmann::json& st) {
  return "[" + Pp(st["ci_low"]) + ", " + Pp(st["ci_high"]) + "]";
}

// A table cell: no line breaks, '|' escaped, at most 160 bytes.
constexpr MarkdownCellStyle kCellStyle{true, 160};
// A line of text outside a table: one line, long enough for a noise floor's sentence.
constexpr MarkdownCellStyle kLineStyle{true, 1000};

std::string Cell(const std::string& s) { return MarkdownCell(s, kCellStyle); }

std::string Code(const std::string& s) { return std::string("`") + Cell(s) + "`"; }

struct Headers {
  std::string a_better, b_better, label;
};

Headers HeadersFor(const nlohmann::json& part) {
  const std::string label = JsonText(part.value("label_title", nlohmann::json("category")));
  if (part.value("scale", "") == "fraction") return {"A > B", "A < B", label};
  return {"A✓ B✗", "A✗ B✓", label};
}

std::string StatsCells(const nlohmann::json& st) {
  return st["n"].dump() + " | " + Pct(st["score_a"]) + " | " + Pct(st["score_b"]) + " | " + Pp(st["delta"]) +
         " | " + Ci(st) + " | " + st["a_better"].dump() + " | " + st["b_better"].dump() + " | " +
         FormatPValue(st["p_value"].get<double>());
}

std::string FlipValue(double v, const std::string& scale) {
  if (scale != "fraction") return v >= 1 ? "✓" : "✗";
  return FormatDouble("%.2f", v);
}

// " (within noise)" after a part's verdict when the noise floor says so.
std::string NoiseTag(const nlohmann::json& part) {
  const auto& w = part.value("within_noise", nlohmann::json());
  return w.is_boolean() && w.get<bool>() ? " (within noise)" : "";
}

// The noise-floor section: the A/A pair's flips and the smallest difference
// the comparison detects, per part; or that none was measured.
void NoiseSection(const nlohmann::json& cmp, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  const auto& nf = cmp.value("noise_floor", nlohmann::json());
  if (!nf.is_object()) return;
  line("## Noise floor (A/A)");
  line("");
  if (!nf["measured"].get<bool>()) {
    line("Not measured: " + JsonText(nf["text"]) + ".");
    line("");
    return;
  }
  line("A/A pair: A = " + Code(JsonText(nf["a"])) + ", A2 = " + Code(JsonText(nf["a2"])) + ". " +
       Cell(JsonText(nf["formula"])) + "; alpha " + FormatDouble("%g", nf["alpha"].get<double>()) + ", power " +
       FormatDouble("%g", nf["power"].get<double>()) + ". A headline |Δ| below the floor is labelled within "
       "noise (the label does not change the verdict or the exit code).");
  line("");
  std::string rows;
  for (const auto& p : cmp["parts"]) {
    const auto& n = p.value("noise", nlohmann::json());
    if (!n.is_object() || OwnComparisonView(p)) continue;  // a floor of its own (kind_view.h): its line below
    const std::string mde = compare_internal::DetectableDifferenceText(n);
    rows += ("| " + Cell(JsonText(p["part"])) + " | " + n["flips"].dump() + "/" + n["pairs"].dump() + " | " +
         Pct(n["flip_rate"]) + " % | " + n["n"].dump() + " | " + mde + " | " + Pp(n["delta"]) + " | " +
         JsonText(n["label"]) + " |\n");
  }
  if (!rows.empty()) {
    line("| part | A/A flips | flip rate | n | detectable Δ (pp) | A/B Δ (pp) | |");
    line("|---|--:|--:|--:|--:|--:|---|");
    line(rows);
  }
  for (const auto& p : cmp["parts"]) {
    const auto& n = p.value("noise", nlohmann::json());
    if (n.is_object()) line("- " + Cell(JsonText(p["part"])) + ": " + MarkdownCell(JsonText(n["text"]), kLineStyle) + ".");
  }
  line("");
}

// The title and the table of the two runs.
void RunsSection(const nlohmann::json& cmp, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  const auto& ra = cmp["a"];
  const auto& rb = cmp["b"];
  line("# evalrun compare: A = " + JsonText(ra["job"]) + ", B = " + JsonText(rb["job"]));
  line("");
  line("| run | folder | job | card | finished (UTC) |");
  line("|---|---|---|---|---|");
  for (const auto* r : {&ra, &rb}) {
    std::string sha = JsonText((*r)["card_sha256"]);
    line(std::string("| ") + (r == &ra ? "A" : "B") + " | " + Code(JsonText((*r)["dir"])) + " | " +
         Cell(JsonText((*r)["job"])) + " | " + Cell(JsonText((*r)["card"])) +
         (sha.empty() ? "" : " (sha256 " + sha.substr(0, 12) + ")") + " | " +
         Cell(JsonText((*r)["finished_utc"])) + " |");
  }
  line("");
}

// Verdict first: what a person (and CI) came for. The overall verdict, then
// a line per part that regressed or improved (a kind that compares on its
// own gives its own line, kind_view.h).
void VerdictSection(const nlohmann::json& cmp, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  const auto& set = cmp["settings"];
  const double alpha = set["alpha"].get<double>();
  std::string min_delta = FormatDouble("%.2f", set["min_delta_points"].get<double>());
  if (cmp["regressions"].empty()) {
    line("**Verdict: no significant regression** (alpha " + FormatDouble("%g", alpha) + ", min delta " + min_delta +
         " pp). Exit code " + cmp["exit_code"].dump() + ".");
  } else {
    line("**Verdict: significant regression** (alpha " + FormatDouble("%g", alpha) + ", min delta " + min_delta +
         " pp). Exit code " + cmp["exit_code"].dump() + ".");
  }
  line("");
  for (const auto& p : cmp["parts"]) {
    if (const KindView* own = OwnComparisonView(p)) {
      if (const std::string s = own->CompareVerdictMarkdown(p); !s.empty()) line(s);
      continue;
    }
    const std::string v = p["verdict"];
    if (v != "regression" && v != "improvement") continue;
    const auto& m = p["metrics"][0];
    const auto& st = m["overall"];
    line(std::string("- ") + (v == "regression" ? "**Regression**" : "**Improvement**") + " in " +
         JsonText(p["part"]) + ": " + JsonText(m["title"]) + " " + Pct(st["score_a"]) + " % → " +
         Pct(st["score_b"]) + " % (Δ " + Pp(st["delta"]) + " pp, 95 % CI " + Ci(st) + " pp, McNemar p = " +
         FormatPValue(st["p_value"].get<double>()) + ", " + st["a_better"].dump() + " vs " +
         st["b_better"].dump() + " discordant)" + NoiseTag(p) + ".");
  }
  line("");
}

// Every part's metrics in one table (none when no part has any).
void SummarySection(const nlohmann::json& cmp, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  const auto& parts = cmp["parts"];
  const auto& set = cmp["settings"];
  bool any_metrics = false;
  for (const auto& p : parts) any_metrics = any_metrics || !p.value("metrics", nlohmann::json::array()).empty();
  if (!any_metrics) return;
  line("## Summary");
  line("");
  line("| part | metric | n | A % | B % | Δ pp | 95 % CI (pp) | A better | B better | McNemar p | verdict |");
  line("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|");
  for (const auto& p : parts) {
    bool first = true;
    for (const auto& m : p["metrics"]) {
      const auto& st = m["overall"];
      std::string verdict = JsonText(st["verdict"]);
      if (first) {
        if (verdict == "regression" || verdict == "improvement") verdict = "**" + verdict + "**";
        verdict += NoiseTag(p);
      } else {
        verdict = "(" + verdict + ")";
      }
      line("| " + (first ? Cell(JsonText(p["part"])) : std::string()) + " | " + Cell(JsonText(m["title"])) +
           " | " + StatsCells(st) + " | " + verdict + " |");
      first = false;
    }
  }
  line("");
  line("Δ = B − A on the paired questions. 95 % CI: paired bootstrap, " + set["bootstrap"]["resamples"].dump() +
       " resamples, seed " + set["bootstrap"]["seed"].dump() +
       ". p: exact two-sided McNemar on the discordant pairs (for partial scores, the sign test on pairs "
       "whose scores differ). Only each part's first metric decides the exit code; the others are shown in "
       "parentheses.");
  line("");
}

// What differs between the runs' setups, what is the same, what neither
// recorded, then the card fields that differ.
void SetupSection(const nlohmann::json& cmp, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  line("## What differs between the runs");
  line("");
  std::vector<std::string> same, unknown;
  bool any = false;
  for (const auto& r : cmp["setup"]) {
    if (!r["differs"].get<bool>()) {
      (JsonText(r["a"]) == "(not recorded)" ? unknown : same).push_back(JsonText(r["field"]));
      continue;
    }
    if (!any) {
      line("| | A | B |");
      line("|---|---|---|");
      any = true;
    }
    line("| " + Cell(JsonText(r["field"])) + " | " + Code(JsonText(r["a"])) + " | " + Code(JsonText(r["b"])) +
         " |");
  }
  if (!any) line("Nothing differs in what both runs recorded.");
  line("");
  if (!same.empty()) {
    line("Same in both: " + Join(same, ", ") + ".");
    line("");
  }
  if (!unknown.empty()) {
    line("Recorded in neither run: " + Join(unknown, ", ") + ".");
    line("");
  }
  if (cmp["card_diff"].is_array() && !cmp["card_diff"].empty()) {
    line("Card fields that differ:");
    line("");
    line("| card field | A | B |");
    line("|---|---|---|");
    for (const auto& d : cmp["card_diff"]) {
      auto side = [&](const char* k) { return d.contains(k) ? Code(d[k].dump()) : std::string("(absent)"); };
      line("| " + Code(JsonText(d["path"])) + " | " + side("a") + " | " + side("b") + " |");
    }
    line("");
  }
}

// How a part's two runs were paired: on how many, and which ids only one has.
void PairingLine(const nlohmann::json& p, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  const std::string scale = p.value("scale", "");
  std::string only_a = p["only_in_a"].dump(), only_b = p["only_in_b"].dump();
  const auto& head = p["metrics"][0];
  auto ids = [](const nlohmann::json& v, int64_t total) {
    std::vector<std::string> s;
    for (const auto& x : v) s.push_back(JsonText(x));
    std::string t = Join(s, ", ");
    if (total > static_cast<int64_t>(s.size())) t += ", ...";
    return t;
  };
  std::string paired = "Paired on " + p["paired"].dump() + " " + (scale == "fraction" ? "samples" : "question ids");
  if (p["only_in_a"].get<int64_t>() == 0 && p["only_in_b"].get<int64_t>() == 0) {
    line(paired + " (the same set in both runs).");
  } else {
    std::string t = paired + "; " + only_a + " only in A";
    if (p["only_in_a"].get<int64_t>() > 0) t += " (" + Cell(ids(head["only_in_a_ids"], p["only_in_a"])) + ")";
    t += ", " + only_b + " only in B";
    if (p["only_in_b"].get<int64_t>() > 0) t += " (" + Cell(ids(head["only_in_b_ids"], p["only_in_b"])) + ")";
    line(t + ".");
  }
  line("");
}

// A table per metric and dimension of a part's groups (those with rows).
void GroupTables(const nlohmann::json& p, const Headers& h, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  for (const auto& m : p["metrics"]) {
    for (const auto& g : m["groups"]) {
      if (g["rows"].empty()) continue;
      line("### " + JsonText(m["title"]) + " by " + JsonText(g["dimension"]));
      line("");
      line("| " + JsonText(g["dimension"]) + " | n | A % | B % | Δ pp | 95 % CI (pp) | " + h.a_better + " | " +
           h.b_better + " | p |");
      line("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
      for (const auto& r : g["rows"])
        line("| " + Cell(JsonText(r["name"])) + " | " + StatsCells(r) + " |");
      line("");
    }
  }
}

// How many flipped each way, and the first `max_flips_shown` of them.
void FlipsSection(const nlohmann::json& p, const Headers& h, int max_flips_shown, std::string* o) {
  auto line = [&](const std::string& s) { *o += s + "\n"; };
  const std::string scale = p.value("scale", "");
  line("### Flipped (" + JsonText(p["metrics"][0]["title"]) + ")");
  line("");
  line(p["flipped_a_better"].dump() + " " + h.a_better + ", " + p["flipped_b_better"].dump() + " " + h.b_better +
       ".");
  line("");
  const auto& flips = p["flipped"];
  if (flips.empty()) return;
  line("| id | " + h.label + " | A | B |");
  line("|---|---|:-:|:-:|");
  int shown = 0;
  for (const auto& f : flips) {
    if (shown >= max_flips_shown) break;
    line("| " + Code(JsonText(f["id"])) + " | " + Cell(JsonText(f["label"])) + " | " +
         FlipValue(f["a"].get<double>(), scale) + " | " + FlipValue(f["b"].get<double>(), scale) + " |");
    ++shown;
  }
  if (static_cast<int>(flips.size()) > shown) {
    line("");
    line("... and " + std::to_string(flips.size() - shown) + " more (`--json` lists them all).");
  }
  line("");
}

// A part's section: its kind's own (kind_view.h), or pairing, groups and
// flips.
void PartSection(const nlohmann::json& p, int max_flips_shown, std::string* o) {
  if (const KindView* own = OwnComparisonView(p)) {
    *o += own->ComparePartMarkdown(p);
    return;
  }
  const std::string part = p["part"];
  *o += "## " + part + "\n\n";
  const Headers h = HeadersFor(p);
  PairingLine(p, o);
  *o += CompareSectionMarkdown(p);
  GroupTables(p, h, o);
  FlipsSection(p, h, max_flips_shown, o);
}

}  // namespace

std::string ComparisonMarkdown(const nlohmann::json& cmp, int max_flips_shown) {
  std::string o;
  RunsSection(cmp, &o);
  VerdictSection(cmp, &o);
  o += CompareSectionsDocMarkdown(cmp);
  SummarySection(cmp, &o);
  NoiseSection(cmp, &o);
  SetupSection(cmp, &o);
  o += MarkdownNotes(cmp["notes"], kCellStyle);
  for (const auto& p : cmp["parts"]) PartSection(p, max_flips_shown, &o);
  return o;
}

}  // namespace evalrun
