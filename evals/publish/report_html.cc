#include "evals/publish/report_html.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/bar_chart.h"
#include "evals/publish/failed_requests.h"
#include "evals/publish/page_section.h"
#include "evals/publish/html_page.h"
#include "evals/publish/html_text.h"
#include "evals/publish/section_tables.h"
#include "evals/publish/table_text.h"
#include "evals/run/part_registry.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string E(const json& v) { return HtmlEscape(JsonText(v)); }

std::string NumOrDash(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

// Cuts a label for a chart row (the full text goes into <title>).
std::string ShortLabel(const std::string& s, size_t max) {
  return s.size() <= max ? s : Utf8Shortened(s, max - 1);
}

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e"};

// Score (0..100) by context length, one line per task and the mean.
std::string LineChart(const json& by_length) {
  const json& lens = by_length["lengths"];
  const json& tasks = by_length["tasks"];
  const int kWidth = 760, kLeft = 48, kRight = 190, kTop = 18, kBottom = 40;
  const int legend_rows = 1 + static_cast<int>(tasks.size());
  const int kHeight = std::max(300, kTop + legend_rows * 18 + 20);
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  const size_t nl = lens.size();
  auto X = [&](size_t i) { return nl <= 1 ? kLeft + w / 2 : kLeft + w * static_cast<double>(i) / (nl - 1); };
  auto Y = [&](double v) { return kTop + h * (1 - std::max(0.0, std::min(100.0, v)) / 100); };
  std::string s = "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(kHeight) +
                  "\" width=\"100%\" role=\"img\">";
  for (int t = 0; t <= 100; t += 20) {
    s += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + FormatDouble("%.1f", Y(t)) + "\" x2=\"" +
         FormatDouble("%.1f", kLeft + w) + "\" y2=\"" + FormatDouble("%.1f", Y(t)) + "\" class=\"grid\"/>";
    s += "<text x=\"" + std::to_string(kLeft - 8) + "\" y=\"" + FormatDouble("%.1f", Y(t) + 4) +
         "\" class=\"axis\" text-anchor=\"end\">" + std::to_string(t) + "</text>";
  }
  for (size_t i = 0; i < nl; ++i) {
    s += "<text x=\"" + FormatDouble("%.1f", X(i)) + "\" y=\"" + std::to_string(kHeight - kBottom + 20) +
         "\" class=\"axis\" text-anchor=\"middle\">" + E(lens[i]["label"]) + "</text>";
  }
  s += "<text x=\"" + FormatDouble("%.1f", kLeft + w / 2) + "\" y=\"" + std::to_string(kHeight - 4) +
       "\" class=\"axis\" text-anchor=\"middle\">context length (tokens)</text>";
  auto series = [&](auto value_of, const std::string& color, double width, double r, bool labels,
                    const std::string& dash) {
    std::string pts, dots;
    for (size_t i = 0; i < nl; ++i) {
      json v = value_of(lens[i]);
      if (!v.is_number()) continue;
      double x = X(i), y = Y(v.get<double>());
      pts += (pts.empty() ? "" : " ") + FormatDouble("%.1f", x) + "," + FormatDouble("%.1f", y);
      dots += "<circle cx=\"" + FormatDouble("%.1f", x) + "\" cy=\"" + FormatDouble("%.1f", y) + "\" r=\"" +
              FormatDouble("%.1f", r) + "\" fill=\"" + color + "\"/>";
      if (labels)
        dots += "<text x=\"" + FormatDouble("%.1f", x) + "\" y=\"" + FormatDouble("%.1f", y - 9) +
                "\" class=\"value\" text-anchor=\"middle\">" + FormatDouble("%.1f", v.get<double>()) + "</text>";
    }
    std::string line;
    if (!pts.empty())
      line = "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" +
             FormatDouble("%.1f", width) + "\"" + (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") +
             " stroke-linejoin=\"round\"/>";
    return line + dots;
  };
  std::string legend;
  double ly = kTop + 6;
  const double lx = kLeft + w + 24;
  auto legend_row = [&](const std::string& name, const std::string& color, double width, const std::string& dash) {
    legend += "<line x1=\"" + FormatDouble("%.1f", lx) + "\" y1=\"" + FormatDouble("%.1f", ly) + "\" x2=\"" +
              FormatDouble("%.1f", lx + 22) + "\" y2=\"" + FormatDouble("%.1f", ly) + "\" stroke=\"" + color +
              "\" stroke-width=\"" + FormatDouble("%.1f", width) + "\"" +
              (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/>";
    legend += "<text x=\"" + FormatDouble("%.1f", lx + 30) + "\" y=\"" + FormatDouble("%.1f", ly + 4) +
              "\" class=\"label\">" + HtmlEscape(ShortLabel(name, 22)) + "</text>";
    ly += 18;
  };
  for (size_t t = 0; t < tasks.size(); ++t) {
    const std::string task = JsonText(tasks[t]);
    const std::string color = kPalette[t % 10];
    const std::string dash = t >= 10 ? "5,3" : "";
    s += series([&](const json& l) { return l["tasks"].contains(task) ? l["tasks"][task] : json(); }, color, 1.6,
                2.5, false, dash);
    legend_row(task, color, 1.6, dash);
  }
  s += series([](const json& l) { return l["score"]; }, "#1d2330", 3.2, 4.2, true, "");
  ly = kTop + 6 + 18 * static_cast<double>(tasks.size());
  legend_row("mean of tasks", "#1d2330", 3.2, "");
  return s + legend + "</svg>";
}


// The browser: filters and search over the embedded samples; all text goes
// in with textContent.
constexpr const char* kScript = R"JS(
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('samples-data').textContent);
  var body = document.getElementById('s-body');
  var more = document.getElementById('s-more');
  var count = document.getElementById('f-count');
  var fPart = document.getElementById('f-part');
  var fKind = document.getElementById('f-kind');
  var fQ = document.getElementById('f-q');
  var PAGE = 200, shown = PAGE, matches = data;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function hay(s) {
    if (s._h === undefined)
      s._h = [s.id, s.category, s.gold, s.extracted, s.response, s.reasoning, s.prompt || '']
          .join('\n').toLowerCase();
    return s._h;
  }
  function apply() {
    var p = fPart.value, k = fKind.value, q = fQ.value.trim().toLowerCase();
    matches = data.filter(function (s) {
      if (p && s.part !== p) return false;
      if (k === 'wrong' && s.verdict === 'right') return false;
      if (k === 'cut' && !s.cut_off) return false;
      if (k === 'noans' && !s.no_answer) return false;
      if (q && hay(s).indexOf(q) < 0) return false;
      return true;
    });
    shown = PAGE;
    render();
  }
  function block(td, label, text) {
    if (!text) return;
    td.appendChild(el('div', 'k', label));
    td.appendChild(el('pre', null, text));
  }
  function detail(s) {
    var tr = el('tr', 'sdetail');
    var td = el('td', 'detail');
    td.colSpan = 8;
    block(td, 'prompt', s.prompt);
    block(td, 'response', s.response || '(empty)');
    block(td, 'reasoning', s.reasoning);
    if (s.extra && s.extra.length) {
      var ul = el('ul', 'plain');
      s.extra.forEach(function (kv) { ul.appendChild(el('li', null, kv[0] + ': ' + kv[1])); });
      td.appendChild(el('div', 'k', 'verdict details'));
      td.appendChild(ul);
    }
    var meta = 'finish_reason ' + (s.finish || '?') + ' · prompt tokens ' + (s.prompt_tokens == null ? '?' : s.prompt_tokens) +
        ' · completion tokens ' + (s.completion_tokens == null ? '?' : s.completion_tokens) +
        (s.latency_ms == null ? '' : ' · ' + Math.round(s.latency_ms) + ' ms');
    td.appendChild(el('div', 'note', meta));
    if (s.truncated) td.appendChild(el('div', 'note', 'Text cut for this page; the full answer is in samples.jsonl.'));
    tr.appendChild(td);
    return tr;
  }
  function row(s) {
    var tr = el('tr', 'srow');
    tr.appendChild(el('td', null, s.part));
    tr.appendChild(el('td', 'mono', s.id));
    tr.appendChild(el('td', null, s.category));
    var v = el('td', 'verdict');
    v.appendChild(el('span', 'badge b-' + s.verdict, s.verdict));
    if (s.cut_off) v.appendChild(el('span', 'badge b-cut', 'cut off'));
    if (s.no_answer) v.appendChild(el('span', 'badge b-cut', 'no answer'));
    tr.appendChild(v);
    tr.appendChild(el('td', 'mono', s.gold));
    tr.appendChild(el('td', 'mono', s.extracted));
    tr.appendChild(el('td', null, s.finish));
    tr.appendChild(el('td', 'num', s.completion_tokens == null ? '' : s.completion_tokens));
    tr.addEventListener('click', function () {
      var next = tr.nextSibling;
      if (next && next.className === 'sdetail') body.removeChild(next);
      else body.insertBefore(detail(s), next);
    });
    return tr;
  }
  function render() {
    body.textContent = '';
    var n = Math.min(shown, matches.length);
    var frag = document.createDocumentFragment();
    for (var i = 0; i < n; i++) frag.appendChild(row(matches[i]));
    body.appendChild(frag);
    count.textContent = 'showing ' + n + ' of ' + matches.length + ' matching (' + data.length + ' samples)';
    more.hidden = n >= matches.length;
  }
  fPart.addEventListener('change', apply);
  fKind.addEventListener('change', apply);
  fQ.addEventListener('input', apply);
  more.addEventListener('click', function () { shown += PAGE; render(); });
  apply();
})();
)JS";

// Whether any part counted answers of this field: its column shows only then.
bool AnyCounted(const json& summary, const char* key) {
  for (const auto& r : summary)
    if (r.contains(key) && r[key].is_number() && r[key].get<double>() > 0) return true;
  return false;
}

// The raw_fallback and server_parse_error cells of a row, when shown.
std::string ParserCells(const json& r, bool fallback, bool parse_errors) {
  std::string h;
  if (fallback) h += "<td class=\"num\">" + NumOrDash(r.value("raw_fallback", json(0)), "%.0f") + "</td>";
  if (parse_errors) h += "<td class=\"num\">" + NumOrDash(r.value("server_parse_error", json(0)), "%.0f") + "</td>";
  return h;
}

// The score table of every part (and the lines a kind puts under it).
std::string ResultsSection(const json& m) {
  if (m["summary"].empty())  // only procedures: no scores, never an empty table
    return "<section id=\"results\"><h2>Results</h2><p>No question part in this run: nothing scored. The "
           "procedures' figures follow in their own sections.</p></section>\n";
  const bool fallback = AnyCounted(m["summary"], "raw_fallback");
  const bool parse_errors = AnyCounted(m["summary"], "server_parse_error");
  std::string h;
  h += "<section id=\"results\"><h2>Results</h2><div class=\"wide\"><table><thead><tr><th>part</th><th>metric</th>"
       "<th class=\"num\">score %</th><th class=\"num\">± stderr</th><th class=\"num\">n</th>"
       "<th class=\"num\">cut-off</th><th class=\"num\">no answer</th><th class=\"num\">failed</th>" +
       std::string(fallback ? "<th class=\"num\">raw fallback</th>" : "") +
       (parse_errors ? "<th class=\"num\">parser errors</th>" : "") +
       "<th class=\"num\">prompt tok/s</th><th class=\"num\">decode tok/s</th></tr></thead><tbody>";
  for (const auto& r : m["summary"]) {
    h += "<tr><td><b>" + HtmlEscape(PartDisplayName(JsonText(r["part"]))) + "</b> <code>" + E(r["part"]) +
         "</code></td><td>" + E(r["metric"]) + "</td><td class=\"num score\">" + NumOrDash(r["score"], "%.2f") +
         "</td><td class=\"num pm\">" +
         (r["stderr"].is_number() ? "± " + FormatDouble("%.2f", r["stderr"].get<double>()) : "—") +
         "</td><td class=\"num\">" + NumOrDash(r["n"], "%.0f") + "</td><td class=\"num\">" +
         NumOrDash(r["cut_off"], "%.0f") + "</td><td class=\"num\">" + NumOrDash(r["no_answer"], "%.0f") +
         "</td><td class=\"num\">" + NumOrDash(r["failed"], "%.0f") + "</td>" +
         ParserCells(r, fallback, parse_errors) + "<td class=\"num\">" + NumOrDash(r["prompt_tps"], "%.1f") + "</td><td class=\"num\">" + NumOrDash(r["decode_tps"], "%.1f") +
         "</td></tr>";
  }
  h += "</tbody></table></div><p class=\"note\">± stderr: binomial standard error for accuracies";
  for (const auto& n : m.value("stderr_notes", json::array())) h += "; for " + E(n["parts"]) + " " + E(n["meaning"]);
  h += ". failed: requests that failed after retries, not scored (the part's failed.jsonl). " +
       std::string(fallback ? "raw fallback: answers the server's output parser could not parse (HTTP 500), "
                              "recovered from its raw text and scored as usual. "
                            : "") +
       (parse_errors ? "parser errors: answers lost to the server's output parser (HTTP 500) with nothing to "
                       "recover, counted wrong. "
                     : "") +
       "Speeds are the server's own timings, token-weighted over the part.</p>";
  for (const auto& f : m.value("under_the_table", json::array())) h += JsonText(f["html"]);
  h += "</section>\n";
  return h;
}

// Scores by context length (the fraction kind's by_length).
std::string ByLengthSection(const json& m) {
  std::string h;
  if (!m["by_length"].is_object() || m["by_length"]["lengths"].empty()) return h;
  const json& r = m["by_length"];
  h += "<section id=\"by-length\"><h2>" + E(r["title"]) + ": score by context length</h2>" + LineChart(r);
  // Tasks as rows, lengths as columns: eleven or more tasks fit the page's
  // width, where as columns they ran off its right edge.
  h += "<div class=\"wide\"><table class=\"compact\"><thead><tr><th>task</th>";
  for (const auto& l : r["lengths"]) h += "<th class=\"num\">" + E(l["label"]) + "</th>";
  h += "</tr></thead><tbody><tr><td><b>mean</b></td>";
  for (const auto& l : r["lengths"]) h += "<td class=\"num\"><b>" + NumOrDash(l["score"], "%.2f") + "</b></td>";
  h += "</tr>";
  for (const auto& t : r["tasks"]) {
    const std::string task = JsonText(t);
    h += "<tr><td>" + HtmlEscape(task) + "</td>";
    for (const auto& l : r["lengths"])
      h += "<td class=\"num\">" + NumOrDash(l["tasks"].contains(task) ? l["tasks"][task] : json(), "%.2f") + "</td>";
    h += "</tr>";
  }
  h += "</tbody></table></div></section>\n";
  return h;
}

// A bar chart per category dimension.
std::string CategoriesSection(const json& m) {
  std::string h;
  if (m["categories"].empty()) return h;
  h += "<section id=\"categories\"><h2>By category</h2>";
  for (const auto& c : m["categories"]) h += "<h3>" + E(c["title"]) + "</h3>" + BarChart(c["rows"]);
  h += "</section>\n";
  return h;
}

// Run-to-run noise (--repeat 2).
std::string RepeatSection(const json& m) {
  std::string h;
  if (!m.value("repeats", json()).is_array()) return h;
  h += "<section id=\"repeat\"><h2>Run-to-run noise (--repeat 2)</h2><p>Every part was run twice (the second in "
       "<code>repeat-2/</code>). " +
       (JsonText(m["repeat_formula"]).empty() ? std::string() : E(m["repeat_formula"]) + "; alpha 0.05, power 0.8. ") +
       "A difference from another run below the detectable difference is within noise" +
       JsonText(m.value("repeat_clauses", json(""))) + ".</p><div class=\"wide\"><table><thead><tr><th>part</th>"
       "<th>flips</th><th>flip rate (%)</th><th>detectable difference (pp)</th></tr></thead><tbody>";
  for (const auto& r : m["repeats"]) {
    std::string mde = r["mde"].is_number()         ? FormatDouble("%.2f", r["mde"].get<double>())
                      : r["mde_below"].is_number() ? "&lt; " + FormatDouble("%.2f", r["mde_below"].get<double>()) +
                                                         " (no flips)"
                      : r["kld_mean"].is_number()  ? "KLD mean " + FormatDouble("%.3g", r["kld_mean"].get<double>()) +
                                                        ", max " + NumOrDash(r["kld_max"], "%.3g")
                                                   : "";
    h += "<tr><td>" + E(r["part"]) + "</td><td>" + NumOrDash(r["flips"], "%.0f") + " / " +
         NumOrDash(r["pairs"], "%.0f") + "</td><td>" +
         FormatDouble("%.2f", r["flip_rate"].is_number() ? r["flip_rate"].get<double>() : 0.0) + "</td><td>" + mde +
         "</td></tr>";
  }
  h += "</tbody></table></div><ul class=\"plain\">";
  for (const auto& r : m["repeats"]) h += "<li>" + E(r["part"]) + ": " + E(r["text"]) + "</li>";
  h += "</ul></section>\n";
  return h;
}

// The setup, the load on the machine, and the notes.
std::string SetupSection(const json& m) {
  std::string h;
  h += "<section id=\"setup\"><h2>Setup</h2><div class=\"wide\"><table class=\"kv\"><tbody>";
  for (const auto& kv : m["setup"]) h += "<tr><td>" + E(kv[0]) + "</td><td>" + E(kv[1]) + "</td></tr>";
  h += "</tbody></table></div>";
  if (const json& c = m.value("setup_command", json()); c.is_object())
    h += std::string("<h3>") +
         (JsonText(c["source"]) == "server.command" ? "The engine's command as evalrun ran it (server.command)"
                                                    : "The command the server was started with (server.launch)") +
         "</h3><pre class=\"cmd\">" + E(c["line"]) + "</pre>";
  h += "</section>\n";
  h += "<section id=\"load\"><h2>Load on the machine</h2>";
  if (m["load"].is_object()) {
    h += "<p>" + E(m["load"]["text"]) + "</p>";
    if (!m["load"]["details"].empty()) {
      h += "<ul class=\"plain\">";
      for (const auto& d : m["load"]["details"]) h += "<li>" + E(d) + "</li>";
      h += "</ul>";
    }
  } else {
    h += "<p class=\"note\">No busy-process summary was recorded for this run.</p>";
  }
  h += "</section>\n";
  if (!m["notes"].empty()) {
    h += "<section id=\"notes\"><h2>Notes</h2><ul class=\"plain\">";
    for (const auto& n : m["notes"]) h += "<li>" + E(n) + "</li>";
    h += "</ul></section>\n";
  }

  return h;
}

// The sample browser (filled in by kScript from the samples data).
std::string SamplesSection(const json& m) {
  std::string h;
  h += "<section id=\"samples\"><h2>Samples</h2><div class=\"controls\">"
       "<select id=\"f-part\" aria-label=\"part\"><option value=\"\">all parts</option>";
  for (const auto& p : m["sample_parts"]) h += "<option value=\"" + E(p) + "\">" + E(p) + "</option>";
  h += "</select><select id=\"f-kind\" aria-label=\"filter\"><option value=\"all\">all answers</option>"
       "<option value=\"wrong\">wrong</option><option value=\"cut\">cut off</option>"
       "<option value=\"noans\">no answer</option></select>"
       "<input id=\"f-q\" type=\"search\" placeholder=\"search id, category, gold, answer, response\" "
       "aria-label=\"search\"><span id=\"f-count\"></span></div>"
       "<noscript><p class=\"note\">The sample browser needs JavaScript.</p></noscript>"
       "<div class=\"wide\"><table class=\"samples\"><thead><tr><th>part</th><th>id</th><th>category</th><th>verdict</th>"
       "<th>gold</th><th>answer</th><th>finish</th><th class=\"num\">tokens</th></tr></thead>"
       "<tbody id=\"s-body\"></tbody></table></div><button id=\"s-more\" type=\"button\" hidden>Show more</button>"
       "<p class=\"note\">Click a row for the response. Responses longer than " +
       NumOrDash(m["max_text_chars"], "%.0f") + " bytes are cut here; samples.jsonl keeps them whole.</p></section>\n";
  return h;
}

}  // namespace

std::string RenderReportHtml(const json& m) {
  std::string h;
  h.reserve(1 << 16);
  h += HtmlPageStart(JsonText(m["title"]));
  h += "<header><h1>" + E(m["title"]) + "</h1><div class=\"sub\">" + E(m["subtitle"]) + "</div></header>\n";
  h += ResultsSection(m);
  h += FailedRequestsHtml(m.value("failures", json::array()));  // evals/publish/failed_requests.h
  // The sections a kind renders itself with the results (kind_view.h).
  for (const auto& f : m.value("with_the_results", json::array())) h += JsonText(f["html"]);
  h += RenderPageSectionsHtml(m.value("page_sections", json()), PagePlace::kWithTheResults);
  h += ByLengthSection(m);
  h += CategoriesSection(m);
  // The tables a kind's or a part's section brings (kind_view.h).
  if (const json tables = m.value("tables", json::array()); !tables.empty())
    h += "<section id=\"sections\"><h2>Sections</h2>" + SectionTablesHtml(tables) + "</section>\n";
  for (const auto& f : m.value("fragments", json::array()))
    if (!JsonText(f["html"]).empty()) h += "<section>" + JsonText(f["html"]) + "</section>\n";
  h += RepeatSection(m);
  h += RenderPageSectionsHtml(m.value("page_sections", json()), PagePlace::kAfterTheRepeat);  // evals/publish/page_section.h
  h += SetupSection(m);
  h += SamplesSection(m);
  h += "<footer>Written by evalrun report from results.json and the samples of this run folder.</footer>\n";
  h += HtmlPageEnd("<script type=\"application/json\" id=\"samples-data\">" + JsonForScriptBlock(m["samples"]) +
                   "</script>\n<script>" + kScript + "</script>\n");
  return h;
}

}  // namespace evalrun
