#include "evals/publish/report_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "evals/base/json_fields.h"
#include "evals/publish/failed_requests.h"
#include "evals/publish/page_section.h"
#include "evals/publish/html_text.h"
#include "evals/publish/kind_view.h"
#include "evals/publish/results_model.h"
#include "evals/publish/run_folder.h"
#include "evals/publish/setup_command.h"
#include "evals/publish/table_text.h"
#include "evals/run/part_registry.h"
#include "evals/run/request_settings.h"
#include "evals/run/sample_record.h"

namespace evalrun {
namespace {

using nlohmann::json;

// ---- Small readers over results.json ----

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

// ---- Samples for the browser ----

std::string Verdict(double score) { return score >= 1 ? "right" : score <= 0 ? "wrong" : "partial"; }

json Nullable(int v) { return v >= 0 ? json(v) : json(); }

json BrowserSample(const FolderPart& part, const SampleRecord& s, int max_chars) {
  json o;
  o["part"] = part.name;
  o["id"] = s.id;
  bool cut = false;
  o["response"] = Utf8Prefix(s.response, static_cast<size_t>(max_chars), &cut);
  bool cut_r = false;
  o["reasoning"] = Utf8Prefix(s.reasoning, static_cast<size_t>(max_chars / 2), &cut_r);
  o["truncated"] = cut || cut_r;
  o["finish"] = s.finish_reason;
  o["cut_off"] = IsCutOff(s.verdict);
  o["no_answer"] = false;  // the choice kind's view says when
  o["prompt_tokens"] = Nullable(s.prompt_tokens);
  o["completion_tokens"] = Nullable(s.completion_tokens);
  o["latency_ms"] = s.latency_ms ? json(*s.latency_ms) : json();
  // What the kind's view shows: category, gold, extracted, extra.
  if (const KindView* view = FindKindView(KindOf(s.verdict))) view->Browse(part, s, max_chars, &o);
  else BrowseByLabel(part, s, &o);
  o["verdict"] = Verdict(HeadlineScore(s.verdict));
  return o;
}

// ---- The model ----

// The part's records for the browser (none when its kind is unknown or its
// samples.jsonl is missing: then a note says so).
Status PartRecords(const RunFolder& run, const FolderPart& part, std::vector<SampleRecord>* records, json* notes) {
  const std::string spath = SamplesPath(run, part.name);
  if (!part.kind) {
    if (part.definition) return Status::Ok();  // a part without samples (a procedure)
    notes->push_back(part.name + ": a part this evalrun does not know, without a recorded kind; reported from "
                     "results.json alone, no samples shown");
    return Status::Ok();
  }
  bool torn = false;
  Status st = ReadRecordsReadOnly(spath, *part.kind, records, &torn);
  if (st.code() == Status::Code::kNotFound) {
    notes->push_back(part.name + ": " + spath + " not found; reported from results.json alone, no samples shown");
    return Status::Ok();
  }
  EVALRUN_RETURN_IF_ERROR(st);
  if (torn) notes->push_back(TornTailNote(spath));
  return Status::Ok();
}

json SummaryRow(const std::string& part, const PartResults& p) {
  json row;
  row["part"] = part;
  row["n"] = OptJson(p.n);
  row["cut_off"] = OptJson(p.cut_off);
  row["no_answer"] = OptJson(p.no_answer);
  row["failed"] = OptJson(p.failed);
  row["raw_fallback"] = OptJson(p.raw_fallback);
  row["server_parse_error"] = OptJson(p.server_parse_error);
  row["prompt_tps"] = OptJson(p.speeds.prompt_tps);
  row["decode_tps"] = OptJson(p.speeds.decode_tps);
  row["prompt_tokens"] = OptJson(p.speeds.prompt_tokens);
  row["completion_tokens"] = OptJson(p.speeds.completion_tokens);
  return row;
}

// A part's `repeat` (evalrun run --repeat 2), in percent and points.
json RepeatRow(const std::string& part, const PartRepeat& rep) {
  json row;
  row["part"] = part;
  row["pairs"] = OptJson(rep.pairs);
  row["flips"] = OptJson(rep.flips);
  row["flip_rate"] = OptJson(Percent(rep.flip_rate));
  row["mde"] = OptJson(Percent(rep.mde));
  row["mde_below"] = OptJson(Percent(rep.mde_below));
  row["text"] = rep.text;
  row["formula"] = rep.formula;
  // A repeat of distributions (the logprobs kind's): the KLD between them.
  row["kld_mean"] = OptJson(rep.kld_mean);
  row["kld_max"] = OptJson(rep.kld_max);
  return row;
}

// The title and subtitle: job, card, finish time, evalrun version.
void AddTitle(const RunFolder& run, json* model) {
  json& m = *model;
  const RunTitle t = ReadRunTitle(run.results);
  m["job"] = t.job;
  m["title"] = "evalrun report: " + t.job;
  std::vector<std::string> sub;
  if (!t.card_name.empty()) sub.push_back("card " + t.card_name);
  if (!t.finished_utc.empty()) sub.push_back("finished " + t.finished_utc);
  if (JsonAt(run.run, {"evalrun"}).is_object())
    sub.push_back("evalrun " + JsonText(JsonAt(run.run, {"evalrun", "version"})) + " (" +
                  JsonText(JsonAt(run.run, {"evalrun", "git_sha"})) + ")");
  std::string subtitle;
  for (const auto& s : sub) subtitle += (subtitle.empty() ? "" : " · ") + s;
  m["subtitle"] = subtitle;
}

// One part's sections: its kind's view (kind_view.h); a part without
// verdicts, or of a kind without one: its score as results.json has it.
ReportSection PartReport(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records) {
  ReportSection sec;
  sec.score = ResultNumber(p, {"score"});
  if (part.kind)
    if (const KindView* view = FindKindView(*part.kind)) {
      sec.score.reset();
      view->Report(part, p, records, &sec);
    }
  return sec;
}

// What AddParts gathers over the parts.
struct PartsModel {
  json summary = json::array(), categories = json::array(), tables = json::array(), fragments = json::array();
  json with_the_results = json::array();  // ReportSection::results_markdown and results_html
  json under_the_table = json::array();   // ReportSection::under_table_markdown and _html
  std::string repeat_clauses;             // KindView::RepeatClause of the kinds with a repeat
  json stderr_notes = json::array();      // [{parts, meaning}]: KindView::StderrMeaning
  json samples = json::array(), sample_parts = json::array(), repeats = json::array();
  json failures = json::array();  // failed_requests.h, per part that has any
};

void AddSections(const std::string& name, const PartResults& p, ReportSection sec, json* model, PartsModel* pm,
                 json* notes) {
  json row = SummaryRow(name, p);
  row["metric"] = sec.metric;
  row["score"] = OptJson(sec.score);
  row["stderr"] = OptJson(sec.stderr_pct);
  if (!sec.by_length.is_null()) (*model)["by_length"] = sec.by_length;
  for (auto& c : sec.categories) pm->categories.push_back(std::move(c));
  for (const auto& t : sec.tables) {
    json tj = t.ToJson();
    tj["part"] = name;
    pm->tables.push_back(std::move(tj));
  }
  if (!sec.markdown.empty() || !sec.html.empty())
    pm->fragments.push_back({{"part", name}, {"markdown", sec.markdown}, {"html", sec.html}});
  if (!sec.under_table_markdown.empty() || !sec.under_table_html.empty())
    pm->under_the_table.push_back(
        {{"part", name}, {"markdown", sec.under_table_markdown}, {"html", sec.under_table_html}});
  if (!sec.results_markdown.empty() || !sec.results_html.empty())
    pm->with_the_results.push_back(
        {{"part", name}, {"markdown", sec.results_markdown}, {"html", sec.results_html}});
  if (p.complete && !*p.complete)
    notes->push_back(name + ": incomplete: " + (p.n ? FormatDouble("%.0f", *p.n) : "?") + " of " +
                     (p.planned ? FormatDouble("%.0f", *p.planned) : "?") +
                     " planned answered (resume the job to finish it)");
  pm->summary.push_back(std::move(row));
  if (p.repeat) pm->repeats.push_back(RepeatRow(name, *p.repeat));
}

// The clause `part`'s kind adds to the repeat section's sentence
// (KindView::RepeatClause), once for all the parts of a kind.
void AddRepeatClause(const FolderPart& part, std::string* clauses) {
  const KindView* view = part.kind ? FindKindView(*part.kind) : nullptr;
  const std::string c = view ? view->RepeatClause() : "";
  if (!c.empty() && clauses->find(c) == std::string::npos) *clauses += c;
}

// `part`'s display name under its kind's StderrMeaning, if it has one.
void AddStderrNote(const FolderPart& part, json* notes) {
  const KindView* view = part.kind ? FindKindView(*part.kind) : nullptr;
  const std::string meaning = view ? view->StderrMeaning() : "";
  if (meaning.empty()) return;
  for (auto& n : *notes)
    if (n["meaning"] == meaning) {
      n["parts"] = JsonText(n["parts"]) + ", " + part.display_name;
      return;
    }
  notes->push_back({{"parts", part.display_name}, {"meaning", meaning}});
}

// Every part: its summary row, its sections (its kind's, its own), its
// records for the browser; notes for what is missing or incomplete.
Status AddParts(const RunFolder& run, int max_text_chars, json* model, json* notes) {
  json& m = *model;
  m["by_length"] = nullptr;
  PartsModel pm;
  for (const auto& name : run.parts) {
    if (PageSectionReplacesRow(name)) continue;  // no score: its own page section (page_section.h)
    const json& p = run.results["parts"][name];
    FolderPart part;
    EVALRUN_RETURN_IF_ERROR(DescribeFolderPart(run, name, &part));
    std::vector<SampleRecord> records;
    EVALRUN_RETURN_IF_ERROR(PartRecords(run, part, &records, notes));
    if (!records.empty()) pm.sample_parts.push_back(name);
    std::set<std::string> answered;
    for (const auto& r : records) answered.insert(r.id);
    if (json f = FailedRequestsModel(run.dir, name, answered); !f.is_null()) pm.failures.push_back(std::move(f));
    std::vector<json> shown;
    for (const auto& r : records) shown.push_back(BrowserSample(part, r, max_text_chars));
    // By id, its numbers by value ("niah_single_1/4096/0" before
    // "niah_single_1/32768/0"), not as text.
    std::stable_sort(shown.begin(), shown.end(), [](const json& a, const json& b) {
      return NaturalLess(JsonText(a["id"]), JsonText(b["id"]));
    });
    for (auto& o : shown) pm.samples.push_back(std::move(o));
    const PartResults results = ReadPartResults(p);
    if (results.repeat) AddRepeatClause(part, &pm.repeat_clauses);
    AddStderrNote(part, &pm.stderr_notes);
    AddSections(name, results, PartReport(part, p, records), &m, &pm, notes);
  }
  m["summary"] = pm.summary;
  m["repeats"] = pm.repeats.empty() ? json() : pm.repeats;
  std::string formula;  // the accuracy parts' (a repeat measured otherwise has none)
  for (const auto& r : pm.repeats)
    if (formula.empty()) formula = JsonText(r["formula"]);
  m["repeat_formula"] = formula;
  m["repeat_clauses"] = pm.repeat_clauses;
  m["stderr_notes"] = pm.stderr_notes;
  m["categories"] = pm.categories;
  m["tables"] = pm.tables;
  m["fragments"] = pm.fragments;
  m["with_the_results"] = pm.with_the_results;
  m["under_the_table"] = pm.under_the_table;
  m["samples"] = pm.samples;
  m["sample_parts"] = pm.sample_parts;
  m["failures"] = pm.failures;
  return Status::Ok();
}

// What the run ran on: model, engine, hardware, host, slots, sampling, card.
json SetupRows(const RunFolder& run) {
  const json& res = run.results;
  json setup = json::array();
  auto add = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) setup.push_back({k, v});
  };
  add("model", Flatten(JsonAt(res, {"model"})));
  add("model file", JsonText(JsonAt(run.run, {"server", "model_path"})));
  add("engine", Flatten(JsonAt(res, {"engine"})));
  add("engine build", JsonText(JsonAt(run.run, {"server", "build_info"})));
  add("hardware", Flatten(JsonAt(res, {"hardware"})));
  const json& gpu = JsonAt(LoadSummaryOf(res), {"gpu"});
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
  const json& thinking = JsonAt(res, {kThinkingKey});
  if (thinking.is_boolean()) add(kThinkingKey, thinking.get<bool>() ? "on" : "off");
  std::string card = JsonText(JsonAt(res, {"card", "name"}));
  if (!JsonText(JsonAt(res, {"card", "path"})).empty()) card += " (" + JsonText(JsonAt(res, {"card", "path"})) + ")";
  if (!JsonText(JsonAt(res, {"card", "sha256"})).empty())
    card += " · sha256 " + JsonText(JsonAt(res, {"card", "sha256"}));
  add("card", card);
  add("started", JsonText(JsonAt(run.run, {"started_utc"})));
  add("finished", JsonText(JsonAt(res, {"finished_utc"})));
  return setup;

}

// The busy-process summary, or null when the run recorded none.
json LoadModel(const json& res) {
  const json& noise = LoadSummaryOf(res);
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
    return nz;
  }
  return nullptr;
}

}  // namespace

Status BuildReportModel(const std::string& run_dir, int max_text_chars, json* model) {
  RunFolder run;
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(run_dir, &run));
  json m;
  AddTitle(run, &m);
  json notes = json::array();
  EVALRUN_RETURN_IF_ERROR(AddParts(run, max_text_chars, &m, &notes));
  m["setup"] = SetupRows(run);
  if (const SetupCommand c = SetupCommandOf(run.run); !c.line.empty())  // evals/publish/setup_command.h
    m["setup_command"] = {{"line", c.line}, {"source", c.source}};
  m["load"] = LoadModel(run.results);
  m["page_sections"] = PageSectionModels(run.results);  // evals/publish/page_section.h
  m["notes"] = notes;
  m["max_text_chars"] = max_text_chars;
  *model = std::move(m);
  return Status::Ok();
}

}  // namespace evalrun
