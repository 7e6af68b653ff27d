#include "evals/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "evals/exit_codes.h"
#include "evals/json_fields.h"
#include "evals/jsonl.h"
#include "evals/near_miss.h"

namespace evalrun {
namespace fs = std::filesystem;

namespace {

constexpr const char* kCompareSchema = "evalrun.compare/1";
constexpr const char* kResultsSchemaTag = "evalrun.results/1";  // == results.h kResultsSchema

double Round6(double x) { return std::round(x * 1e6) / 1e6; }

// ---- Units: what gets paired ----

struct Unit {
  std::string key;                  // pairs A with B (the id, or id + position)
  std::string id;                   // the question id, as shown
  std::string label;                // shown beside flips: category, task @ length, ...
  std::vector<std::string> groups;  // one value per dimension of the metric
  double score = 0;                 // 0/1, or a fraction in [0, 1]
  std::string prompt_sha256;        // headline units only
};

struct Metric {
  std::string name;                 // "accuracy", "prompt_strict", ...
  std::string title;                // for people
  std::vector<std::string> dims;    // group dimensions ("category", ...)
  std::vector<Unit> units;
};

struct PartUnits {
  std::string kind;                 // "choice", "ifeval", "fraction"
  std::vector<Metric> metrics;      // metrics[0] is the headline
  int duplicates = 0;
};

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// Where a sample is, for messages: "runs/a/mmlupro/samples.jsonl: sample 12 (id \"q7\")".
std::string Where(const std::string& path, size_t index, const nlohmann::json& s) {
  return path + ": sample " + std::to_string(index + 1) + " (id \"" + SampleId(s) + "\")";
}

std::string GuessKind(const std::string& part, const std::vector<nlohmann::json>& samples) {
  if (part == "mmlupro" || part == "gpqa") return "choice";
  if (part == "ifeval") return "ifeval";
  if (part == "ruler") return "fraction";
  for (const auto& s : samples) {
    if (s.contains("strict") && s["strict"].is_object()) return "ifeval";
    if (s.contains("correct") && s["correct"].is_boolean()) return "choice";
    if (s.contains("score") && s["score"].is_number()) return "fraction";
  }
  return "";
}

Status ChoiceUnits(const std::string& path, const std::vector<nlohmann::json>& samples, PartUnits* out) {
  Metric m{"accuracy", "accuracy", {"category"}, {}};
  // GPQA's samples also carry a subdomain.
  bool subdomain = !samples.empty();
  for (const auto& s : samples) subdomain = subdomain && s.contains("subdomain") && s["subdomain"].is_string();
  if (subdomain) m.dims.push_back("subdomain");
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    auto it = s.find("correct");
    if (it == s.end() || !it->is_boolean())
      return Status::InvalidInput(Where(path, i, s) + ": correct: expected true or false");
    Unit u;
    u.id = u.key = SampleId(s);
    u.label = ScalarText(s.value("category", nlohmann::json()));
    u.groups = {u.label};
    if (subdomain) u.groups.push_back(s["subdomain"].get<std::string>());
    u.score = it->get<bool>() ? 1.0 : 0.0;
    u.prompt_sha256 = s.value("prompt_sha256", std::string());
    m.units.push_back(std::move(u));
  }
  out->metrics.push_back(std::move(m));
  return Status::Ok();
}

Status IfevalUnits(const std::string& path, const std::vector<nlohmann::json>& samples, PartUnits* out) {
  // Strict is required; loose metrics appear when every sample has them.
  bool all_loose = !samples.empty();
  for (const auto& s : samples) all_loose = all_loose && s.contains("loose") && s["loose"].is_object();
  Metric ps{"prompt_strict", "prompt-level strict", {}, {}};
  Metric is{"inst_strict", "instruction-level strict", {"instruction"}, {}};
  Metric pl{"prompt_loose", "prompt-level loose", {}, {}};
  Metric il{"inst_loose", "instruction-level loose", {}, {}};
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    const std::string where = Where(path, i, s);
    auto ids_it = s.find("instruction_id_list");
    if (ids_it == s.end() || !ids_it->is_array())
      return Status::InvalidInput(where + ": instruction_id_list: expected an array of strings");
    std::vector<std::string> ids;
    for (const auto& x : *ids_it) {
      if (!x.is_string())
        return Status::InvalidInput(where + ": instruction_id_list: expected an array of strings");
      ids.push_back(x.get<std::string>());
    }
    const std::string id = SampleId(s);
    const std::string label = Join(ids, ", ");
    auto verdict = [&](const char* mode, Metric* prompt, Metric* inst) -> Status {
      auto v = s.find(mode);
      if (v == s.end() || !v->is_object())
        return Status::InvalidInput(where + ": " + mode + ": expected an object");
      auto all = v->find("follow_all_instructions");
      if (all == v->end() || !all->is_boolean())
        return Status::InvalidInput(where + ": " + mode + ".follow_all_instructions: expected true or false");
      auto list = v->find("follow_instruction_list");
      if (list == v->end() || !list->is_array() || list->size() != ids.size())
        return Status::InvalidInput(where + ": " + mode + ".follow_instruction_list: expected " +
                                    std::to_string(ids.size()) + " booleans (one per instruction_id_list entry)");
      Unit u;
      u.id = u.key = id;
      u.label = label;
      u.score = all->get<bool>() ? 1.0 : 0.0;
      u.prompt_sha256 = s.value("prompt_sha256", std::string());
      prompt->units.push_back(std::move(u));
      for (size_t j = 0; j < ids.size(); ++j) {
        const auto& f = (*list)[j];
        if (!f.is_boolean())
          return Status::InvalidInput(where + ": " + mode + ".follow_instruction_list[" + std::to_string(j) +
                                      "]: expected true or false");
        Unit iu;
        iu.key = id + "#" + std::to_string(j) + "#" + ids[j];
        iu.id = id;
        iu.label = ids[j];
        if (!inst->dims.empty()) iu.groups = {ids[j]};
        iu.score = f.get<bool>() ? 1.0 : 0.0;
        inst->units.push_back(std::move(iu));
      }
      return Status::Ok();
    };
    EVALRUN_RETURN_IF_ERROR(verdict("strict", &ps, &is));
    if (all_loose) EVALRUN_RETURN_IF_ERROR(verdict("loose", &pl, &il));
  }
  out->metrics.push_back(std::move(ps));
  out->metrics.push_back(std::move(is));
  if (all_loose) {
    out->metrics.push_back(std::move(pl));
    out->metrics.push_back(std::move(il));
  }
  return Status::Ok();
}

Status FractionUnits(const std::string& path, const std::vector<nlohmann::json>& samples, PartUnits* out) {
  bool task_length = !samples.empty();
  for (const auto& s : samples) task_length = task_length && s.contains("task") && s.contains("length");
  Metric m{"score", "mean score", {}, {}};
  if (task_length) m.dims = {"length", "task @ length"};
  else m.dims = {"category"};
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    auto it = s.find("score");
    if (it == s.end() || !it->is_number() || it->get<double>() < 0 || it->get<double>() > 1)
      return Status::InvalidInput(Where(path, i, s) + ": score: expected a number in [0, 1]");
    Unit u;
    u.id = SampleId(s);
    if (task_length) {
      const std::string task = ScalarText(s["task"]), length = ScalarText(s["length"]);
      u.key = task + "@" + length + "/" + u.id;
      u.label = task + " @ " + length;
      u.groups = {length, u.label};
    } else {
      u.key = u.id;
      u.label = ScalarText(s.value("category", nlohmann::json()));
      u.groups = {u.label};
    }
    u.score = it->get<double>();
    u.prompt_sha256 = s.value("prompt_sha256", std::string());
    m.units.push_back(std::move(u));
  }
  out->metrics.push_back(std::move(m));
  return Status::Ok();
}

Status ExtractUnits(const std::string& kind, const std::string& path,
                    const std::vector<nlohmann::json>& samples, PartUnits* out) {
  out->kind = kind;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].is_object())
      return Status::InvalidInput(path + ": sample " + std::to_string(i + 1) + ": expected a JSON object");
    if (SampleId(samples[i]).empty())
      return Status::InvalidInput(path + ": sample " + std::to_string(i + 1) + ": id: expected a string");
  }
  if (kind == "choice") return ChoiceUnits(path, samples, out);
  if (kind == "ifeval") return IfevalUnits(path, samples, out);
  return FractionUnits(path, samples, out);
}

// ---- Pairing and statistics ----

// Compares names with digit runs as numbers ("8192" < "16384", "q2" < "q10").
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

struct Pair {
  const Unit* a;
  const Unit* b;
};

nlohmann::json PairedStats(const std::vector<Pair>& pairs, const CompareOptions& opts) {
  std::vector<double> xa, xb;
  xa.reserve(pairs.size());
  xb.reserve(pairs.size());
  int64_t a_better = 0, b_better = 0, partial = 0;
  double sa = 0, sb = 0;
  for (const auto& p : pairs) {
    double x = p.a->score, y = p.b->score;
    xa.push_back(x);
    xb.push_back(y);
    sa += x;
    sb += y;
    if (x > y) ++a_better;
    if (x < y) ++b_better;
    auto binary = [](double v) { return v == 0.0 || v == 1.0; };
    if (!binary(x) || !binary(y)) ++partial;
  }
  const double n = static_cast<double>(pairs.size());
  const double mean_a = pairs.empty() ? 0 : sa / n, mean_b = pairs.empty() ? 0 : sb / n;
  BootstrapInterval ci = PairedBootstrap(xa, xb, opts.resamples, opts.seed, 0.95);
  nlohmann::json j;
  j["n"] = pairs.size();
  j["score_a"] = Round6(mean_a);
  j["score_b"] = Round6(mean_b);
  j["delta"] = Round6(mean_b - mean_a);
  j["ci_low"] = Round6(ci.low);
  j["ci_high"] = Round6(ci.high);
  j["a_better"] = a_better;
  j["b_better"] = b_better;
  j["partial"] = partial;
  j["p_value"] = McNemarExactP(a_better, b_better);
  return j;
}

std::string Verdict(const nlohmann::json& st, const CompareOptions& opts) {
  const double delta = st["delta"].get<double>();
  const double p = st["p_value"].get<double>();
  if (st["n"].get<int64_t>() == 0) return "nothing paired";
  if (p >= opts.alpha) return "no significant change";
  // (a small tolerance so that --min-delta 15 catches a delta of 0.15)
  if (std::fabs(delta) * 100 + 1e-9 < opts.min_delta) return "significant, below min-delta";
  return delta < 0 ? "regression" : "improvement";
}

struct Paired {
  std::vector<Pair> pairs;   // in A's order
  std::vector<std::string> only_a, only_b;
};

Paired PairUnits(const std::vector<Unit>& a, const std::vector<Unit>& b, int* duplicates) {
  std::unordered_map<std::string, size_t> in_b;
  in_b.reserve(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    auto [it, fresh] = in_b.emplace(b[i].key, i);
    if (!fresh) {
      it->second = i;  // the last line for an id wins (as the runner's re-scoring)
      ++*duplicates;
    }
  }
  std::unordered_map<std::string, size_t> in_a;
  in_a.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    auto [it, fresh] = in_a.emplace(a[i].key, i);
    if (!fresh) {
      it->second = i;
      ++*duplicates;
    }
  }
  Paired out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (in_a[a[i].key] != i) continue;  // an earlier duplicate
    auto it = in_b.find(a[i].key);
    if (it == in_b.end()) out.only_a.push_back(a[i].id);
    else out.pairs.push_back({&a[i], &b[it->second]});
  }
  for (size_t i = 0; i < b.size(); ++i)
    if (in_b[b[i].key] == i && !in_a.count(b[i].key)) out.only_b.push_back(b[i].id);
  return out;
}

nlohmann::json IdSample(const std::vector<std::string>& ids, size_t max) {
  nlohmann::json j = nlohmann::json::array();
  for (size_t i = 0; i < ids.size() && i < max; ++i) j.push_back(ids[i]);
  return j;
}

nlohmann::json CompareMetric(const Metric& ma, const Metric& mb, bool headline, const CompareOptions& opts,
                             int* duplicates, nlohmann::json* flips, int* prompt_changed) {
  Paired p = PairUnits(ma.units, mb.units, duplicates);
  nlohmann::json j;
  j["name"] = ma.name;
  j["title"] = ma.title;
  j["headline"] = headline;
  j["units_a"] = ma.units.size();
  j["units_b"] = mb.units.size();
  j["paired"] = p.pairs.size();
  j["only_in_a"] = p.only_a.size();
  j["only_in_b"] = p.only_b.size();
  j["only_in_a_ids"] = IdSample(p.only_a, 20);
  j["only_in_b_ids"] = IdSample(p.only_b, 20);
  nlohmann::json overall = PairedStats(p.pairs, opts);
  overall["verdict"] = Verdict(overall, opts);
  j["overall"] = overall;
  nlohmann::json groups = nlohmann::json::array();
  for (size_t d = 0; d < ma.dims.size(); ++d) {
    std::map<std::string, std::vector<Pair>> by;
    for (const auto& pr : p.pairs)
      if (d < pr.a->groups.size()) by[pr.a->groups[d]].push_back(pr);
    std::vector<std::string> names;
    for (const auto& [name, v] : by) names.push_back(name);
    std::sort(names.begin(), names.end(), NaturalLess);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& name : names) {
      nlohmann::json r = PairedStats(by[name], opts);
      r["name"] = name;
      rows.push_back(std::move(r));
    }
    groups.push_back({{"dimension", ma.dims[d]}, {"rows", std::move(rows)}});
  }
  j["groups"] = std::move(groups);
  if (headline) {
    *flips = nlohmann::json::array();
    // A better first, then B better; each in A's order.
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& pr : p.pairs) {
        double x = pr.a->score, y = pr.b->score;
        if (pass == 0 ? !(x > y) : !(x < y)) continue;
        flips->push_back({{"id", pr.a->id}, {"label", pr.a->label}, {"a", x}, {"b", y}});
      }
    }
    *prompt_changed = 0;
    for (const auto& pr : p.pairs)
      if (!pr.a->prompt_sha256.empty() && !pr.b->prompt_sha256.empty() &&
          pr.a->prompt_sha256 != pr.b->prompt_sha256)
        ++*prompt_changed;
  }
  return j;
}

// ---- What differs between the runs ----

const nlohmann::json& At(const nlohmann::json& j, std::initializer_list<const char*> path) {
  static const nlohmann::json kNull;
  const nlohmann::json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

std::string Shown(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(not recorded)";
  return v.dump();
}

const nlohmann::json& AtPath(const nlohmann::json& j, const std::vector<const char*>& path) {
  static const nlohmann::json kNull;
  const nlohmann::json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

nlohmann::json SetupValue(const RunFolder& r, bool from_run, const std::vector<const char*>& path) {
  if (path.size() == 1 && std::string(path[0]) == "evalrun") {
    const auto& e = At(r.run, {"evalrun"});
    if (!e.is_object()) return nullptr;
    return ScalarText(e.value("version", nlohmann::json())) + " (" + ScalarText(e.value("git_sha", nlohmann::json())) +
           ")";
  }
  return AtPath(from_run ? r.run : r.results, path);
}

nlohmann::json SetupRows(const RunFolder& a, const RunFolder& b) {
  struct Row {
    const char* field;
    bool from_run;  // run.json, else results.json
    std::vector<const char*> path;
  };
  static const std::vector<Row> rows = {
      {"engine build", true, {"server", "build_info"}},
      {"model file", true, {"server", "model_path"}},
      {"model (card)", false, {"model"}},
      {"engine (card)", false, {"engine"}},
      {"slots", true, {"slots"}},
      {"sampling", false, {"sampling"}},
      {"thinking", false, {"thinking"}},
      {"card sha256", false, {"card", "sha256"}},
      {"card name", false, {"card", "name"}},
      {"context per slot (n_ctx)", true, {"server", "n_ctx"}},
      {"chat template sha256", true, {"server", "chat_template_sha256"}},
      {"hardware (card)", false, {"hardware"}},
      {"host", true, {"host", "hostname"}},
      {"evalrun", true, {"evalrun"}},
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json va = SetupValue(a, r.from_run, r.path), vb = SetupValue(b, r.from_run, r.path);
    out.push_back({{"field", r.field}, {"a", Shown(va)}, {"b", Shown(vb)}, {"differs", va != vb}});
  }
  return out;
}

void DiffInto(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, bool has_a, bool has_b,
              nlohmann::json* out) {
  if (has_a && has_b && a.is_object() && b.is_object()) {
    std::vector<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.push_back(it.key());
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    for (const auto& k : keys) {
      const std::string p = path.empty() ? k : path + "." + k;
      bool in_a = a.contains(k), in_b = b.contains(k);
      DiffInto(in_a ? a[k] : nlohmann::json(), in_b ? b[k] : nlohmann::json(), p, in_a, in_b, out);
    }
    return;
  }
  if (has_a && has_b && a.is_array() && b.is_array()) {
    size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      bool in_a = i < a.size(), in_b = i < b.size();
      DiffInto(in_a ? a[i] : nlohmann::json(), in_b ? b[i] : nlohmann::json(),
               path + "[" + std::to_string(i) + "]", in_a, in_b, out);
    }
    return;
  }
  if (has_a == has_b && a == b) return;
  nlohmann::json d = {{"path", path.empty() ? std::string("(whole card)") : path}};
  if (has_a) d["a"] = a;
  if (has_b) d["b"] = b;
  out->push_back(std::move(d));
}

nlohmann::json RunHeader(const RunFolder& r) {
  return {{"dir", r.dir},
          {"job", At(r.results, {"job"})},
          {"card", At(r.results, {"card", "name"})},
          {"card_sha256", At(r.results, {"card", "sha256"})},
          {"finished_utc", At(r.results, {"finished_utc"})},
          {"has_run_json", !r.run.is_null()}};
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

// ---- Markdown ----

std::string Fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}
std::string Pct(const nlohmann::json& v) { return Fmt("%.2f", v.get<double>() * 100); }
std::string Pp(const nlohmann::json& v) {
  double x = v.get<double>() * 100;
  if (std::fabs(x) < 0.005) x = 0;  // no "-0.00"
  return Fmt("%+.2f", x);
}
std::string Ci(const nlohmann::json& st) {
  return "[" + Pp(st["ci_low"]) + ", " + Pp(st["ci_high"]) + "]";
}

// A table cell: no line breaks, '|' escaped.
std::string Cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '<') o += "&lt;";  // no HTML in a published table
    else if (c == '>') o += "&gt;";
    else if (c == '\n' || c == '\r' || c == '\t') o += ' ';
    else o += c;
  }
  if (o.size() > 160) o = o.substr(0, 157) + "...";
  return o;
}

std::string Code(const std::string& s) { return "`" + Cell(s) + "`"; }

struct Headers {
  std::string a_better, b_better, label;
};

Headers HeadersFor(const nlohmann::json& part) {
  const std::string kind = part["kind"];
  if (kind == "fraction") {
    bool task_length = false;
    for (const auto& m : part["metrics"])
      for (const auto& g : m["groups"]) task_length = task_length || g["dimension"] == "task @ length";
    return {"A > B", "A < B", task_length ? "task @ length" : "category"};
  }
  return {"A✓ B✗", "A✗ B✓", kind == "ifeval" ? "instructions" : "category"};
}

std::string StatsCells(const nlohmann::json& st) {
  return st["n"].dump() + " | " + Pct(st["score_a"]) + " | " + Pct(st["score_b"]) + " | " + Pp(st["delta"]) +
         " | " + Ci(st) + " | " + st["a_better"].dump() + " | " + st["b_better"].dump() + " | " +
         FormatPValue(st["p_value"].get<double>());
}

std::string FlipValue(double v, const std::string& kind) {
  if (kind != "fraction") return v >= 1 ? "✓" : "✗";
  return Fmt("%.2f", v);
}

}  // namespace

std::string ComparisonMarkdown(const nlohmann::json& cmp, int max_flips_shown) {
  std::string o;
  auto line = [&](const std::string& s) { o += s + "\n"; };
  const auto& ra = cmp["a"];
  const auto& rb = cmp["b"];
  const auto& set = cmp["settings"];
  const double alpha = set["alpha"].get<double>();
  line("# evalrun compare: A = " + ScalarText(ra["job"]) + ", B = " + ScalarText(rb["job"]));
  line("");
  line("| run | folder | job | card | finished (UTC) |");
  line("|---|---|---|---|---|");
  for (const auto* r : {&ra, &rb}) {
    std::string sha = ScalarText((*r)["card_sha256"]);
    line(std::string("| ") + (r == &ra ? "A" : "B") + " | " + Code(ScalarText((*r)["dir"])) + " | " +
         Cell(ScalarText((*r)["job"])) + " | " + Cell(ScalarText((*r)["card"])) +
         (sha.empty() ? "" : " (sha256 " + sha.substr(0, 12) + ")") + " | " +
         Cell(ScalarText((*r)["finished_utc"])) + " |");
  }
  line("");

  // Verdict first: what a person (and CI) came for.
  const auto& parts = cmp["parts"];
  std::string min_delta = Fmt("%.2f", set["min_delta_points"].get<double>());
  if (cmp["regressions"].empty()) {
    line("**Verdict: no significant regression** (alpha " + Fmt("%g", alpha) + ", min delta " + min_delta +
         " pp). Exit code " + cmp["exit_code"].dump() + ".");
  } else {
    line("**Verdict: significant regression** (alpha " + Fmt("%g", alpha) + ", min delta " + min_delta +
         " pp). Exit code " + cmp["exit_code"].dump() + ".");
  }
  line("");
  for (const auto& p : parts) {
    const std::string v = p["verdict"];
    if (v != "regression" && v != "improvement") continue;
    const auto& m = p["metrics"][0];
    const auto& st = m["overall"];
    line(std::string("- ") + (v == "regression" ? "**Regression**" : "**Improvement**") + " in " +
         ScalarText(p["part"]) + ": " + ScalarText(m["title"]) + " " + Pct(st["score_a"]) + " % → " +
         Pct(st["score_b"]) + " % (Δ " + Pp(st["delta"]) + " pp, 95 % CI " + Ci(st) + " pp, McNemar p = " +
         FormatPValue(st["p_value"].get<double>()) + ", " + st["a_better"].dump() + " vs " +
         st["b_better"].dump() + " discordant).");
  }
  line("");

  line("## Summary");
  line("");
  line("| part | metric | n | A % | B % | Δ pp | 95 % CI (pp) | A better | B better | McNemar p | verdict |");
  line("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|");
  for (const auto& p : parts) {
    bool first = true;
    for (const auto& m : p["metrics"]) {
      const auto& st = m["overall"];
      std::string verdict = ScalarText(st["verdict"]);
      if (first) {
        if (verdict == "regression" || verdict == "improvement") verdict = "**" + verdict + "**";
      } else {
        verdict = "(" + verdict + ")";
      }
      line("| " + (first ? Cell(ScalarText(p["part"])) : std::string()) + " | " + Cell(ScalarText(m["title"])) +
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

  line("## What differs between the runs");
  line("");
  std::vector<std::string> same, unknown;
  bool any = false;
  for (const auto& r : cmp["setup"]) {
    if (!r["differs"].get<bool>()) {
      (ScalarText(r["a"]) == "(not recorded)" ? unknown : same).push_back(ScalarText(r["field"]));
      continue;
    }
    if (!any) {
      line("| | A | B |");
      line("|---|---|---|");
      any = true;
    }
    line("| " + Cell(ScalarText(r["field"])) + " | " + Code(ScalarText(r["a"])) + " | " + Code(ScalarText(r["b"])) +
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
      line("| " + Code(ScalarText(d["path"])) + " | " + side("a") + " | " + side("b") + " |");
    }
    line("");
  }

  if (!cmp["notes"].empty()) {
    line("## Notes");
    line("");
    for (const auto& n : cmp["notes"]) line("- " + Cell(ScalarText(n)));
    line("");
  }

  for (const auto& p : parts) {
    const std::string part = p["part"], kind = p["kind"];
    const Headers h = HeadersFor(p);
    line("## " + part);
    line("");
    std::string only_a = p["only_in_a"].dump(), only_b = p["only_in_b"].dump();
    const auto& head = p["metrics"][0];
    auto ids = [](const nlohmann::json& v, int64_t total) {
      std::vector<std::string> s;
      for (const auto& x : v) s.push_back(ScalarText(x));
      std::string t = Join(s, ", ");
      if (total > static_cast<int64_t>(s.size())) t += ", ...";
      return t;
    };
    std::string paired = "Paired on " + p["paired"].dump() + " " + (kind == "fraction" ? "samples" : "question ids");
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
    for (const auto& m : p["metrics"]) {
      for (const auto& g : m["groups"]) {
        if (g["rows"].empty()) continue;
        line("### " + ScalarText(m["title"]) + " by " + ScalarText(g["dimension"]));
        line("");
        line("| " + ScalarText(g["dimension"]) + " | n | A % | B % | Δ pp | 95 % CI (pp) | " + h.a_better + " | " +
             h.b_better + " | p |");
        line("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (const auto& r : g["rows"])
          line("| " + Cell(ScalarText(r["name"])) + " | " + StatsCells(r) + " |");
        line("");
      }
    }
    line("### Flipped (" + ScalarText(head["title"]) + ")");
    line("");
    line(p["flipped_a_better"].dump() + " " + h.a_better + ", " + p["flipped_b_better"].dump() + " " + h.b_better +
         ".");
    line("");
    const auto& flips = p["flipped"];
    if (!flips.empty()) {
      line("| id | " + h.label + " | A | B |");
      line("|---|---|:-:|:-:|");
      int shown = 0;
      for (const auto& f : flips) {
        if (shown >= max_flips_shown) break;
        line("| " + Code(ScalarText(f["id"])) + " | " + Cell(ScalarText(f["label"])) + " | " +
             FlipValue(f["a"].get<double>(), kind) + " | " + FlipValue(f["b"].get<double>(), kind) + " |");
        ++shown;
      }
      if (static_cast<int>(flips.size()) > shown) {
        line("");
        line("... and " + std::to_string(flips.size() - shown) + " more (`--json` lists them all).");
      }
      line("");
    }
  }
  return o;
}

std::string SampleId(const nlohmann::json& sample) {
  if (!sample.is_object()) return "";
  auto it = sample.find("id");
  if (it == sample.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return "";
}

nlohmann::json JsonDiff(const nlohmann::json& a, const nlohmann::json& b) {
  nlohmann::json out = nlohmann::json::array();
  DiffInto(a, b, "", true, true, &out);
  return out;
}

Status LoadRunFolder(const std::string& dir_in, RunFolder* out) {
  *out = RunFolder();
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  out->dir = dir;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::NotFound(dir + ": no such folder");
  if (!fs::is_directory(dir, ec)) return Status::InvalidInput(dir + ": not a folder (expected a run folder runs/<job>)");
  const std::string res_path = dir + "/results.json";
  if (!fs::exists(res_path, ec)) {
    const bool started = fs::exists(dir + "/run.json", ec);
    return Status::NotFound(dir + ": not an evalrun run folder: " + res_path + " not found" +
                            (started ? " (run.json is there: results.json is written when the first part finishes)"
                                     : ""));
  }
  std::string text;
  Status st = ReadFileToString(res_path, &text);
  if (!st.ok()) return st;
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, res_path, &out->results));
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(out->results, res_path, ""));
  const auto& schema = At(out->results, {"schema"});
  if (!schema.is_string() || schema.get<std::string>() != kResultsSchemaTag)
    return Status::InvalidInput(res_path + ": schema: expected \"" + kResultsSchemaTag + "\", got " +
                                (schema.is_null() ? std::string("nothing") : DescribeJsonValue(schema)));
  const auto& parts = At(out->results, {"parts"});
  if (!parts.is_object())
    return Status::InvalidInput(res_path + ": parts: expected an object, got " + DescribeJsonValue(parts));
  for (auto it = parts.begin(); it != parts.end(); ++it) {
    if (!it->is_object())
      return Status::InvalidInput(res_path + ": parts." + it.key() + ": expected an object, got " +
                                  DescribeJsonValue(*it));
    out->parts.push_back(it.key());
  }
  // nlohmann::json keeps object keys sorted; order the parts as a run takes
  // them (evals/card.cc KnownPartNames), unknown names after.
  static const std::vector<std::string> kRunOrder = {"mmlupro", "gpqa", "ifeval", "ruler", "fit"};
  std::vector<std::string> ordered;
  for (const auto& n : kRunOrder)
    if (std::find(out->parts.begin(), out->parts.end(), n) != out->parts.end()) ordered.push_back(n);
  for (const auto& n : out->parts)
    if (std::find(ordered.begin(), ordered.end(), n) == ordered.end()) ordered.push_back(n);
  out->parts = ordered;

  const std::string run_path = dir + "/run.json";
  if (fs::exists(run_path, ec)) {
    st = ReadFileToString(run_path, &text);
    if (!st.ok()) return st;
    EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, run_path, &out->run));
    EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(out->run, run_path, ""));
  }
  return Status::Ok();
}

Status ReadSamplesReadOnly(const std::string& path, std::vector<nlohmann::json>* lines, bool* torn_tail) {
  lines->clear();
  *torn_tail = false;
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path + ": not found");
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  // A last line without its newline that does not parse was torn by a crash.
  size_t last_nl = text.rfind('\n');
  size_t tail_start = last_nl == std::string::npos ? 0 : last_nl + 1;
  if (tail_start < text.size()) {
    auto j = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(tail_start), text.end(), nullptr,
                                   false);
    if (j.is_discarded()) {
      *torn_tail = true;
      text.resize(tail_start);
    }
  }
  return ParseJsonl(text, path, [&](int, const nlohmann::json& j) {
    lines->push_back(j);
    return Status::Ok();
  });
}

namespace {

// BuildComparison without the safety net for nlohmann's exceptions.
Status BuildComparisonOrThrow(const CompareOptions& opts, nlohmann::json* out) {
  EVALRUN_RETURN_IF_ERROR(CheckOptions(opts));
  RunFolder a, b;
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(opts.run_a, &a));
  EVALRUN_RETURN_IF_ERROR(LoadRunFolder(opts.run_b, &b));

  nlohmann::json notes = nlohmann::json::array();
  std::vector<std::string> parts;
  if (opts.parts.empty()) {
    for (const auto& p : a.parts) {
      if (std::find(b.parts.begin(), b.parts.end(), p) != b.parts.end()) parts.push_back(p);
      else notes.push_back("part " + p + " is only in A; not compared");
    }
    for (const auto& p : b.parts)
      if (std::find(a.parts.begin(), a.parts.end(), p) == a.parts.end())
        notes.push_back("part " + p + " is only in B; not compared");
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

  nlohmann::json doc;
  doc["schema"] = kCompareSchema;
  doc["a"] = RunHeader(a);
  doc["b"] = RunHeader(b);
  doc["settings"] = {{"alpha", opts.alpha},
                     {"min_delta_points", opts.min_delta},
                     {"bootstrap", {{"resamples", opts.resamples}, {"seed", opts.seed}, {"level", 0.95},
                                    {"rng", "CPython random.Random (PyRandom), _randbelow(n) per draw"}}},
                     {"test", "exact two-sided McNemar (sign test on pairs whose scores differ)"}};
  doc["setup"] = SetupRows(a, b);
  const auto& card_a = At(a.run, {"card"});
  const auto& card_b = At(b.run, {"card"});
  if (card_a.is_object() && card_b.is_object()) {
    doc["card_diff"] = JsonDiff(card_a, card_b);
  } else {
    doc["card_diff"] = nullptr;
    notes.push_back("card fields not compared: run.json (with the card) is missing in " +
                    std::string(card_a.is_object() ? "B" : card_b.is_object() ? "A" : "both runs") +
                    " (a `score` job)");
  }

  nlohmann::json part_docs = nlohmann::json::array();
  nlohmann::json regressions = nlohmann::json::array(), improvements = nlohmann::json::array();
  for (const auto& part : parts) {
    std::vector<nlohmann::json> sa, sb;
    bool torn_a = false, torn_b = false;
    const std::string pa = a.dir + "/" + part + "/samples.jsonl", pb = b.dir + "/" + part + "/samples.jsonl";
    Status st = ReadSamplesReadOnly(pa, &sa, &torn_a);
    if (!st.ok()) return Status::InvalidInput(st.message() + " (part " + part + " is in " + a.dir + "/results.json)");
    st = ReadSamplesReadOnly(pb, &sb, &torn_b);
    if (!st.ok()) return Status::InvalidInput(st.message() + " (part " + part + " is in " + b.dir + "/results.json)");
    if (torn_a) notes.push_back(pa + ": a torn last line (crash mid-write) was skipped");
    if (torn_b) notes.push_back(pb + ": a torn last line (crash mid-write) was skipped");
    std::string kind = GuessKind(part, sa);
    if (kind.empty()) kind = GuessKind(part, sb);
    if (kind.empty()) {
      notes.push_back("part " + part + ": its samples carry no verdict (correct / score / strict); not compared");
      continue;
    }
    PartUnits ua, ub;
    EVALRUN_RETURN_IF_ERROR(ExtractUnits(kind, pa, sa, &ua));
    EVALRUN_RETURN_IF_ERROR(ExtractUnits(kind, pb, sb, &ub));

    nlohmann::json pd;
    pd["part"] = part;
    pd["kind"] = kind;
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
      notes.push_back("part " + part + ": " + std::to_string(duplicates) +
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
    if (verdict == "regression") regressions.push_back(part);
    if (verdict == "improvement") improvements.push_back(part);
    if (head["only_in_a"].get<int64_t>() > 0 || head["only_in_b"].get<int64_t>() > 0)
      notes.push_back("part " + part + ": compared on the " + head["paired"].dump() + " ids both runs answered (" +
                      head["only_in_a"].dump() + " only in A, " + head["only_in_b"].dump() + " only in B)");
    if (prompt_changed > 0)
      notes.push_back("part " + part + ": " + std::to_string(prompt_changed) +
                      " paired questions were asked with different prompts (prompt_sha256 differs)");
    part_docs.push_back(std::move(pd));
  }
  if (part_docs.empty()) return Status::InvalidInput("nothing to compare: no part with verdicts in both runs");
  doc["parts"] = std::move(part_docs);
  doc["regressions"] = regressions;
  doc["improvements"] = improvements;
  doc["notes"] = notes;
  doc["exit_code"] = regressions.empty() ? kExitOk : kExitRegression;
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
  return doc["exit_code"].get<int>();
}

}  // namespace evalrun
