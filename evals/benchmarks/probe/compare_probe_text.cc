#include "evals/benchmarks/probe/compare_probe_text.h"

#include <cstdint>
#include <string>
#include <utility>

#include "evals/base/json_fields.h"
#include "evals/publish/compare_charts.h"
#include "evals/publish/compare_html_parts.h"
#include "evals/publish/html_text.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

// ---- Markdown ----

std::string G(const json& v) { return FormatDouble("%.6g", v.get<double>()); }
std::string Cell(const std::string& s) { return MarkdownCell(s, MarkdownCellStyle{true, 160}); }

// ---- HTML ----

using namespace compare_html_short;  // Td, Th, Badge, Anchor, VerdictBadge, NoiseBadge, E, Esc
std::string GOrDash(const json& v) { return v.is_number() ? FormatDouble("%.6g", v.get<double>()) : "—"; }

std::string TopCell(const json& t) {
  return "<code>" + E(t["token"]) + "</code> <span class=\"pm\">" +
         Esc(FormatDouble("%.5f", t["logprob"].get<double>())) + "</span>";
}

std::string PositionsTable(const json& rows) {
  std::string s = "<div class=\"wide\"><table><thead><tr>" + Th("position", true) + Th("KLD", true) + Th("A top (logprob)") +
                  Th("B top (logprob)") + Th("|Δ logprob|", true) + Th("text before it") + Th("next word") +
                  "</tr></thead><tbody>";
  for (const auto& w : rows)
    s += "<tr>" + Td(E(w["position"]), true) + Td(GOrDash(w["kld"]), true) + Td(TopCell(w["a_top"])) +
         Td(TopCell(w["b_top"])) + Td(GOrDash(w["abs_delta_top_logprob"]), true) + Td(E(w["excerpt"])) +
         Td(E(w["next_word"])) + "</tr>";
  return s + "</tbody></table></div>";
}

}  // namespace

std::string ProbeVerdictMarkdown(const json& p) {
  if (p["thresholds"].empty()) return "";  // measured only: no verdict to state
  std::string s = std::string("- ") + (p["regression"].get<bool>() ? "**Regression**" : "Within thresholds") +
                  " in " + JsonText(p["part"]) + ":";
  for (const auto& c : p["thresholds"])
    s += " " + JsonText(c["name"]) + " " + G(c["limit"]) + " (" + JsonText(c["source"]) + "): " + G(c["value"]) +
         (c["exceeded"].get<bool>() ? " **exceeded**;" : " ok;");
  if (!s.empty() && s.back() == ';') s.back() = '.';
  const json& w = p.value("within_noise", json());
  if (w.is_boolean()) s += w.get<bool>() ? " (within noise)" : " (beyond noise)";
  return s;
}

std::string ProbePartMarkdown(const json& p) {
  std::string o;
  auto line = [&](const std::string& s) { o += s + "\n"; };
  line("## " + JsonText(p["part"]) + " (logprob probe)");
  line("");
  line("Paired on " + p["paired"].dump() + " positions (" + p["only_in_a"].dump() + " only in A, " +
       p["only_in_b"].dump() + " only in B), top " + JsonText(p["top_logprobs"]) + " candidates each, text " +
       Cell(JsonText(JsonAt(p, {"text", "file"}))) + ".");
  line("");
  line("| statistic | mean | median | p95 | p99 | max |");
  line("|---|--:|--:|--:|--:|--:|");
  for (const auto& [title, key] : {std::pair<const char*, const char*>{"KLD(A‖B), nats", "kld"},
                                   {"abs Δ logprob of A's top token", "abs_delta_top_logprob"}}) {
    const json& s = p[key];
    line(std::string("| ") + title + " | " + G(s["mean"]) + " | " + G(s["median"]) + " | " + G(s["p95"]) + " | " +
         G(s["p99"]) + " | " + G(s["max"]) + " |");
  }
  line("");
  line("Top-1 agreement: " + FormatDouble("%.3f", 100 * p["top1_agreement"].get<double>()) + " % (" +
       p["top1_same"].dump() + " of " + p["paired"].dump() + "); top-K sets differ at " + p["top_sets_differ"].dump() +
       " positions; A's top token outside B's top-K at " + p["a_top_outside_b"].dump() + ".");
  line("");
  line("KLD: " + JsonText(p["kld_definition"]));
  line("");
  if (p["thresholds"].empty()) {
    line("No thresholds set (card keys max_kld_mean, max_kld_p99, min_top1 of the part, or the flags "
         "--max-kld-mean, --max-kld-p99, --min-top1): measured only.");
  } else {
    line("| threshold | limit | value | from | |");
    line("|---|--:|--:|---|---|");
    for (const auto& c : p["thresholds"])
      line("| " + JsonText(c["name"]) + " | " + G(c["limit"]) + " | " + G(c["value"]) + " | " +
           Cell(JsonText(c["source"])) + " | " + (c["exceeded"].get<bool>() ? "**exceeded**" : "ok") + " |");
  }
  line("");
  const json& noise = p.value("noise", json());
  if (noise.is_object()) {
    line("Noise floor: " + MarkdownCell(JsonText(noise["text"]), MarkdownCellStyle{true, 1000}) + ".");
    line("");
  }
  // A table of positions (worst[] and top1_changed[] have the same rows).
  auto positions = [&](const json& rows, size_t most) {
    line("| position | KLD | A top (logprob) | B top (logprob) | text before it | next word |");
    line("|--:|--:|---|---|---|---|");
    auto top = [](const json& t) {
      return "`" + Cell(JsonText(t["token"])) + "` (" + FormatDouble("%.5f", t["logprob"].get<double>()) + ")";
    };
    for (size_t i = 0; i < rows.size() && i < most; ++i) {
      const json& w = rows[i];
      line("| " + w["position"].dump() + " | " + G(w["kld"]) + " | " + top(w["a_top"]) + " | " + top(w["b_top"]) +
           " | " + Cell(JsonText(w["excerpt"])) + " | " + Cell(JsonText(w["next_word"])) + " |");
    }
    line("");
  };
  const json& changed = p.value("top1_changed", json::array());
  if (!changed.empty()) {
    constexpr size_t kShown = 10;
    const int64_t total = p.value("top1_changed_total", static_cast<int64_t>(changed.size()));
    line("### Top token changed (" + std::to_string(total) + " positions" +
         (total > static_cast<int64_t>(kShown) ? ", the first " + std::to_string(kShown) + " by position; --json and "
                                                 "--html list up to 200"
                                               : std::string()) +
         ")");
    line("");
    positions(changed, kShown);
  }
  if (!p["worst"].empty()) {
    line("### Worst positions by KLD");
    line("");
    positions(p["worst"], p["worst"].size());
  }
  return o;
}

std::string ProbeVerdictHtml(const json& p) {
  return " KLD mean " + GOrDash(p["kld"]["mean"]) + ", p99 " + GOrDash(p["kld"]["p99"]) + ", top-1 agreement " +
         Esc(FormatDouble("%.2f", 100 * p["top1_agreement"].get<double>())) + " %";
}

std::string ProbePartHtml(const json& p) {
  std::string out;
  std::string* h = &out;
  const std::string part = JsonText(p["part"]);
  *h += "<section id=\"" + Anchor(part) + "\"><h2>" + Esc(part) + " (logprob probe) " +
        VerdictBadge(JsonText(p["verdict"])) + NoiseBadge(p) + "</h2><p>Paired on " + E(p["paired"]) + " positions (" +
        E(p["only_in_a"]) + " only in A, " + E(p["only_in_b"]) + " only in B), top " + E(p["top_logprobs"]) +
        " candidates each, text <code>" + E(JsonAt(p, {"text", "file"})) + "</code>.</p>";
  *h += "<div class=\"wide\"><table class=\"compact\"><thead><tr>" + Th("statistic") + Th("mean", true) + Th("median", true) +
        Th("p95", true) + Th("p99", true) + Th("max", true) + "</tr></thead><tbody>";
  for (const auto& [title, key] : {std::pair<const char*, const char*>{"KLD(A‖B), nats", "kld"},
                                   {"|Δ logprob| of A's top token", "abs_delta_top_logprob"}}) {
    const json& s = p[key];
    *h += "<tr>" + Td(title) + Td(GOrDash(s["mean"]), true) + Td(GOrDash(s["median"]), true) + Td(GOrDash(s["p95"]), true) +
          Td(GOrDash(s["p99"]), true) + Td(GOrDash(s["max"]), true) + "</tr>";
  }
  *h += "</tbody></table></div><p>Top-1 agreement: <b>" +
        Esc(FormatDouble("%.3f", 100 * p["top1_agreement"].get<double>())) + " %</b> (" + E(p["top1_same"]) + " of " +
        E(p["paired"]) + "); top-K sets differ at " + E(p["top_sets_differ"]) + " positions; A's top token outside "
        "B's top-K at " + E(p["a_top_outside_b"]) + ".</p>";
  json marks = json::array();
  if (p["thresholds"].empty()) {
    *h += "<p class=\"note\">No thresholds set (card keys max_kld_mean, max_kld_p99, min_top1 of the part, or "
          "<code>--max-kld-mean</code>, <code>--max-kld-p99</code>, <code>--min-top1</code>): measured only.</p>";
  } else {
    *h += "<h3>thresholds</h3><div class=\"wide\"><table class=\"compact\"><thead><tr>" + Th("threshold") + Th("limit", true) +
          Th("value", true) + Th("from") + Th("") + "</tr></thead><tbody>";
    for (const auto& c : p["thresholds"]) {
      const bool ex = c["exceeded"].get<bool>();
      *h += "<tr>" + Td("<code>" + E(c["name"]) + "</code>") + Td(GOrDash(c["limit"]), true) + Td(GOrDash(c["value"]), true) +
            Td(E(c["source"])) + Td(ex ? Badge("b-bad", "exceeded") : Badge("b-ok", "ok")) + "</tr>";
      if (JsonText(c["name"]) != "min_top1") marks.push_back({{"name", c["name"]}, {"value", c["limit"]}, {"limit", true}});
    }
    *h += "</tbody></table></div>";
  }
  marks.push_back({{"name", "mean"}, {"value", p["kld"]["mean"]}, {"limit", false}});
  marks.push_back({{"name", "p99"}, {"value", p["kld"]["p99"]}, {"limit", false}});
  const json& noise = p.value("noise", json());
  json noise_histogram;
  if (noise.is_object()) {
    marks.push_back({{"name", "A/A max"}, {"value", noise["kld"]["max"]}, {"limit", false}});
    noise_histogram = noise["kld_histogram"];
  }
  if (p["kld_histogram"].is_object())
    *h += "<h3>distribution of per-position KLD</h3>" + KldHistogramChart(p["kld_histogram"], marks, noise_histogram);
  if (noise.is_object()) *h += "<p>Noise floor: " + E(noise["text"]) + ".</p>";
  const json& changed = p.value("top1_changed", json::array());
  const int64_t changed_total = p.value("top1_changed_total", static_cast<int64_t>(changed.size()));
  *h += "<h3>top token changed (" + std::to_string(changed_total) + " positions)</h3>";
  if (changed.empty()) {
    *h += "<p>At every paired position A's and B's most likely tokens are the same.</p>";
  } else {
    *h += PositionsTable(changed);
    if (changed_total > static_cast<int64_t>(changed.size()))
      *h += "<p class=\"note\">The first " + std::to_string(changed.size()) + " by position; the samples of both runs "
            "have them all.</p>";
  }
  if (!p["worst"].empty()) *h += "<h3>worst positions by KLD</h3>" + PositionsTable(p["worst"]);
  *h += "<p class=\"note\">KLD: " + E(p["kld_definition"]) + "</p></section>\n";
  return out;
}

}  // namespace evalrun
