#include "evals/publish/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "evals/base/exit_codes.h"
#include "evals/base/json_fields.h"
#include "evals/run/part_registry.h"
#include "evals/run/run_files.h"
#include "evals/publish/run_folder.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

// ---- Small readers over results.json ----

std::optional<double> Num(const json& j, std::initializer_list<const char*> path) {
  const json& v = JsonAt(j, path);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

json OptJson(std::optional<double> v) { return v ? json(*v) : json(); }

// "name: Qwen3-8B · quant: Q4_K_M" from a descriptive object.
void FlattenInto(const json& v, const std::string& prefix, std::vector<std::string>* out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      FlattenInto(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  std::string s;
  if (v.is_array()) {
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + JsonText(x);
  } else {
    s = JsonText(v);
  }
  out->push_back(prefix.empty() ? s : prefix + ": " + s);
}

std::string Flatten(const json& v) {
  if (v.is_null() || (v.is_object() && v.empty())) return "";
  std::vector<std::string> parts;
  FlattenInto(v, "", &parts);
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : " · ") + p;
  return s;
}

std::string LengthLabel(const std::string& length) {
  char* end = nullptr;
  long long v = std::strtoll(length.c_str(), &end, 10);
  if (end && *end == 0 && v > 0 && v % 1024 == 0) return std::to_string(v / 1024) + "K";
  return length;
}

bool NumericLess(const std::string& a, const std::string& b) {
  char *ea = nullptr, *eb = nullptr;
  double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
  bool na = ea && *ea == 0 && !a.empty(), nb = eb && *eb == 0 && !b.empty();
  if (na && nb && x != y) return x < y;
  if (na != nb) return na;
  return a < b;
}

// ---- Samples for the browser ----

std::string Verdict(double score) { return score >= 1 ? "right" : score <= 0 ? "wrong" : "partial"; }

json BrowserSample(const std::string& part, const json& s, int max_chars) {
  json o;
  o["part"] = part;
  o["id"] = SampleId(s);
  bool cut = false;
  std::string resp = Utf8Prefix(JsonText(s.value("response", json())), static_cast<size_t>(max_chars), &cut);
  o["response"] = resp;
  bool cut_r = false;
  o["reasoning"] = Utf8Prefix(JsonText(s.value("reasoning", json())), static_cast<size_t>(max_chars / 2), &cut_r);
  o["truncated"] = cut || cut_r;
  o["finish"] = JsonText(s.value("finish_reason", json()));
  o["cut_off"] = s.value("cut_off", false);
  o["no_answer"] = s.value("no_answer", false);
  o["prompt_tokens"] = s.value("prompt_tokens", json());
  o["completion_tokens"] = s.value("completion_tokens", json());
  o["latency_ms"] = s.value("latency_ms", json());
  json extra = json::array();
  double score = 0;
  if (s.contains("strict") && s["strict"].is_object()) {  // IFEval
    const json& st = s["strict"];
    score = st.value("follow_all_instructions", false) ? 1 : 0;
    json ids = s.value("instruction_id_list", json::array());
    json follow = st.value("follow_instruction_list", json::array());
    if (!ids.is_array()) ids = json::array();
    if (!follow.is_array()) follow = json::array();
    std::string cat;
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::string id = JsonText(ids[i]);
      cat += (cat.empty() ? "" : ", ") + id;
      bool ok = i < follow.size() && follow[i].is_boolean() && follow[i].get<bool>();
      extra.push_back({id, ok ? "followed (strict)" : "not followed (strict)"});
    }
    o["category"] = cat;
    if (s.contains("loose") && s["loose"].is_object())
      extra.push_back({"loose: all followed", s["loose"].value("follow_all_instructions", false) ? "yes" : "no"});
    bool cut_p = false;
    o["prompt"] = Utf8Prefix(JsonText(s.value("prompt", json())), static_cast<size_t>(max_chars), &cut_p);
    o["gold"] = "";
    o["extracted"] = "";
  } else if (s.contains("score") && s["score"].is_number()) {  // RULER and other fractions
    score = s["score"].get<double>();
    std::string task = JsonText(s.value("task", json())), length = JsonText(s.value("length", json()));
    o["category"] = task.empty() ? JsonText(s.value("category", json())) : task + " @ " + length;
    std::string gold;
    const json& g = s.value("gold", json());
    if (g.is_array()) {
      for (const auto& x : g) gold += (gold.empty() ? "" : " | ") + JsonText(x);
    } else {
      gold = JsonText(g);
    }
    o["gold"] = gold;
    o["extracted"] = "";
    extra.push_back({"score", FormatDouble("%.3f", score)});
  } else {  // multiple choice
    score = s.value("correct", false) ? 1 : 0;
    o["category"] = JsonText(s.value("category", json()));
    o["gold"] = JsonText(s.value("gold", json()));
    o["extracted"] = JsonText(s.value("extracted", json()));
  }
  o["verdict"] = Verdict(score);
  o["extra"] = extra;
  return o;
}

// ---- The model ----

struct Built {
  json model;
  std::string markdown;
};

// The sample standard deviation (n - 1).
double Sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

Status BuildModel(const ReportOptions& opts, json* model_out) {
  RunFolder run;
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(opts.run_dir, &run));
  const json& res = run.results;
  json m;
  const std::string job = JsonText(JsonAt(res, {"job"}));
  m["job"] = job;
  m["title"] = "evalrun report: " + job;
  std::vector<std::string> sub;
  if (!JsonText(JsonAt(res, {"card", "name"})).empty())
    sub.push_back("card " + JsonText(JsonAt(res, {"card", "name"})));
  if (!JsonText(JsonAt(res, {"finished_utc"})).empty())
    sub.push_back("finished " + JsonText(JsonAt(res, {"finished_utc"})));
  if (JsonAt(run.run, {"evalrun"}).is_object())
    sub.push_back("evalrun " + JsonText(JsonAt(run.run, {"evalrun", "version"})) + " (" +
                  JsonText(JsonAt(run.run, {"evalrun", "git_sha"})) + ")");
  std::string subtitle;
  for (const auto& s : sub) subtitle += (subtitle.empty() ? "" : " · ") + s;
  m["subtitle"] = subtitle;

  json notes = json::array();
  json summary = json::array();
  json categories = json::array();
  json samples = json::array();
  json sample_parts = json::array();
  m["ifeval"] = nullptr;
  m["ruler"] = nullptr;

  for (const auto& part : run.parts) {
    const json& p = res["parts"][part];
    std::vector<json> lines;
    bool torn = false;
    const std::string spath = SamplesPath(run, part);
    Status st = ReadSamplesReadOnly(spath, &lines, &torn);
    if (st.code() == Status::Code::kNotFound) {
      notes.push_back(part + ": " + spath + " not found; reported from results.json alone, no samples shown");
    } else if (!st.ok()) {
      return st;
    }
    if (torn) notes.push_back(TornTailNote(spath));
    if (!lines.empty()) sample_parts.push_back(part);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!lines[i].is_object())
        return Status::InvalidInput(spath + ": sample " + std::to_string(i + 1) + ": expected a JSON object");
      samples.push_back(BrowserSample(part, lines[i], opts.max_text_chars));
    }

    json row;
    row["part"] = part;
    row["n"] = OptJson(Num(p, {"n"}));
    row["cut_off"] = OptJson(Num(p, {"cut_off"}));
    row["no_answer"] = OptJson(Num(p, {"no_answer"}));
    row["failed"] = OptJson(Num(p, {"failed"}));
    row["prompt_tps"] = OptJson(Num(p, {"speeds", "prompt_tokens_per_s"}));
    row["decode_tps"] = OptJson(Num(p, {"speeds", "decode_tokens_per_s"}));
    row["prompt_tokens"] = OptJson(Num(p, {"speeds", "prompt_tokens"}));
    row["completion_tokens"] = OptJson(Num(p, {"speeds", "completion_tokens"}));
    std::optional<double> n = Num(p, {"n"});

    if (part == "ifeval" || p.contains("prompt_strict")) {
      // Fractions 0..1 (docs/results-schema.md).
      row["metric"] = "prompt-level strict";
      std::optional<double> ps = Num(p, {"prompt_strict"});
      row["score"] = ps ? json(*ps * 100) : json();
      row["stderr"] = ps && n && *n > 0 ? json(100 * std::sqrt(*ps * (1 - *ps) / *n)) : json();
      json ife;
      for (const char* k : {"prompt_strict", "inst_strict", "prompt_loose", "inst_loose"}) {
        std::optional<double> v = Num(p, {k});
        ife[k] = v ? json(*v * 100) : json();
      }
      m["ifeval"] = ife;
      // Per instruction id, strict, from the samples.
      std::map<std::string, std::pair<int, int>> per;  // n, followed
      for (const auto& s : lines) {
        const json& ids = JsonAt(s, {"instruction_id_list"});
        const json& follow = JsonAt(s, {"strict", "follow_instruction_list"});
        if (!ids.is_array()) continue;
        for (size_t i = 0; i < ids.size(); ++i) {
          auto& c = per[JsonText(ids[i])];
          ++c.first;
          c.second += follow.is_array() && i < follow.size() && follow[i].is_boolean() && follow[i].get<bool>();
        }
      }
      if (per.empty() && p.contains("instructions") && p["instructions"].is_object()) {
        for (auto it = p["instructions"].begin(); it != p["instructions"].end(); ++it) {
          std::optional<double> in = Num(*it, {"n"}), strict = Num(*it, {"strict"});
          if (in && strict) per[it.key()] = {static_cast<int>(*in), static_cast<int>(std::lround(*strict * *in))};
        }
      }
      json rows = json::array();
      for (const auto& [name, c] : per)
        rows.push_back({{"name", name}, {"n", c.first}, {"correct", c.second},
                        {"score", c.first ? 100.0 * c.second / c.first : 0.0}});
      if (!rows.empty())
        categories.push_back({{"part", part}, {"title", "IFEval: instruction-level strict accuracy by instruction"},
                              {"dimension", "instruction"}, {"rows", rows}});
    } else if (part == "ruler" || p.contains("lengths")) {
      row["metric"] = "mean score";
      row["score"] = OptJson(Num(p, {"score"}));  // 0..100
      std::vector<double> scores;
      for (const auto& s : lines)
        if (s.contains("score") && s["score"].is_number()) scores.push_back(s["score"].get<double>());
      row["stderr"] = scores.size() >= 2 ? json(100 * Sd(scores) / std::sqrt(static_cast<double>(scores.size())))
                                         : json();
      json ruler;
      std::vector<std::string> lengths, tasks;
      const json& L = JsonAt(p, {"lengths"});
      if (L.is_object())
        for (auto it = L.begin(); it != L.end(); ++it) lengths.push_back(it.key());
      std::sort(lengths.begin(), lengths.end(), NumericLess);
      json lens = json::array();
      for (const auto& len : lengths) {
        const json& lj = L[len];
        json tj = json::object();
        const json& T = JsonAt(lj, {"tasks"});
        if (T.is_object()) {
          for (auto it = T.begin(); it != T.end(); ++it) {
            tj[it.key()] = OptJson(Num(*it, {"score"}));
            if (std::find(tasks.begin(), tasks.end(), it.key()) == tasks.end()) tasks.push_back(it.key());
          }
        }
        lens.push_back({{"length", len}, {"label", LengthLabel(len)}, {"score", OptJson(Num(lj, {"score"}))},
                        {"tasks", tj}});
      }
      ruler["lengths"] = lens;
      ruler["tasks"] = tasks;
      m["ruler"] = ruler;
    } else if (part != "mmlupro" && part != "gpqa" && !p.contains("correct")) {
      // A part this report does not know: its score as results.json has it.
      row["metric"] = "score (as recorded)";
      row["score"] = OptJson(Num(p, {"score"}));
      row["stderr"] = json();
    } else {
      row["metric"] = "accuracy";
      std::optional<double> sc = Num(p, {"score"});
      row["score"] = sc ? json(*sc * 100) : json();
      std::optional<double> se = Num(p, {"stderr"});
      row["stderr"] = se ? json(*se * 100) : json();
      const json& cats = JsonAt(p, {"categories"});
      if (cats.is_object() && !cats.empty()) {
        std::vector<std::string> names;
        for (auto it = cats.begin(); it != cats.end(); ++it) names.push_back(it.key());
        json rows = json::array();
        for (const auto& name : names) {
          const json& c = cats[name];
          std::optional<double> cs = Num(c, {"score"});
          rows.push_back({{"name", name}, {"n", OptJson(Num(c, {"n"}))}, {"correct", OptJson(Num(c, {"correct"}))},
                          {"score", cs ? json(*cs * 100) : json()}});
        }
        categories.push_back({{"part", part},
                              {"title", PartDisplayName(part) + ": accuracy by category"},
                              {"dimension", "category"},
                              {"rows", rows}});
      }
    }
    const json& complete = JsonAt(p, {"complete"});
    std::optional<double> planned = Num(p, {"planned"});
    if (complete.is_boolean() && !complete.get<bool>())
      notes.push_back(part + ": incomplete: " + JsonText(row["n"]) + " of " +
                      (planned ? FormatDouble("%.0f", *planned) : "?") +
                      " planned answered (resume the job to finish it)");
    summary.push_back(std::move(row));
  }
  m["summary"] = summary;
  m["categories"] = categories;

  // The setup.
  json setup = json::array();
  auto add = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) setup.push_back({k, v});
  };
  add("model", Flatten(JsonAt(res, {"model"})));
  add("model file", JsonText(JsonAt(run.run, {"server", "model_path"})));
  add("engine", Flatten(JsonAt(res, {"engine"})));
  add("engine build", JsonText(JsonAt(run.run, {"server", "build_info"})));
  add("hardware", Flatten(JsonAt(res, {"hardware"})));
  const json& gpu = JsonAt(res, {"noise", "gpu"});
  if (gpu.is_object()) {
    std::string g = JsonText(gpu.value("name", json()));
    if (gpu.contains("mem_total_mib") && gpu["mem_total_mib"].is_number())
      g += " (" + FormatDouble("%.0f", gpu["mem_total_mib"].get<double>()) + " MiB)";
    add("GPU seen", g);
  }
  const json& host = JsonAt(run.run, {"host"});
  if (host.is_object()) {
    std::string h = JsonText(host.value("hostname", json()));
    if (host.contains("kernel")) h += " · " + JsonText(host["kernel"]);
    if (host.contains("cpus")) h += " · " + JsonText(host["cpus"]) + " CPUs";
    add("host", h);
  }
  add("slots", JsonText(JsonAt(run.run, {"slots"})));
  add("context per slot", JsonText(JsonAt(run.run, {"server", "n_ctx"})));
  const json& sampling = JsonAt(res, {"sampling"});
  if (sampling.is_object()) {
    std::string s;
    for (const char* k : {"temperature", "top_k", "top_p", "seed"})
      if (sampling.contains(k)) s += (s.empty() ? "" : " · ") + std::string(k) + " " + JsonText(sampling[k]);
    add("sampling", s);
  }
  const json& thinking = JsonAt(res, {"thinking"});
  if (thinking.is_boolean()) add("thinking", thinking.get<bool>() ? "on" : "off");
  std::string card = JsonText(JsonAt(res, {"card", "name"}));
  if (!JsonText(JsonAt(res, {"card", "path"})).empty()) card += " (" + JsonText(JsonAt(res, {"card", "path"})) + ")";
  if (!JsonText(JsonAt(res, {"card", "sha256"})).empty())
    card += " · sha256 " + JsonText(JsonAt(res, {"card", "sha256"}));
  add("card", card);
  add("started", JsonText(JsonAt(run.run, {"started_utc"})));
  add("finished", JsonText(JsonAt(res, {"finished_utc"})));
  m["setup"] = setup;

  // Noise.
  const json& noise = JsonAt(res, {"noise"});
  if (noise.is_object()) {
    json nz;
    nz["text"] = JsonText(noise.value("text", json()));
    json details = json::array();
    if (nz["text"].get<std::string>().empty() && noise.contains("samples") &&
        noise.contains("samples_above_threshold"))
      details.push_back(JsonText(noise["samples_above_threshold"]) + " of " + JsonText(noise["samples"]) +
                        " load samples above " + JsonText(noise.value("threshold_pct", json())) + " % foreign CPU");
    if (noise.contains("max_foreign_cpu_pct") && noise["max_foreign_cpu_pct"].is_number()) {
      std::string d = "busiest foreign process: " + JsonText(noise["max_foreign_cpu_pct"]) + " % CPU";
      const json& mf = noise.value("max_foreign", json());
      if (mf.is_object())
        d += " (" + JsonText(mf.value("comm", json())) + ", pid " + JsonText(mf.value("pid", json())) + ")";
      details.push_back(d);
    }
    if (noise.contains("warnings") && noise["warnings"].is_array())
      for (const auto& w : noise["warnings"]) details.push_back("warning: " + JsonText(w));
    nz["details"] = details;
    m["noise"] = nz;
  } else {
    m["noise"] = nullptr;
  }
  m["notes"] = notes;
  m["samples"] = samples;
  m["sample_parts"] = sample_parts;
  m["max_text_chars"] = opts.max_text_chars;
  *model_out = std::move(m);
  return Status::Ok();
}

// ---- Markdown ----

std::string NumCell(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

std::string RenderMarkdown(const json& m) {
  std::string o;
  auto line = [&](const std::string& s) { o += s + "\n"; };
  line("# " + JsonText(m["title"]));
  line("");
  if (!JsonText(m["subtitle"]).empty()) {
    line(MarkdownCell(JsonText(m["subtitle"])));
    line("");
  }
  line("## Results");
  line("");
  line("| part | metric | score (%) | ± stderr | n | cut-off | no answer | failed | prompt tok/s | decode tok/s |");
  line("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
  for (const auto& r : m["summary"]) {
    line("| " + MarkdownCell(JsonText(r["part"])) + " | " + JsonText(r["metric"]) + " | " +
         NumCell(r["score"], "%.2f") + " | " +
         (r["stderr"].is_number() ? "± " + FormatDouble("%.2f", r["stderr"].get<double>()) : "—") + " | " +
         NumCell(r["n"], "%.0f") + " | " + NumCell(r["cut_off"], "%.0f") + " | " + NumCell(r["no_answer"], "%.0f") +
         " | " + NumCell(r["failed"], "%.0f") + " | " + NumCell(r["prompt_tps"], "%.1f") + " | " +
         NumCell(r["decode_tps"], "%.1f") + " |");
  }
  line("");
  line("Scores in percent. ± stderr: the binomial standard error sqrt(p (1 - p) / n) for accuracies; for RULER, "
       "the standard error of the mean per-sample score. cut-off: answers that hit max_tokens; no answer: no "
       "choice could be read; failed: requests that failed after retries. Speeds: the server's own timings, "
       "token-weighted over the part.");
  line("");
  if (m["ifeval"].is_object()) {
    const json& f = m["ifeval"];
    line("### IFEval");
    line("");
    line("| level | strict (%) | loose (%) |");
    line("|---|--:|--:|");
    line("| prompt | " + NumCell(f["prompt_strict"], "%.2f") + " | " + NumCell(f["prompt_loose"], "%.2f") + " |");
    line("| instruction | " + NumCell(f["inst_strict"], "%.2f") + " | " + NumCell(f["inst_loose"], "%.2f") + " |");
    line("");
  }
  if (m["ruler"].is_object()) {
    const json& r = m["ruler"];
    line("### RULER by length");
    line("");
    std::string head = "| length | mean |", sep = "|---|--:|";
    for (const auto& t : r["tasks"]) {
      head += " " + MarkdownCell(JsonText(t)) + " |";
      sep += "--:|";
    }
    line(head);
    line(sep);
    for (const auto& l : r["lengths"]) {
      std::string row = "| " + MarkdownCell(JsonText(l["length"])) + " | " + NumCell(l["score"], "%.2f") + " |";
      for (const auto& t : r["tasks"]) {
        const json& v = l["tasks"].contains(JsonText(t)) ? l["tasks"][JsonText(t)] : json();
        row += " " + NumCell(v, "%.2f") + " |";
      }
      line(row);
    }
    line("");
  }
  for (const auto& c : m["categories"]) {
    line("### " + MarkdownCell(JsonText(c["title"])));
    line("");
    line("| " + JsonText(c["dimension"]) + " | n | correct | score (%) |");
    line("|---|--:|--:|--:|");
    for (const auto& r : c["rows"])
      line("| " + MarkdownCell(JsonText(r["name"])) + " | " + NumCell(r["n"], "%.0f") + " | " +
           NumCell(r["correct"], "%.0f") + " | " + NumCell(r["score"], "%.2f") + " |");
    line("");
  }
  line("## Setup");
  line("");
  line("| | |");
  line("|---|---|");
  for (const auto& kv : m["setup"])
    line("| " + MarkdownCell(JsonText(kv[0])) + " | " + MarkdownCell(JsonText(kv[1])) + " |");
  line("");
  line("## Noise");
  line("");
  if (m["noise"].is_object()) {
    if (!JsonText(m["noise"]["text"]).empty()) line(MarkdownCell(JsonText(m["noise"]["text"])));
    line("");
    for (const auto& d : m["noise"]["details"]) line("- " + MarkdownCell(JsonText(d)));
  } else {
    line("No busy-process summary was recorded for this run.");
  }
  line("");
  o += MarkdownNotes(m["notes"]);
  return o;
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string JsonForScriptBlock(const json& j) {
  const std::string raw = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string o;
  o.reserve(raw.size() + raw.size() / 16);
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    // '<', '>' and '&' can only occur inside JSON strings, where \u escapes
    // mean the same characters.
    if (c == '<') o += "\\u003c";
    else if (c == '>') o += "\\u003e";
    else if (c == '&') o += "\\u0026";
    else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < raw.size() &&
             static_cast<unsigned char>(raw[i + 1]) == 0x80 &&
             (static_cast<unsigned char>(raw[i + 2]) == 0xA8 || static_cast<unsigned char>(raw[i + 2]) == 0xA9)) {
      o += static_cast<unsigned char>(raw[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      o += c;
    }
  }
  return o;
}

std::string Utf8Prefix(std::string_view s, size_t max_bytes, bool* cut) {
  if (s.size() <= max_bytes) {
    *cut = false;
    return std::string(s);
  }
  *cut = true;
  size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to a sequence start.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end));
}

Status BuildReport(const ReportOptions& opts, std::string* markdown, std::string* html) {
  if (opts.run_dir.empty()) return Status::InvalidInput("report: a run folder is needed");
  if (opts.max_text_chars < 0) return Status::InvalidInput("--max-text: expected a number >= 0");
  try {
    json model;
    EVALRUN_RETURN_IF_ERROR(BuildModel(opts, &model));
    *markdown = RenderMarkdown(model);
    *html = report_internal::RenderHtml(model);
  } catch (const json::exception& e) {
    // A field of an unexpected type that the readers above did not guard.
    return Status::Internal(opts.run_dir + ": unexpected JSON while building the report: " + e.what());
  }
  return Status::Ok();
}

int ReportRun(const ReportOptions& opts, FILE* out, FILE* err) {
  std::string md, html;
  Status st = BuildReport(opts, &md, &html);
  if (!st.ok()) {
    std::fprintf(err, "evalrun report: %s\n", st.message().c_str());
    return kExitBadInput;
  }
  const std::string dir = TrimRunDir(opts.run_dir);
  for (const auto& [name, text] : {std::pair<std::string, const std::string*>{"report.md", &md},
                                   std::pair<std::string, const std::string*>{"report.html", &html}}) {
    const std::string path = dir + "/" + name;
    st = WriteFileAtomically(path, *text);
    if (!st.ok()) {
      std::fprintf(err, "evalrun report: %s\n", st.message().c_str());
      return kExitBadInput;
    }
    std::fprintf(out, "wrote %s\n", path.c_str());
  }
  return kExitOk;
}

}  // namespace evalrun
