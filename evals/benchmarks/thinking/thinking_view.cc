#include "evals/benchmarks/thinking/thinking_view.h"

#include <algorithm>
#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/compare_section.h"
#include "evals/publish/html_text.h"
#include "evals/publish/page_section.h"
#include "evals/publish/table_text.h"
#include "scorers/statistics.h"

namespace evalrun {
namespace {

using nlohmann::json;

// ---- Small pieces: numbers, a table both renderings share ----

std::string Num(const json& v, const char* f = "%.6g") { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }
std::string Pct(const json& v) { return v.is_number() ? FormatDouble("%.2f", v.get<double>() * 100) : "—"; }
std::string Pp(const json& v) { return v.is_number() ? FormatPoints(v.get<double>()) : "—"; }
std::string PValue(const json& v) { return v.is_number() ? FormatPValue(v.get<double>()) : "—"; }

// "50 / 90 / 104" of a reasoning_tokens {median, p90, max}; "—" when null.
std::string Tokens(const json& t) {
  if (!t.is_object()) return "—";
  return Num(t["median"]) + " / " + Num(t["p90"]) + " / " + Num(t["max"]);
}

// "2 / 3" of a cut_off {in_reasoning, in_answer}.
std::string Cuts(const json& c) {
  if (!c.is_object()) return "—";
  return Num(c["in_reasoning"]) + " / " + Num(c["in_answer"]);
}

struct Table {
  std::string title;
  std::vector<std::string> head;  // the first column is text, the others numbers
  std::vector<std::vector<std::string>> rows;
  std::string note;               // under the table ("" for none)
};

constexpr MarkdownCellStyle kLine{true, 2000};

std::string MarkdownTable(const Table& t) {
  std::string o = "### " + MarkdownCell(t.title) + "\n\n|";
  std::string sep = "|";
  for (size_t i = 0; i < t.head.size(); ++i) {
    o += " " + MarkdownCell(t.head[i]) + " |";
    sep += i == 0 ? "---|" : "--:|";
  }
  o += "\n" + sep + "\n";
  for (const auto& r : t.rows) {
    o += "|";
    for (const auto& c : r) o += " " + MarkdownCell(c) + " |";
    o += "\n";
  }
  o += "\n";
  if (!t.note.empty()) o += MarkdownCell(t.note, kLine) + "\n\n";
  return o;
}

std::string HtmlTable(const Table& t) {
  std::string h = t.title.empty() ? "" : "<h3>" + HtmlEscape(t.title) + "</h3>";
  h += "<div class=\"wide\"><table class=\"compact\"><thead><tr>";
  for (size_t i = 0; i < t.head.size(); ++i)
    h += std::string(i ? "<th class=\"num\">" : "<th>") + HtmlEscape(t.head[i]) + "</th>";
  h += "</tr></thead><tbody>";
  for (const auto& r : t.rows) {
    h += "<tr>";
    for (size_t i = 0; i < r.size(); ++i)
      h += std::string(i ? "<td class=\"num\">" : "<td>") + HtmlEscape(r[i]) + "</td>";
    h += "</tr>";
  }
  h += "</tbody></table></div>";
  if (!t.note.empty()) h += "<p class=\"note\">" + HtmlEscape(t.note) + "</p>";
  return h;
}

// ---- The switch and the off arm in plain words ----

std::string VerdictMeaning(const std::string& verdict) {
  if (verdict == "reaches")
    return "enable_thinking changes the prompt the model is given, so the off arm really asks without thinking.";
  if (verdict == "no_switch")
    return "the chat template does not react to enable_thinking: both arms are asked the same prompt.";
  if (verdict == "dropped")
    return "the template reacts to enable_thinking, yet the server's prompt is the same either way: something on "
           "the way (a gateway that strips chat_template_kwargs) drops the switch, so thinking cannot be turned off.";
  return "the server gave no prompt token counts, so whether the switch arrives is not known.";
}

// What the check saw: token counts, rendered prompts, the template, the
// server-wide budget, an error.
std::string SwitchEvidence(const json& sw) {
  std::vector<std::string> seen;
  const json& off = JsonAt(sw, {"chat_prompt_tokens", "off"});
  const json& on = JsonAt(sw, {"chat_prompt_tokens", "on"});
  if (off.is_number() && on.is_number())
    seen.push_back("usage.prompt_tokens " + Num(off) + " with the switch off, " + Num(on) + " with it on");
  const json& r = JsonAt(sw, {"rendered"});
  if (r.is_object())
    seen.push_back(r.value("differ", false)
                       ? "/apply-template renders the two differently (the off prompt ends with " +
                             json(Utf8Shortened(JsonText(r["off_tail"]), 60)).dump() + ")"
                       : "/apply-template renders the two the same");
  const json& names = JsonAt(sw, {"template_names_switch"});
  if (names.is_boolean())
    seen.push_back(std::string("the chat template ") + (names.get<bool>() ? "names" : "does not name") +
                   " enable_thinking");
  const json& budget = JsonAt(sw, {"server_reasoning_budget"});
  if (!budget.is_null()) seen.push_back("the server-wide reasoning budget is " + JsonText(budget));
  if (!JsonText(JsonAt(sw, {"error"})).empty()) seen.push_back(JsonText(JsonAt(sw, {"error"})));
  return seen.empty() ? "" : " Seen: " + Join(seen, "; ") + ".";
}

std::string SwitchSentence(const json& part) {
  const json& sw = JsonAt(part, {"switch"});
  if (!sw.is_object()) return "Switch check: not made (the part was prepared without a server).";
  return "Switch check: " + JsonText(sw["text"]) + ". " + VerdictMeaning(JsonText(sw["verdict"])) +
         SwitchEvidence(sw);
}

std::string OffSentence(const json& part) {
  const std::string state = JsonText(JsonAt(part, {"off_switch"}));
  const std::string n = Num(JsonAt(part, {"arms", "off", "n"})), r = Num(JsonAt(part, {"arms", "off", "reasoned"}));
  if (state == "obeyed") return "Thinking off was obeyed: none of the " + n + " replies with the switch off reasoned.";
  if (state == "ignored")
    return "Thinking off was ignored: all " + n + " replies with the switch off reasoned (scored on their answer "
           "text only).";
  if (state == "partly ignored")
    return "Thinking off was partly ignored: " + r + " of " + n + " replies with the switch off reasoned (scored on "
           "their answer text only).";
  return "Thinking off: not asked yet.";
}

std::string BudgetSentence(const json& part) {
  std::string s = "Thinking on was asked with a reasoning budget of " + Num(JsonAt(part, {"budget"})) +
                  " tokens (reasoning_budget_tokens; max_tokens = the budget + the answer limit).";
  const std::string counted = JsonText(JsonAt(part, {"reasoning_tokens_counted"}));
  if (!counted.empty()) s += " Reasoning tokens per answer: " + counted + ".";
  return s;
}

// ---- The report's tables ----

// The benchmarks, and "all" (the arms over every benchmark) when several.
std::vector<std::pair<std::string, const json*>> Benchmarks(const json& part) {
  std::vector<std::pair<std::string, const json*>> v;
  const json& b = JsonAt(part, {"benchmarks"});
  if (b.is_object())
    for (auto it = b.begin(); it != b.end(); ++it) v.push_back({it.key(), &*it});
  const json& arms = JsonAt(part, {"arms"});
  if (v.size() > 1 && arms.is_object()) v.push_back({"all", &arms});
  return v;
}

Table AccuracyTable(const json& part) {
  Table t{"Accuracy, thinking on vs off",
          {"benchmark", "pairs", "on (%)", "off (%)", "on − off (pp)", "right only on", "right only off",
           "McNemar p"},
          {},
          "Pairs: the questions asked in both arms; on − off is over them, McNemar's exact two-sided p on the "
          "questions only one arm got right."};
  for (const auto& [name, b] : Benchmarks(part)) {
    const json& p = JsonAt(*b, {"paired"});
    t.rows.push_back({name, Num(p["n"]), Pct(JsonAt(*b, {"on", "accuracy"})), Pct(JsonAt(*b, {"off", "accuracy"})),
                      Pp(p["difference"]), Num(p["on_only"]), Num(p["off_only"]), PValue(p["mcnemar_p"])});
  }
  return t;
}

Table ReasoningTable(const json& part) {
  Table t{"Reasoning tokens and cut-offs",
          {"benchmark", "arm", "n", "tokens median", "p90", "max", "cut in reasoning", "cut in answer",
           "budget ended", "left in answer", "no reasoning"},
          {},
          "Tokens: the reasoning tokens per answer. Cut in reasoning: the token limit came before any answer (or "
          "inside an unclosed think block); cut in answer: after the reasoning; budget ended: the budget ended the "
          "reasoning and an answer followed; left in answer: reasoning left in the answer, a stray or unclosed think "
          "tag (wrong, counted apart); no reasoning: replies without any."};
  for (const auto& [name, b] : Benchmarks(part)) {
    for (const char* arm : {"on", "off"}) {
      const json& a = JsonAt(*b, {arm});
      if (!a.is_object()) continue;
      const json& tok = a["reasoning_tokens"];
      t.rows.push_back({name, arm, Num(a["n"]), Num(JsonAt(tok, {"median"})), Num(JsonAt(tok, {"p90"})),
                        Num(JsonAt(tok, {"max"})), Num(JsonAt(a, {"cut_off", "in_reasoning"})),
                        Num(JsonAt(a, {"cut_off", "in_answer"})), Num(a.value("budget_ended", json())),
                        Num(a["reasoning_in_content"]), Num(a["no_reasoning"])});
    }
  }
  return t;
}

// The buckets of both arms by label, in the on arm's order.
struct BucketRow {
  std::string label;
  json on, off;
};

std::vector<BucketRow> BucketRows(const json& part) {
  std::vector<BucketRow> rows;
  auto find = [&](const std::string& l) -> BucketRow* {
    for (auto& r : rows)
      if (r.label == l) return &r;
    rows.push_back({l, json(), json()});
    return &rows.back();
  };
  for (const char* arm : {"on", "off"}) {
    const json& list = JsonAt(part, {"arms", arm, "by_reasoning_tokens"});
    if (!list.is_array()) continue;
    for (const auto& b : list) {
      BucketRow* r = find(JsonText(b["label"]));
      (std::string(arm) == "on" ? r->on : r->off) = b;
    }
  }
  return rows;
}

Table BucketTable(const std::vector<BucketRow>& rows) {
  Table t{"Accuracy against reasoning tokens spent",
          {"reasoning tokens", "on: n", "on: accuracy (%)", "off: n", "off: accuracy (%)"},
          {},
          "Each answer counted in the bucket of the reasoning tokens it spent (buckets of the budget; the last: "
          "the budget spent or more), over all benchmarks."};
  for (const auto& r : rows)
    t.rows.push_back({r.label, Num(JsonAt(r.on, {"n"})), Pct(JsonAt(r.on, {"accuracy"})), Num(JsonAt(r.off, {"n"})),
                      Pct(JsonAt(r.off, {"accuracy"}))});
  return t;
}

// ---- The chart: accuracy per bucket, a bar for each arm ----

std::string F(double x) { return FormatDouble("%.1f", x); }

std::string Bar(double x, double w, double y0, double h, const json& b, const char* arm, const char* color,
                const std::string& label) {
  const json& n = JsonAt(b, {"n"});
  const json& acc = JsonAt(b, {"accuracy"});
  if (!acc.is_number()) return "";
  const double v = std::max(0.0, std::min(1.0, acc.get<double>()));
  const double top = y0 - h * v;
  return "<g><title>" + HtmlEscape(std::string(arm) + ", " + label + " reasoning tokens: " + Pct(acc) + " % of " +
                                   Num(n)) +
         "</title><rect x=\"" + F(x) + "\" y=\"" + F(top) + "\" width=\"" + F(w) + "\" height=\"" + F(y0 - top) +
         "\" fill=\"" + color + "\"/><text x=\"" + F(x + w / 2) + "\" y=\"" + F(top - 4) +
         "\" class=\"axis\" text-anchor=\"middle\">n " + HtmlEscape(Num(n)) + "</text></g>";
}

std::string BucketChart(const std::vector<BucketRow>& rows) {
  if (rows.empty()) return "";
  const int kWidth = 760, kLeft = 48, kRight = 110, kTop = 26, kPlotH = 200, kBottom = 44;
  const int height = kTop + kPlotH + kBottom;
  const double w = kWidth - kLeft - kRight, group = w / rows.size(), bar = std::min(36.0, group * 0.36);
  const double y0 = kTop + kPlotH;
  std::string s = "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(height) +
                  "\" width=\"100%\" role=\"img\" aria-label=\"accuracy against reasoning tokens spent\">";
  for (int t = 0; t <= 100; t += 25) {
    const double y = y0 - kPlotH * t / 100.0;
    s += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + F(y) + "\" x2=\"" + F(kLeft + w) + "\" y2=\"" + F(y) +
         "\" class=\"grid\"/><text x=\"" + std::to_string(kLeft - 8) + "\" y=\"" + F(y + 4) +
         "\" class=\"axis\" text-anchor=\"end\">" + std::to_string(t) + "</text>";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const double cx = kLeft + group * (i + 0.5);
    s += Bar(cx - bar - 1, bar, y0, kPlotH, rows[i].on, "on", "#4e79a7", rows[i].label);
    s += Bar(cx + 1, bar, y0, kPlotH, rows[i].off, "off", "#f28e2b", rows[i].label);
    s += "<text x=\"" + F(cx) + "\" y=\"" + F(y0 + 18) + "\" class=\"label\" text-anchor=\"middle\">" +
         HtmlEscape(rows[i].label) + "</text>";
  }
  s += "<text x=\"" + F(kLeft + w / 2) + "\" y=\"" + std::to_string(height - 6) +
       "\" class=\"axis\" text-anchor=\"middle\">reasoning tokens spent (accuracy in %)</text>";
  const double lx = kLeft + w + 20;
  s += "<rect x=\"" + F(lx) + "\" y=\"" + std::to_string(kTop) + "\" width=\"14\" height=\"14\" fill=\"#4e79a7\"/>"
       "<text x=\"" + F(lx + 20) + "\" y=\"" + std::to_string(kTop + 12) + "\" class=\"label\">thinking on</text>";
  s += "<rect x=\"" + F(lx) + "\" y=\"" + std::to_string(kTop + 22) + "\" width=\"14\" height=\"14\" fill=\"#f28e2b\"/>"
       "<text x=\"" + F(lx + 20) + "\" y=\"" + std::to_string(kTop + 34) + "\" class=\"label\">thinking off</text>";
  return s + "</svg>";
}

// ---- compare: what changed between the runs ----

std::string SwitchPhrase(const std::string& verdict, bool past) {
  if (verdict == "reaches") return past ? "reached the template" : "reaches the template";
  if (verdict == "no_switch")
    return past ? "met a template without a thinking switch" : "meets a template without a thinking switch";
  if (verdict == "dropped") return past ? "was dropped on the way" : "is dropped on the way";
  return past ? "could not be checked" : "cannot be checked";
}

std::string SwitchChange(const json& a, const json& b) {
  if (!a.is_object() || !b.is_object()) {
    if (a.is_object() == b.is_object()) return "";
    return std::string("the switch was checked in ") + (a.is_object() ? "A" : "B") + " only";
  }
  const std::string va = JsonText(a["verdict"]), vb = JsonText(b["verdict"]);
  if (va == vb) return "";
  return "the switch " + SwitchPhrase(va, true) + " in A and " + SwitchPhrase(vb, false) + " in B";
}

std::string OffChange(const json& a, const json& b) {
  if (!a.is_string() || !b.is_string() || a == b) return "";
  return "thinking off was " + a.get<std::string>() + " in A and is " + b.get<std::string>() + " in B";
}

// The rows of the "arm @ benchmark" group of the headline metric.
const json& ArmBenchmarkRows(const json& part_doc) {
  static const json kNone = json::array();
  const json& metrics = JsonAt(part_doc, {"metrics"});
  if (!metrics.is_array() || metrics.empty()) return kNone;
  for (const auto& g : JsonAt(metrics[0], {"groups"}))
    if (JsonText(g["dimension"]) == "arm @ benchmark") return g["rows"];
  return kNone;
}

json CompareRow(const json& r, const json& part_a, const json& part_b) {
  const std::string name = JsonText(r["name"]);
  const size_t at = name.find(" @ ");
  const std::string arm = at == std::string::npos ? name : name.substr(0, at);
  const std::string bench = at == std::string::npos ? "" : name.substr(at + 3);
  json row = {{"benchmark", bench}, {"arm", arm}};
  for (const char* k : {"n", "score_a", "score_b", "delta", "ci_low", "ci_high", "a_better", "b_better", "p_value"})
    row[k] = r.value(k, json());
  const std::vector<const char*> tok = {"benchmarks", bench.c_str(), arm.c_str(), "reasoning_tokens"};
  const std::vector<const char*> cut = {"benchmarks", bench.c_str(), arm.c_str(), "cut_off"};
  row["reasoning_a"] = JsonAt(part_a, tok);
  row["reasoning_b"] = JsonAt(part_b, tok);
  row["cut_off_a"] = JsonAt(part_a, cut);
  row["cut_off_b"] = JsonAt(part_b, cut);
  return row;
}

json OnVsOff(const json& part_a, const json& part_b) {
  std::vector<std::string> names;
  for (const json* p : {&part_a, &part_b}) {
    const json& b = JsonAt(*p, {"benchmarks"});
    if (!b.is_object()) continue;
    for (auto it = b.begin(); it != b.end(); ++it)
      if (std::find(names.begin(), names.end(), it.key()) == names.end()) names.push_back(it.key());
  }
  json out = json::array();
  for (const auto& n : names)
    out.push_back({{"benchmark", n},
                   {"a", JsonAt(part_a, {"benchmarks", n.c_str(), "paired"})},
                   {"b", JsonAt(part_b, {"benchmarks", n.c_str(), "paired"})}});
  return out;
}

json SwitchOf(const json& part) {
  const json& s = JsonAt(part, {"switch"});
  if (!s.is_object()) return nullptr;
  return {{"verdict", s.value("verdict", json())}, {"text", s.value("text", json())}};
}

Table CompareTable(const json& t) {
  Table tab{"thinking: accuracy A vs B by benchmark and arm",
            {"benchmark", "arm", "n", "A %", "B %", "Δ pp", "A✓ B✗", "A✗ B✓", "McNemar p",
             "reasoning A", "reasoning B", "cut A", "cut B"},
            {},
            "Paired on the items both runs answered (ids <arm>/<benchmark>/<question>); McNemar's exact two-sided p "
            "on the items only one run got right. Reasoning: the reasoning tokens per answer, median / p90 / max; "
            "cut: answers cut off inside the reasoning / in the answer."};
  for (const auto& r : t["rows"])
    tab.rows.push_back({JsonText(r["benchmark"]), JsonText(r["arm"]), Num(r["n"]), Pct(r["score_a"]),
                        Pct(r["score_b"]), Pp(r["delta"]), Num(r["a_better"]), Num(r["b_better"]),
                        PValue(r["p_value"]), Tokens(r["reasoning_a"]), Tokens(r["reasoning_b"]),
                        Cuts(r["cut_off_a"]), Cuts(r["cut_off_b"])});
  return tab;
}

Table OnVsOffTable(const json& t) {
  Table tab{"thinking: on − off within each run",
            {"benchmark", "A: on − off (pp)", "A: McNemar p", "B: on − off (pp)", "B: McNemar p"},
            {},
            ""};
  for (const auto& r : t["on_vs_off"])
    tab.rows.push_back({JsonText(r["benchmark"]), Pp(JsonAt(r, {"a", "difference"})),
                        PValue(JsonAt(r, {"a", "mcnemar_p"})), Pp(JsonAt(r, {"b", "difference"})),
                        PValue(JsonAt(r, {"b", "mcnemar_p"}))});
  return tab;
}

// The lines above the compare tables: what changed, then each run's verdicts.
std::vector<std::string> CompareLines(const json& t) {
  auto verdict = [](const json& s) { return s.is_object() ? JsonText(s["text"]) : std::string("not checked"); };
  auto text = [](const json& v) { return v.is_null() ? std::string("—") : JsonText(v); };
  return {"switch check: A: " + verdict(t["switch_a"]) + " · B: " + verdict(t["switch_b"]),
          "thinking off: A: " + text(t["off_switch_a"]) + " · B: " + text(t["off_switch_b"]),
          "reasoning budget: A: " + text(t["budget_a"]) + " · B: " + text(t["budget_b"]) + " tokens"};
}

std::vector<std::string> Changes(const json& t) {
  std::vector<std::string> v;
  for (const char* k : {"switch_changed", "off_switch_changed"})
    if (!JsonText(t.value(k, json())).empty()) v.push_back(JsonText(t[k]));
  return v;
}

}  // namespace

std::string ThinkingReportMarkdown(const json& part) {
  if (!part.is_object()) return "";
  std::string o = "## Thinking: on vs off, and the switch\n\n";
  for (const auto& s : {SwitchSentence(part), OffSentence(part), BudgetSentence(part)})
    o += MarkdownCell(s, kLine) + "\n\n";
  o += MarkdownTable(AccuracyTable(part));
  o += MarkdownTable(ReasoningTable(part));
  const std::vector<BucketRow> buckets = BucketRows(part);
  if (!buckets.empty()) o += MarkdownTable(BucketTable(buckets));
  return o;
}

std::string ThinkingReportHtml(const json& part) {
  if (!part.is_object()) return "";
  std::string h = "<section id=\"thinking\"><h2>Thinking: on vs off, and the switch</h2>";
  h += "<p><b>" + HtmlEscape(SwitchSentence(part)) + "</b></p>";
  h += "<p>" + HtmlEscape(OffSentence(part)) + "</p><p>" + HtmlEscape(BudgetSentence(part)) + "</p>";
  h += HtmlTable(AccuracyTable(part));
  h += HtmlTable(ReasoningTable(part));
  const std::vector<BucketRow> buckets = BucketRows(part);
  if (!buckets.empty()) {
    Table t = BucketTable(buckets);
    h += "<h3>" + HtmlEscape(t.title) + "</h3>" + BucketChart(buckets);
    t.title.clear();  // drawn above the chart
    h += HtmlTable(t);
  }
  return h + "</section>\n";
}

json ThinkingComparison(const json& part_a, const json& part_b, const json& part_doc) {
  json t;
  t["switch_a"] = SwitchOf(part_a);
  t["switch_b"] = SwitchOf(part_b);
  t["switch_changed"] = SwitchChange(t["switch_a"], t["switch_b"]);
  t["off_switch_a"] = JsonAt(part_a, {"off_switch"});
  t["off_switch_b"] = JsonAt(part_b, {"off_switch"});
  t["off_switch_changed"] = OffChange(t["off_switch_a"], t["off_switch_b"]);
  t["budget_a"] = JsonAt(part_a, {"budget"});
  t["budget_b"] = JsonAt(part_b, {"budget"});
  json rows = json::array();
  for (const auto& r : ArmBenchmarkRows(part_doc)) rows.push_back(CompareRow(r, part_a, part_b));
  t["rows"] = rows;
  t["on_vs_off"] = OnVsOff(part_a, part_b);
  return t;
}

void AddThinkingComparison(const std::string& part, const json& results_a, const json& results_b, json* part_doc,
                           json* notes) {
  if (part != "thinking" || !part_doc->is_object()) return;
  const json t = ThinkingComparison(JsonAt(results_a, {"parts", "thinking"}), JsonAt(results_b, {"parts", "thinking"}),
                                    *part_doc);
  const std::vector<std::string> changes = Changes(t);
  for (size_t i = changes.size(); i-- > 0;) notes->insert(notes->begin(), "thinking: " + changes[i]);
  (*part_doc)["thinking"] = t;
}

// The changes of the thinking part of `cmp`, if it was compared.
std::vector<std::string> ComparedChanges(const json& cmp) {
  const json& parts = JsonAt(cmp, {"parts"});
  if (!parts.is_array()) return {};
  for (const auto& p : parts)
    if (JsonText(JsonAt(p, {"part"})) == "thinking" && JsonAt(p, {"thinking"}).is_object())
      return Changes(p["thinking"]);
  return {};
}

std::string ThinkingChangesMarkdown(const json& cmp) {
  std::string o;
  for (const auto& c : ComparedChanges(cmp)) o += "**Thinking: " + MarkdownCell(c, kLine) + ".**\n\n";
  return o;
}

std::string ThinkingChangesHtml(const json& cmp) {
  const std::vector<std::string> changes = ComparedChanges(cmp);
  if (changes.empty()) return "";
  std::string h = "<section id=\"thinking-changed\"><h2>Thinking: what changed</h2>";
  for (const auto& c : changes) h += "<div class=\"banner bad\">" + HtmlEscape(c) + ".</div>";
  return h + "</section>\n";
}

std::string ThinkingCompareMarkdown(const json& t) {
  if (!t.is_object()) return "";
  std::string o;
  for (const auto& c : Changes(t)) o += "**Changed: " + MarkdownCell(c, kLine) + ".**\n\n";
  for (const auto& l : CompareLines(t)) o += "- " + MarkdownCell(l, kLine) + "\n";
  o += "\n" + MarkdownTable(CompareTable(t)) + MarkdownTable(OnVsOffTable(t));
  return o;
}

std::string ThinkingCompareHtml(const json& t) {
  if (!t.is_object()) return "";
  std::string h;
  for (const auto& c : Changes(t)) h += "<div class=\"banner bad\">Changed: " + HtmlEscape(c) + ".</div>";
  h += "<ul class=\"plain\">";
  for (const auto& l : CompareLines(t)) h += "<li>" + HtmlEscape(l) + "</li>";
  h += "</ul>" + HtmlTable(CompareTable(t)) + HtmlTable(OnVsOffTable(t));
  return h;
}

// The page: the part's results.json object as it is, with the results.
PageSection ThinkingPageSection() {
  PageSection s;
  s.part = "thinking";
  s.place = PagePlace::kWithTheResults;
  s.replaces_row = false;  // it has a score of its own in the results table
  s.model = [](const nlohmann::json& results) { return JsonAt(results, {"parts", "thinking"}); };
  s.markdown = ThinkingReportMarkdown;
  s.html = ThinkingReportHtml;
  return s;
}

CompareSection ThinkingCompareSection() {
  CompareSection s;
  s.part = "thinking";
  s.add = [](const nlohmann::json& a, const nlohmann::json& b, nlohmann::json* doc, nlohmann::json* notes) {
    AddThinkingComparison("thinking", a, b, doc, notes);
  };
  s.part_markdown = ThinkingCompareMarkdown;
  s.part_html = ThinkingCompareHtml;
  s.doc_markdown = ThinkingChangesMarkdown;
  s.doc_html = ThinkingChangesHtml;
  return s;
}

}  // namespace evalrun
