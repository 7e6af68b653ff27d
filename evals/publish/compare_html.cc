#include "evals/publish/compare_html.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/compare_charts.h"
#include "evals/publish/compare_html_parts.h"
#include "evals/publish/compare_noise.h"
#include "evals/publish/compare_options.h"
#include "evals/publish/html_page.h"
#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/table_text.h"
#include "evals/publish/compare_section.h"
#include "scorers/statistics.h"

namespace evalrun {
namespace {

using nlohmann::json;

using namespace compare_html_short;  // Td, Th, Badge, Anchor, VerdictBadge, NoiseBadge, E, Esc

std::string Pct(const json& v) { return v.is_number() ? FormatDouble("%.2f", v.get<double>() * 100) : "—"; }
std::string Pp(const json& v) { return v.is_number() ? FormatPoints(v.get<double>()) : "—"; }
// The clauses the compared parts' kinds add to one of the page's sentences
// (kind_view.h: `clause` is one of KindView's *Clause hooks), each once.
std::string KindClauses(const json& cmp, std::string (KindView::*clause)() const) {
  std::string out;
  for (const auto& p : cmp["parts"]) {
    const KindView* view = FindKindViewByCompareName(JsonText(p["kind"]));
    const std::string c = view ? (view->*clause)() : "";
    if (!c.empty() && out.find(c) == std::string::npos) out += c;
  }
  return out;
}

// The part's detectable difference, when its noise floor was measured.
std::optional<double> PartMde(const json& part) {
  const json& n = part.value("noise", json());
  if (n.is_object() && n["mde"].is_number()) return n["mde"].get<double>();
  return std::nullopt;
}

// The opening of a statistics table's head: `leading` (header cells), then
// the statistics' columns; the caller adds its own last cells and </tr></thead>.
std::string StatsHeader(const std::string& leading, const std::string& a_better, const std::string& b_better) {
  return "<thead><tr>" + leading + Th("n", true) + Th("A %", true) + Th("B %", true) + Th("Δ pp", true) +
         Th("95 % CI (pp)", true) + Th(a_better, true) + Th(b_better, true) + Th("McNemar p", true);
}

std::string StatsCells(const json& st) {
  return Td(E(st["n"]), true) + Td(Pct(st["score_a"]), true) + Td(Pct(st["score_b"]), true) +
         Td("<b>" + Pp(st["delta"]) + "</b>", true) + Td("[" + Pp(st["ci_low"]) + ", " + Pp(st["ci_high"]) + "]", true) +
         Td(E(st["a_better"]), true) + Td(E(st["b_better"]), true) +
         Td(Esc(FormatPValue(st["p_value"].is_number() ? st["p_value"].get<double>() : 1.0)), true);
}

void RunsTable(const json& cmp, std::string* h) {
  *h += "<div class=\"wide\"><table><thead><tr>" + Th("run") + Th("folder") + Th("job") + Th("card") + Th("finished (UTC)") +
        "</tr></thead><tbody>";
  for (const char* k : {"a", "b"}) {
    const json& r = cmp[k];
    const std::string sha = JsonText(r["card_sha256"]);
    *h += "<tr>" + Td(std::string("<b>") + (k[0] == 'a' ? "A" : "B") + "</b>") + Td("<code>" + E(r["dir"]) + "</code>") +
          Td(E(r["job"])) + Td(E(r["card"]) + (sha.empty() ? "" : " <span class=\"pm\">sha256 " +
                                                                     Esc(sha.substr(0, 12)) + "</span>")) +
          Td(E(r["finished_utc"])) + "</tr>";
  }
  *h += "</tbody></table></div>";
}

void VerdictSection(const json& cmp, std::string* h) {
  const json& set = cmp["settings"];
  const bool bad = !cmp["regressions"].empty();
  *h += "<section id=\"verdict\"><h2>Verdict</h2><div class=\"banner " + std::string(bad ? "bad" : "good") + "\">" +
        (bad ? "Significant regression" : "No significant regression") + "</div><p>alpha " +
        Esc(FormatDouble("%g", set["alpha"].get<double>())) + ", min delta " +
        Esc(FormatDouble("%.2f", set["min_delta_points"].get<double>())) + " pp; exit code " + E(cmp["exit_code"]) +
        ". Only each part's headline metric" + KindClauses(cmp, &KindView::CompareDecidesClause) +
        " decides it.</p><ul class=\"plain\">";
  for (const auto& p : cmp["parts"]) {
    std::string line = "<li><a href=\"#" + Anchor(JsonText(p["part"])) + "\"><b>" + E(p["part"]) + "</b></a> " +
                       VerdictBadge(JsonText(p["verdict"])) + NoiseBadge(p);
    if (const KindView* own = OwnComparisonView(p)) {
      line += own->CompareVerdictHtml(p);
    } else if (!p["metrics"].empty()) {
      const json& m = p["metrics"][0];
      const json& st = m["overall"];
      line += " " + E(m["title"]) + " " + Pct(st["score_a"]) + " % → " + Pct(st["score_b"]) + " % (Δ " +
              Pp(st["delta"]) + " pp, 95 % CI [" + Pp(st["ci_low"]) + ", " + Pp(st["ci_high"]) + "], p " +
              Esc(FormatPValue(st["p_value"].get<double>())) + ")";
    }
    *h += line + "</li>";
  }
  *h += "</ul><h3>runs</h3>";
  RunsTable(cmp, h);
  *h += "</section>\n";
}

void SummarySection(const json& cmp, std::string* h) {
  json rows = json::array();
  std::string table;
  for (const auto& p : cmp["parts"]) {
    bool first = true;
    for (const auto& m : p["metrics"]) {
      const json& st = m["overall"];
      if (first) {
        json r = st;
        r["name"] = JsonText(p["part"]) + " · " + JsonText(m["title"]);
        rows.push_back(std::move(r));
      }
      const std::string verdict = JsonText(st["verdict"]);
      table += "<tr>" + Td(first ? "<b>" + E(p["part"]) + "</b>" : "") + Td(E(m["title"])) + StatsCells(st) +
               Td(first ? VerdictBadge(verdict) + NoiseBadge(p) : "<span class=\"pm\">(" + Esc(verdict) + ")</span>") +
               "</tr>";
      first = false;
    }
  }
  if (rows.empty()) return;
  const json& set = cmp["settings"];
  *h += "<section id=\"summary\"><h2>Summary</h2>" + DeltaChart(rows, std::nullopt) + "<div class=\"wide\"><table>" +
        StatsHeader(Th("part") + Th("metric"), "A better", "B better") + Th("verdict") + "</tr></thead><tbody>";
  *h += table + "</tbody></table></div><p class=\"note\">Δ = B − A on the paired items. 95 % CI: paired bootstrap, " +
        E(set["bootstrap"]["resamples"]) + " resamples, seed " + E(set["bootstrap"]["seed"]) +
        ". p: exact two-sided McNemar on the discordant pairs (for partial scores, the sign test on pairs whose "
        "scores differ). Only the first metric of a part decides the exit code; the others are in parentheses."
        "</p></section>\n";
}

void NoiseSection(const json& cmp, std::string* h) {
  const json& nf = cmp.value("noise_floor", json());
  if (!nf.is_object()) return;
  *h += "<section id=\"noise-floor\"><h2>Noise floor (A/A)</h2>";
  if (!nf["measured"].get<bool>()) {
    *h += "<p>Not measured: " + E(nf["text"]) + ".</p></section>\n";
    return;
  }
  *h += "<p>A/A pair: A = <code>" + E(nf["a"]) + "</code>, A2 = <code>" + E(nf["a2"]) + "</code>. " +
        E(nf["formula"]) + "; alpha " + Esc(FormatDouble("%g", nf["alpha"].get<double>())) + ", power " +
        Esc(FormatDouble("%g", nf["power"].get<double>())) +
        ". A headline |Δ| below the detectable difference is labelled within noise" +
        KindClauses(cmp, &KindView::CompareNoiseClause) + " (the labels do not change the verdict or the exit code).</p>";
  std::string rows, texts;
  for (const auto& p : cmp["parts"]) {
    const json& n = p.value("noise", json());
    if (!n.is_object()) continue;
    texts += "<li><b>" + E(p["part"]) + "</b>: " + E(n["text"]) + ".</li>";
    if (OwnComparisonView(p)) continue;  // its floor is its own (kind_view.h): its line only
    const std::string mde = Esc(compare_internal::DetectableDifferenceText(n));
    rows += "<tr>" + Td("<a href=\"#" + Anchor(JsonText(p["part"])) + "\">" + E(p["part"]) + "</a>") +
            Td(E(n["flips"]) + " / " + E(n["pairs"]), true) + Td(Pct(n["flip_rate"]) + " %", true) +
            Td(E(n["n"]), true) + Td(mde, true) + Td(Pp(n["delta"]), true) + Td(NoiseBadge(p)) + "</tr>";
  }
  if (!rows.empty())
    *h += "<div class=\"wide\"><table><thead><tr>" + Th("part") + Th("A/A flips", true) + Th("flip rate", true) + Th("n", true) +
          Th("detectable Δ (pp)", true) + Th("A/B Δ (pp)", true) + Th("") + "</tr></thead><tbody>" + rows +
          "</tbody></table></div>";
  *h += "<ul class=\"plain\">" + texts + "</ul></section>\n";
}

std::string FlipMark(const json& v, const std::string& scale) {
  const double x = v.is_number() ? v.get<double>() : 0;
  if (scale == "fraction") return Esc(FormatDouble("%.2f", x));
  return x >= 1 ? Badge("b-right", "right") : Badge("b-wrong", "wrong");
}

void ScoredPartSection(const json& p, std::string* h) {
  const std::string part = JsonText(p["part"]), kind = p.value("scale", "");
  const bool fraction = kind == "fraction";
  const std::string a_better = fraction ? "A &gt; B" : "A✓ B✗", b_better = fraction ? "A &lt; B" : "A✗ B✓";
  *h += "<section id=\"" + Anchor(part) + "\"><h2>" + Esc(part) + " " + VerdictBadge(JsonText(p["verdict"])) +
        NoiseBadge(p) + "</h2><p>Paired on " + E(p["paired"]) + (fraction ? " samples" : " items") + " (" +
        E(p["only_in_a"]) + " only in A, " + E(p["only_in_b"]) + " only in B).</p>";
  *h += CompareSectionHtml(p);
  const std::optional<double> mde = PartMde(p);
  bool headline = true;
  for (const auto& m : p["metrics"]) {
    for (const auto& g : m["groups"]) {
      if (g["rows"].empty()) continue;
      *h += "<h3>" + E(m["title"]) + " by " + E(g["dimension"]) + "</h3>";
      if (headline) *h += DeltaChart(g["rows"], mde);
      *h += "<div class=\"wide\"><table>" + StatsHeader(Th(E(g["dimension"])), a_better, b_better) + "</tr></thead><tbody>";
      for (const auto& r : g["rows"]) *h += "<tr>" + Td(E(r["name"])) + StatsCells(r) + "</tr>";
      *h += "</tbody></table></div>";
    }
    headline = false;
  }
  const json& flips = p["flipped"];
  const std::string head_title = p["metrics"].empty() ? "" : JsonText(p["metrics"][0]["title"]);
  *h += "<h3>flipped (" + Esc(head_title) + "): " + E(p["flipped_a_better"]) + " " + a_better + ", " +
        E(p["flipped_b_better"]) + " " + b_better + "</h3>";
  if (!flips.empty()) {
    *h += "<div class=\"wide\"><table class=\"samples\"><thead><tr>" + Th("id") + Th(E(p.value("label_title", json("category")))) +
          Th("A") + Th("A answered") + Th("B") + Th("B answered") + "</tr></thead><tbody>";
    int shown = 0;
    for (const auto& f : flips) {
      if (shown >= kHtmlFlipsShown) break;
      *h += "<tr class=\"flip\">" + Td("<code>" + E(f["id"]) + "</code>") + Td(E(f["label"])) +
            Td(FlipMark(f["a"], kind)) + Td("<span class=\"mono\">" + E(f.value("answer_a", json(""))) + "</span>") +
            Td(FlipMark(f["b"], kind)) + Td("<span class=\"mono\">" + E(f.value("answer_b", json(""))) + "</span>") +
            "</tr>";
      ++shown;
    }
    *h += "</tbody></table></div>";
    if (static_cast<int>(flips.size()) > shown)
      *h += "<p class=\"note\">The first " + std::to_string(shown) + " of " + std::to_string(flips.size()) +
            " flipped items; <code>evalrun compare --json</code> lists them all.</p>";
  }
  *h += "</section>\n";
}

// JSON as HTML with a space after each ',' and ':' ({"a": 1, "b": [2, 3]}),
// each member on one line (a long one may break), so that a value wraps
// between its members.
std::string SpacedJsonHtml(const json& v) {
  const std::string lines = v.dump(0);  // a member a line; a string's own newlines are escaped
  std::string out;
  char last = 0;
  for (size_t at = 0; at < lines.size();) {
    const size_t end = std::min(lines.find('\n', at), lines.size());
    const std::string line = lines.substr(at, end - at);
    const bool tight = out.empty() || last == '{' || last == '[' || line.empty() || line[0] == '}' || line[0] == ']';
    if (!tight) out += ' ';
    out += line.size() <= 60 ? "<span class=\"member\">" + Esc(line) + "</span>" : Esc(line);
    if (!line.empty()) last = line.back();
    at = end + 1;
  }
  return out;
}

// A value of the setup tables as the page shows it, in <code> that wraps
// between words and never runs out of its column: a sha256 as its first 12
// digits (the whole in the title, as the runs table shows a card's), JSON
// spaced (the Markdown keeps both as they are).
std::string SetupValue(const std::string& text) {
  const bool hex64 = text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (hex64) return "<code title=\"" + Esc(text) + "\">" + Esc(text.substr(0, 12)) + "…</code>";
  const json parsed = text.empty() || (text[0] != '{' && text[0] != '[') ? json() : json::parse(text, nullptr, false);
  if (!parsed.is_object() && !parsed.is_array()) return "<code>" + Esc(text) + "</code>";
  return "<code>" + SpacedJsonHtml(parsed) + "</code>";
}

void SetupSection(const json& cmp, std::string* h) {
  *h += "<section id=\"setup\"><h2>What differs between the runs</h2>";
  std::vector<std::string> same, unknown;
  std::string rows;
  for (const auto& r : cmp["setup"]) {
    if (!r["differs"].get<bool>()) {
      (JsonText(r["a"]) == "(not recorded)" ? unknown : same).push_back(JsonText(r["field"]));
      continue;
    }
    rows += "<tr>" + Td(E(r["field"])) + Td(SetupValue(JsonText(r["a"]))) + Td(SetupValue(JsonText(r["b"]))) + "</tr>";
  }
  if (rows.empty()) *h += "<p>Nothing differs in what both runs recorded.</p>";
  else *h += "<div class=\"wide\"><table class=\"diff\"><thead><tr>" + Th("") + Th("A") + Th("B") + "</tr></thead><tbody>" + rows + "</tbody></table></div>";
  if (!same.empty()) *h += "<p class=\"note\">Same in both: " + Esc(Join(same, ", ")) + ".</p>";
  if (!unknown.empty()) *h += "<p class=\"note\">Recorded in neither run: " + Esc(Join(unknown, ", ")) + ".</p>";
  if (cmp["card_diff"].is_array() && !cmp["card_diff"].empty()) {
    *h += "<h3>card fields that differ</h3><div class=\"wide\"><table class=\"diff\"><thead><tr>" + Th("card field") + Th("A") + Th("B") +
          "</tr></thead><tbody>";
    for (const auto& d : cmp["card_diff"]) {
      auto side = [&](const char* k) {
        return d.contains(k) ? SetupValue(d[k].dump()) : std::string("<span class=\"pm\">(absent)</span>");
      };
      *h += "<tr>" + Td("<code>" + E(d["path"]) + "</code>") + Td(side("a")) + Td(side("b")) + "</tr>";
    }
    *h += "</tbody></table></div>";
  }
  *h += "</section>\n";
}

}  // namespace

std::string ComparisonHtml(const json& cmp) {
  std::string h;
  h.reserve(1 << 16);
  const std::string title = "evalrun compare: A = " + JsonText(cmp["a"]["job"]) + ", B = " + JsonText(cmp["b"]["job"]);
  h += HtmlPageStart(title);
  h += "<header><h1>" + Esc(title) + "</h1><div class=\"sub\">" + E(cmp["a"]["dir"]) + " → " + E(cmp["b"]["dir"]) +
       "</div></header>\n";
  VerdictSection(cmp, &h);
  h += CompareSectionsDocHtml(cmp);
  SummarySection(cmp, &h);
  NoiseSection(cmp, &h);
  for (const auto& p : cmp["parts"]) {
    if (const KindView* own = OwnComparisonView(p)) h += own->ComparePartHtml(p);  // kind_view.h
    else ScoredPartSection(p, &h);
  }
  SetupSection(cmp, &h);
  if (!cmp["notes"].empty()) {
    h += "<section id=\"notes\"><h2>Notes</h2><ul class=\"plain\">";
    for (const auto& n : cmp["notes"]) h += "<li>" + E(n) + "</li>";
    h += "</ul></section>\n";
  }
  h += "<footer>Written by evalrun compare from the two run folders (schema " + E(cmp["schema"]) +
       "; <code>--json</code> gives the same document).</footer>\n";
  return h + HtmlPageEnd();
}

}  // namespace evalrun
