#include "evals/publish/report_model.h"
#include "evals/publish/speed_section.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/run_folder.h"
#include "evals/publish/table_text.h"
#include "evals/run/part_registry.h"
#include "evals/run/sample_record.h"

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
  const ChoiceVerdict* choice = std::get_if<ChoiceVerdict>(&s.verdict);
  o["no_answer"] = choice && choice->no_answer;
  o["prompt_tokens"] = Nullable(s.prompt_tokens);
  o["completion_tokens"] = Nullable(s.completion_tokens);
  o["latency_ms"] = s.latency_ms ? json(*s.latency_ms) : json();
  json extra = json::array();
  const double score = HeadlineScore(s.verdict);
  if (const auto* v = std::get_if<InstructionVerdict>(&s.verdict)) {
    o["category"] = Join(v->instruction_ids, ", ");
    for (size_t i = 0; i < v->instruction_ids.size(); ++i)
      extra.push_back({v->instruction_ids[i], v->strict.per_instruction[i] ? "followed (strict)" : "not followed (strict)"});
    if (v->loose) extra.push_back({"loose: all followed", v->loose->all ? "yes" : "no"});
    bool cut_p = false;
    o["prompt"] = Utf8Prefix(s.Text("prompt"), static_cast<size_t>(max_chars), &cut_p);
    o["gold"] = "";
    o["extracted"] = "";
  } else {
    const PartDefinition* def = part.definition;
    const std::vector<std::string> label =
        def && !def->label.empty() ? def->label : std::vector<std::string>{"category"};
    std::string cat;
    for (const auto& f : label) cat += (cat.empty() ? "" : " @ ") + s.Text(f);
    o["category"] = s.Text(label[0]).empty() ? s.category : cat;
    o["gold"] = s.Text("gold");
    o["extracted"] = choice && choice->extracted ? std::string(1, *choice->extracted) : "";
    if (const auto* code = std::get_if<CodeVerdict>(&s.verdict)) {
      extra.push_back({"verdict (" + code->profile + ")", code->passed ? "passed" : code->failure});
      if (!code->message.empty()) extra.push_back({"first failure", code->message});
      if (code->other)
        extra.push_back({"verdict (" + code->other->profile + ")", code->other->passed ? "passed" : code->other->failure});
    } else if (!choice) {
      extra.push_back({"score", FormatDouble("%.3f", score)});
    }
  }
  o["verdict"] = Verdict(score);
  o["extra"] = extra;
  return o;
}

// ---- The model ----

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

// What the model holds for one part, filled by the section of its kind.
struct PartSections {
  json row;                    // its line in the summary table
  json categories = json::array();  // bar charts: {part, title, dimension, rows}
  json instruction;            // IFEval-like accuracies, or null
  json by_length;              // RULER-like scores by length, or null
  json probe;                  // a logprob probe's distribution facts, or null
};

// Logprob verdicts (the probe): the share of positions whose top token has
// p > 0.5, the top-1 logprob's distribution (results.json), a histogram of
// the top-1 probability, and the positions (at most kProbeRowsShown).
constexpr size_t kProbeRowsShown = 200;
void ProbeSection(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
                  PartSections* out) {
  out->row["metric"] = "top-1 p > 0.5 (share of positions)";
  out->row["score"] = OptJson(Num(p, {"score"}));
  out->row["stderr"] = json();
  int bins[10] = {0};
  json rows = json::array();
  for (const auto& s : records) {
    const auto& v = std::get<LogprobsVerdict>(s.verdict);
    if (v.top.empty()) continue;
    const double prob = std::exp(v.top[0].logprob);
    ++bins[std::min(9, static_cast<int>(prob * 10))];
    if (rows.size() < kProbeRowsShown)
      rows.push_back({{"position", s.Int("position", -1)}, {"token", v.top[0].token}, {"logprob", v.top[0].logprob},
                      {"p", prob}, {"excerpt", s.Text("excerpt")}, {"next_word", s.Text("next_word")}});
  }
  json hist = json::array();
  const double n = static_cast<double>(records.size());
  for (int b = 0; b < 10; ++b)
    hist.push_back({{"name", FormatDouble("%.1f", b / 10.0) + "–" + FormatDouble("%.1f", (b + 1) / 10.0)},
                    {"n", bins[b]}, {"score", n > 0 ? 100.0 * bins[b] / n : 0.0}});
  out->probe = {{"part", part.name},
                {"title", part.display_name},
                {"positions", records.size()},
                {"confident_pct", OptJson(Num(p, {"score"}))},
                {"top1_logprob", JsonAt(p, {"top1_logprob"})},
                {"prompt_tokens_mean", JsonAt(p, {"prompt_tokens_mean"})},
                {"top_logprobs", JsonAt(p, {"info", "top_logprobs"})},
                {"text", JsonAt(p, {"info", "text", "file"})},
                {"histogram", hist},
                {"rows", rows},
                {"rows_cut", records.size() > rows.size()}};
}

// Instruction verdicts: the four accuracies (results.json, fractions 0..1)
// and instruction-level strict accuracy per instruction id (the records;
// results.json's `instructions` without them).
void InstructionSection(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
                        PartSections* out) {
  std::optional<double> n = Num(p, {"n"});
  out->row["metric"] = "prompt-level strict";
  std::optional<double> ps = Num(p, {"prompt_strict"});
  out->row["score"] = ps ? json(*ps * 100) : json();
  out->row["stderr"] = ps && n && *n > 0 ? json(100 * std::sqrt(*ps * (1 - *ps) / *n)) : json();
  json acc = {{"title", part.display_name}};
  for (const char* k : {"prompt_strict", "inst_strict", "prompt_loose", "inst_loose"}) {
    std::optional<double> v = Num(p, {k});
    acc[k] = v ? json(*v * 100) : json();
  }
  out->instruction = acc;
  std::map<std::string, std::pair<int, int>> per;  // n, followed
  for (const auto& s : records) {
    const InstructionVerdict& v = std::get<InstructionVerdict>(s.verdict);
    for (size_t i = 0; i < v.instruction_ids.size(); ++i) {
      auto& c = per[v.instruction_ids[i]];
      ++c.first;
      c.second += v.strict.per_instruction[i];
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
    out->categories.push_back({{"part", part.name},
                               {"title", part.display_name + ": instruction-level strict accuracy by instruction"},
                               {"dimension", "instruction"},
                               {"rows", rows}});
}

// Fraction verdicts: the mean score as results.json has it (0..100), the
// standard error of the records' scores, and `lengths` when it has them.
void FractionSection(const FolderPart& part, const json& p, const std::vector<SampleRecord>& records,
                     PartSections* out) {
  out->row["metric"] = "mean score";
  out->row["score"] = OptJson(Num(p, {"score"}));  // 0..100
  std::vector<double> scores;
  for (const auto& s : records) scores.push_back(std::get<FractionVerdict>(s.verdict).score);
  out->row["stderr"] =
      scores.size() >= 2 ? json(100 * Sd(scores) / std::sqrt(static_cast<double>(scores.size()))) : json();
  const json& L = JsonAt(p, {"lengths"});
  if (!L.is_object()) return;
  std::vector<std::string> lengths, tasks;
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
  out->by_length = {{"title", part.display_name}, {"lengths", lens}, {"tasks", tasks}};
}

// Choice verdicts: accuracy and its stderr (results.json, fractions 0..1),
// and a bar chart of the categories.
void ChoiceSection(const FolderPart& part, const json& p, PartSections* out) {
  out->row["metric"] = "accuracy";
  std::optional<double> sc = Num(p, {"score"});
  out->row["score"] = sc ? json(*sc * 100) : json();
  std::optional<double> se = Num(p, {"stderr"});
  out->row["stderr"] = se ? json(*se * 100) : json();
  const json& cats = JsonAt(p, {"categories"});
  if (!cats.is_object() || cats.empty()) return;
  json rows = json::array();
  for (auto it = cats.begin(); it != cats.end(); ++it) {
    std::optional<double> cs = Num(*it, {"score"});
    rows.push_back({{"name", it.key()}, {"n", OptJson(Num(*it, {"n"}))}, {"correct", OptJson(Num(*it, {"correct"}))},
                    {"score", cs ? json(*cs * 100) : json()}});
  }
  out->categories.push_back({{"part", part.name},
                             {"title", part.display_name + ": accuracy by category"},
                             {"dimension", "category"},
                             {"rows", rows}});
}

// Code verdicts (LiveCodeBench): pass@1 and its stderr (results.json,
// fractions 0..1), bar charts by difficulty, platform and contest month.
void CodeSection(const FolderPart& part, const json& p, PartSections* out) {
  out->row["metric"] = "pass@1 (" + JsonText(JsonAt(p, {"profile"})) + ")";
  std::optional<double> sc = Num(p, {"score"}), se = Num(p, {"stderr"});
  out->row["score"] = sc ? json(*sc * 100) : json();
  out->row["stderr"] = se ? json(*se * 100) : json();
  for (const auto& [key, dim] : {std::pair<const char*, const char*>{"by_difficulty", "difficulty"},
                                 {"by_platform", "platform"}, {"by_month", "contest month"}}) {
    const json& groups = JsonAt(p, {key});
    if (!groups.is_object() || groups.empty()) continue;
    json rows = json::array();
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      std::optional<double> ps = Num(*it, {"pass_at_1"});
      rows.push_back({{"name", it.key()}, {"n", OptJson(Num(*it, {"n"}))}, {"correct", OptJson(Num(*it, {"passed"}))},
                      {"score", ps ? json(*ps * 100) : json()}});
    }
    out->categories.push_back({{"part", part.name},
                               {"title", part.display_name + ": pass@1 by " + dim},
                               {"dimension", dim},
                               {"rows", rows}});
  }
}

// The part's records for the browser (none when its kind is unknown or its
// samples.jsonl is missing: then a note says so).
Status PartRecords(const RunFolder& run, const FolderPart& part, std::vector<SampleRecord>* records, json* notes) {
  const std::string spath = SamplesPath(run, part.name);
  if (!part.kind) {
    if (part.definition) return Status::Ok();  // a part without samples (fit)
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

json SummaryRow(const std::string& part, const json& p) {
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
  return row;
}


// The title and subtitle: job, card, finish time, evalrun version.
// A part's `repeat` (evalrun run --repeat 2), in percent and points.
json RepeatRow(const std::string& part, const json& rep) {
  json row;
  row["part"] = part;
  row["pairs"] = OptJson(Num(rep, {"pairs"}));
  row["flips"] = OptJson(Num(rep, {"flips"}));
  std::optional<double> rate = Num(rep, {"flip_rate"}), mde = Num(rep, {"mde"}), below = Num(rep, {"mde_below"});
  row["flip_rate"] = rate ? json(*rate * 100) : json();
  row["mde"] = mde ? json(*mde * 100) : json();
  row["mde_below"] = below ? json(*below * 100) : json();
  row["text"] = JsonText(rep.value("text", json()));
  row["formula"] = JsonText(rep.value("formula", json()));
  // A probe's repeats: flips are top-token changes, the floor a KLD.
  row["kld_mean"] = OptJson(Num(rep, {"kld", "mean"}));
  row["kld_max"] = OptJson(Num(rep, {"kld", "max"}));
  return row;
}

void AddTitle(const RunFolder& run, json* model) {
  json& m = *model;
  const json& res = run.results;
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

}

// Every part: its summary row, its sections by verdict kind, its records
// for the browser; notes for what is missing or incomplete.
Status AddParts(const RunFolder& run, int max_text_chars, json* model, json* notes) {
  json& m = *model;
  const json& res = run.results;
  json summary = json::array();
  json categories = json::array();
  json samples = json::array();
  json sample_parts = json::array();
  json repeats = json::array();
  m["instruction"] = nullptr;
  m["by_length"] = nullptr;
  m["probe"] = nullptr;

  for (const auto& name : run.parts) {
    if (name == "speed") continue;  // no score: its own section (speed_section.h)
    const json& p = res["parts"][name];
    FolderPart part;
    EVALRUN_RETURN_IF_ERROR(DescribeFolderPart(run, name, &part));
    std::vector<SampleRecord> records;
    EVALRUN_RETURN_IF_ERROR(PartRecords(run, part, &records, notes));
    if (!records.empty()) sample_parts.push_back(name);
    for (const auto& r : records) samples.push_back(BrowserSample(part, r, max_text_chars));

    PartSections sec;
    sec.row = SummaryRow(name, p);
    if (part.kind == VerdictKind::kInstruction) {
      InstructionSection(part, p, records, &sec);
    } else if (part.kind == VerdictKind::kFraction) {
      FractionSection(part, p, records, &sec);
    } else if (part.kind == VerdictKind::kChoice) {
      ChoiceSection(part, p, &sec);
    } else if (part.kind == VerdictKind::kLogprobs) {
      ProbeSection(part, p, records, &sec);
    } else if (part.kind == VerdictKind::kCode) {
      CodeSection(part, p, &sec);
    } else {
      // A part without verdicts, or one this report does not know: its
      // score as results.json has it.
      sec.row["metric"] = "score (as recorded)";
      sec.row["score"] = OptJson(Num(p, {"score"}));
      sec.row["stderr"] = json();
    }
    if (!sec.instruction.is_null()) m["instruction"] = sec.instruction;
    if (!sec.by_length.is_null()) m["by_length"] = sec.by_length;
    if (!sec.probe.is_null()) m["probe"] = sec.probe;
    for (auto& c : sec.categories) categories.push_back(std::move(c));
    json& row = sec.row;
  const json& complete = JsonAt(p, {"complete"});
    std::optional<double> planned = Num(p, {"planned"});
    if (complete.is_boolean() && !complete.get<bool>())
      notes->push_back(name + ": incomplete: " + JsonText(row["n"]) + " of " +
                      (planned ? FormatDouble("%.0f", *planned) : "?") +
                      " planned answered (resume the job to finish it)");
    summary.push_back(std::move(row));
    if (const json& rep = JsonAt(p, {"repeat"}); rep.is_object()) repeats.push_back(RepeatRow(name, rep));
  }
  m["summary"] = summary;
  m["repeats"] = repeats.empty() ? json() : repeats;
  std::string formula;  // the accuracy parts' (a probe's repeat has none)
  for (const auto& r : repeats)
    if (formula.empty()) formula = JsonText(r["formula"]);
  m["repeat_formula"] = formula;
  m["categories"] = categories;

  m["samples"] = samples;
  m["sample_parts"] = sample_parts;
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
  return setup;

}

// The busy-process summary, or null when the run recorded none.
json NoiseModel(const json& res) {
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
  m["noise"] = NoiseModel(run.results);
  m["thinking"] = JsonAt(run.results, {"parts", "thinking"});  // the thinking part's view (thinking_view.h)
  m["speed"] = SpeedSectionModel(run.results);  // evals/publish/speed_section.h
  m["notes"] = notes;
  m["max_text_chars"] = max_text_chars;
  *model = std::move(m);
  return Status::Ok();
}

}  // namespace evalrun
