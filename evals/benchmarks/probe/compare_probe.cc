#include "evals/benchmarks/probe/compare_probe.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "evals/base/json_fields.h"
#include "scorers/probe/probe_divergence.h"
#include "evals/publish/table_text.h"
#include "evals/run/verdict.h"

namespace evalrun {
namespace {

using nlohmann::json;

constexpr const char* kKldNote =
    "KLD(A||B) over the union of both top-K sets, the remaining probability mass of each side as one bucket "
    "(\"rest\"); a token of the union missing from one side's top-K takes min(that side's K-th probability, its "
    "rest / the tokens it misses) out of its rest. A lower bound of the full KLD where both top-K sets agree.";

std::string Short(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The first of the recorded facts that must match, or "".
std::string InfoDifference(const json& ia, const json& ib) {
  const std::pair<const char*, std::vector<std::string>> keys[] = {
      {"text (sha256)", {"text", "sha256"}},
      {"context_words", {"context_words"}},
      {"top_logprobs", {"top_logprobs"}},
  };
  for (const auto& [name, path] : keys) {
    const json* x = &ia;
    const json* y = &ib;
    for (const auto& k : path) {
      x = x->is_object() && x->contains(k) ? &(*x)[k] : nullptr;
      y = y->is_object() && y->contains(k) ? &(*y)[k] : nullptr;
      if (!x || !y) break;
    }
    if (!x || !y) return std::string(name) + ": not recorded in " + (!x ? "A" : "B");
    if (*x != *y) {
      std::string what = std::string(name) + ": A " + Short(*x) + ", B " + Short(*y);
      if (std::string(name) == "text (sha256)")
        what += " (A probes " + Short(JsonAt(ia, {"text", "file"})) + ", B " + Short(JsonAt(ib, {"text", "file"})) +
                ")";
      return what;
    }
  }
  const json& pa = JsonAt(ia, {"positions"});
  const json& pb = JsonAt(ib, {"positions"});
  if (pa.is_array() && pb.is_array() && pa != pb) {
    for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
      if (i >= pa.size() || i >= pb.size() || pa[i] != pb[i])
        return "positions: entry " + std::to_string(i) + " is " + (i < pa.size() ? pa[i].dump() : "(none)") +
               " in A and " + (i < pb.size() ? pb[i].dump() : "(none)") + " in B (another seed or count)";
    }
  }
  return "";
}

std::map<std::string, const SampleRecord*> ById(const std::vector<SampleRecord>& s) {
  std::map<std::string, const SampleRecord*> m;
  for (const auto& r : s) m[r.id] = &r;  // the last line of an id counts
  return m;
}

json SummaryJson(const ValueSummary& s) {
  return {{"n", s.n}, {"mean", s.mean}, {"median", s.median}, {"p95", s.p95}, {"p99", s.p99}, {"max", s.max}};
}

std::optional<double> Threshold(const std::optional<double>& flag, const RunFolder& a, const RunFolder& b,
                                const std::string& part, const char* key, std::string* source) {
  if (flag) {
    *source = std::string("--") + key;
    for (char& c : *source)
      if (c == '_') c = '-';
    return flag;
  }
  for (const RunFolder* r : {&b, &a}) {
    const json& t = JsonAt(r->results, {"parts", part.c_str(), "info", "thresholds", key});
    if (t.is_number()) {
      *source = std::string(r == &b ? "B" : "A") + "'s card (parts." + part + "." + key + ")";
      return t.get<double>();
    }
  }
  return std::nullopt;
}

// The per-position KLD by decade (CountByDecade), for the comparison's chart.
json KldHistogramJson(const std::vector<double>& kld) {
  const DecadeCounts c = CountByDecade(kld);
  json bins = json::array();
  for (size_t i = 0; i < c.decades.size(); ++i) {
    const int hi = kDecadeLowest + static_cast<int>(i);
    bins.push_back({{"from", i == 0 ? 0.0 : std::pow(10.0, hi - 1)},
                    {"to", i + 1 == c.decades.size() ? json() : json(std::pow(10.0, hi))},
                    {"count", c.decades[i]}});
  }
  return {{"zero", c.zero}, {"not_a_number", c.not_a_number}, {"bins", std::move(bins)},
          {"text", "positions by KLD(A||B): exactly 0, then one bin per decade [from, to); the first bin holds "
                   "everything above 0 and below its `to`, the last everything from its `from` up"}};
}

// The positions listed where the top tokens differ (the probe's flips).
constexpr size_t kTop1ChangesListed = 200;

json TopJson(const LogprobsVerdict& v) {
  const TokenLogprob& t = v.top.front();
  return {{"token", t.token}, {"id", t.id >= 0 ? json(t.id) : json()}, {"logprob", t.logprob}};
}

// One position both runs answered, and how their distributions differ there.
struct PairedPosition {
  const SampleRecord* a;
  const SampleRecord* b;
  PositionDivergence d;
};

// The positions both runs answered (a position refused as too long in
// either is left out), and the ids only one run has. An error when a pair
// was not asked the same (prompt or tokens differ) or has no candidates.
Status PairPositions(const std::string& part, const RunFolder& a, const RunFolder& b,
                     const std::vector<SampleRecord>& sa, const std::vector<SampleRecord>& sb,
                     std::vector<PairedPosition>* rows, json* only_a, json* only_b) {
  const auto ma = ById(sa), mb = ById(sb);
  for (const auto& [id, ra] : ma) {
    auto it = mb.find(id);
    if (it == mb.end()) {
      only_a->push_back(id);
      continue;
    }
    const SampleRecord* rb = it->second;
    const std::string where = "part " + part + ": position " + id + ": ";
    if (ra->prompt_sha256 != rb->prompt_sha256)
      return Status::InvalidInput(where + "the prompts differ (prompt_sha256 " + ra->prompt_sha256.substr(0, 12) +
                                  " in A, " + rb->prompt_sha256.substr(0, 12) + " in B)");
    if (ra->prompt_tokens != rb->prompt_tokens)
      return Status::InvalidInput(where + "the prompt is " + std::to_string(ra->prompt_tokens) + " tokens in A and " +
                                  std::to_string(rb->prompt_tokens) +
                                  " in B: the runs tokenize the text differently (another model or tokenizer); "
                                  "their distributions are not of the same token sequence");
    const auto& va = std::get<LogprobsVerdict>(ra->verdict);
    const auto& vb = std::get<LogprobsVerdict>(rb->verdict);
    if (va.top.empty() || vb.top.empty()) {
      if (ra->too_long.refused || rb->too_long.refused) continue;
      return Status::InvalidInput(where + "no candidates recorded in " + (va.top.empty() ? a.dir : b.dir));
    }
    rows->push_back({ra, rb, ComparePosition(va.top, vb.top)});
  }
  for (const auto& [id, rb] : mb)
    if (!ma.count(id)) only_b->push_back(id);
  return Status::Ok();
}

// The paired positions' divergences, gathered.
struct ProbeTotals {
  std::vector<double> kld, delta;
  int64_t same_top = 0, sets_differ = 0, outside = 0;
};

ProbeTotals Tally(const std::vector<PairedPosition>& rows) {
  ProbeTotals t;
  for (const PairedPosition& r : rows) {
    t.kld.push_back(r.d.kld);
    t.delta.push_back(r.d.abs_delta_top);
    t.same_top += r.d.same_top;
    t.sets_differ += !r.d.same_sets;
    t.outside += !r.d.top_a_in_b;
  }
  return t;
}

// The thresholds set (flags first, else B's card, else A's), each checked;
// *exceeded when any is.
json ThresholdChecks(const std::string& part, const RunFolder& a, const RunFolder& b, const CompareOptions& opts,
                     const ValueSummary& ks, double top1, bool* exceeded) {
  json checks = json::array();
  *exceeded = false;
  auto check = [&](const std::optional<double>& flag, const char* key, double value, bool upper) {
    std::string source;
    const std::optional<double> limit = Threshold(flag, a, b, part, key, &source);
    if (!limit) return;
    const bool bad = upper ? value > *limit : value < *limit;
    *exceeded = *exceeded || bad;
    checks.push_back({{"name", key}, {"limit", *limit}, {"value", value}, {"exceeded", bad}, {"source", source}});
  };
  check(opts.max_kld_mean, "max_kld_mean", ks.mean, true);
  check(opts.max_kld_p99, "max_kld_p99", ks.p99, true);
  check(opts.min_top1, "min_top1", top1, false);
  return checks;
}

json PositionJson(const PairedPosition& r) {
  return json{{"id", r.a->id},
              {"position", r.a->Int("position", -1)},
              {"kld", r.d.kld},
              {"same_top", r.d.same_top},
              {"a_top", TopJson(std::get<LogprobsVerdict>(r.a->verdict))},
              {"b_top", TopJson(std::get<LogprobsVerdict>(r.b->verdict))},
              {"abs_delta_top_logprob", r.d.abs_delta_top},
              {"excerpt", r.a->Text("excerpt")},
              {"next_word", r.a->Text("next_word")}};
}

// The first kTop1ChangesListed positions (in position order) whose top
// token changed; *total: how many did.
json Top1Changed(const std::vector<PairedPosition>& rows, size_t* total) {
  std::vector<size_t> changed;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i].d.same_top) changed.push_back(i);
  std::stable_sort(changed.begin(), changed.end(), [&](size_t x, size_t y) {
    return rows[x].a->Int("position", -1) < rows[y].a->Int("position", -1);
  });
  json top1_changed = json::array();
  for (size_t k = 0; k < changed.size() && k < kTop1ChangesListed; ++k)
    top1_changed.push_back(PositionJson(rows[changed[k]]));
  *total = changed.size();
  return top1_changed;
}

// The `shown` positions of the largest KLD, largest first.
json WorstPositions(const std::vector<PairedPosition>& rows, int shown) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return rows[x].d.kld > rows[y].d.kld; });
  json worst = json::array();
  for (size_t k = 0; k < order.size() && static_cast<int>(k) < shown; ++k) {
    worst.push_back(PositionJson(rows[order[k]]));
  }
  return worst;
}

}  // namespace

Status CompareProbePart(const std::string& part, const RunFolder& a, const RunFolder& b,
                        const std::vector<SampleRecord>& sa, const std::vector<SampleRecord>& sb,
                        const CompareOptions& opts, json* out) {
  const json& ia = JsonAt(a.results, {"parts", part.c_str(), "info"});
  const json& ib = JsonAt(b.results, {"parts", part.c_str(), "info"});
  const std::string diff = InfoDifference(ia, ib);
  if (!diff.empty())
    return Status::InvalidInput("part " + part + ": the probe runs are not comparable: " + diff + " (" + a.dir +
                                " vs " + b.dir + ")");
  std::vector<PairedPosition> rows;
  json only_a = json::array(), only_b = json::array();
  EVALRUN_RETURN_IF_ERROR(PairPositions(part, a, b, sa, sb, &rows, &only_a, &only_b));
  if (rows.empty()) return Status::InvalidInput("part " + part + ": no position answered in both runs");

  const ProbeTotals t = Tally(rows);
  const ValueSummary ks = Summarize(t.kld);
  const double top1 = static_cast<double>(t.same_top) / rows.size();
  bool exceeded = false;
  const json checks = ThresholdChecks(part, a, b, opts, ks, top1, &exceeded);
  size_t changed_total = 0;
  json top1_changed = Top1Changed(rows, &changed_total);

  json pd;
  pd["part"] = part;
  pd["kind"] = VerdictKindName(VerdictKind::kLogprobs);
  pd["samples_a"] = sa.size();
  pd["samples_b"] = sb.size();
  pd["paired"] = rows.size();
  pd["only_in_a"] = only_a.size();
  pd["only_in_b"] = only_b.size();
  pd["only_in_a_ids"] = only_a;
  pd["only_in_b_ids"] = only_b;
  pd["top_logprobs"] = JsonAt(ia, {"top_logprobs"});
  pd["text"] = JsonAt(ia, {"text"});
  pd["kld"] = SummaryJson(ks);
  pd["kld_definition"] = kKldNote;
  pd["kld_histogram"] = KldHistogramJson(t.kld);
  pd["top1_agreement"] = top1;
  pd["top1_same"] = t.same_top;
  pd["abs_delta_top_logprob"] = SummaryJson(Summarize(t.delta));
  pd["top1_changed"] = std::move(top1_changed);
  pd["top1_changed_total"] = changed_total;
  pd["top_sets_differ"] = t.sets_differ;
  pd["a_top_outside_b"] = t.outside;
  pd["worst"] = WorstPositions(rows, opts.worst_positions_shown);
  pd["thresholds"] = checks;
  pd["metrics"] = json::array();  // the units of the other kinds: none here
  pd["flipped"] = json::array();
  pd["verdict"] = exceeded ? "regression" : checks.empty() ? "measured" : "within thresholds";
  pd["regression"] = exceeded;
  *out = std::move(pd);
  return Status::Ok();
}

Status ProbePartNoise(const std::string& part, const RunFolder& a, const RunFolder& noise_a,
                      const RunFolder& noise_a2, const std::vector<SampleRecord>& na,
                      const std::vector<SampleRecord>& na2, const CompareOptions& opts, json* pd) {
  const std::string diff = InfoDifference(JsonAt(a.results, {"parts", part.c_str(), "info"}),
                                          JsonAt(noise_a.results, {"parts", part.c_str(), "info"}));
  if (!diff.empty())
    return Status::InvalidInput("--noise: part " + part + ": the noise pair does not probe what A/B does: " + diff +
                                " (A = " + a.dir + ", the noise pair's A = " + noise_a.dir +
                                "): the noise pair must cover the same parts and items as A/B");
  CompareOptions plain = opts;  // the A/A pair is measured, never judged
  plain.max_kld_mean = plain.max_kld_p99 = plain.min_top1 = std::nullopt;
  json aa;
  Status st = CompareProbePart(part, noise_a, noise_a2, na, na2, plain, &aa);
  if (!st.ok()) return Status::InvalidInput("--noise: " + st.message());
  if (aa["paired"] != (*pd)["paired"])
    return Status::InvalidInput("--noise: part " + part + ": A/B pairs " + (*pd)["paired"].dump() +
                                " positions, the noise pair " + noise_a.dir + " and " + noise_a2.dir + " " +
                                aa["paired"].dump() + ": the noise pair must cover the same parts and items as A/B");
  const double mean_ab = (*pd)["kld"]["mean"].get<double>();
  const double mean_aa = aa["kld"]["mean"].get<double>(), max_aa = aa["kld"]["max"].get<double>();
  const bool within = mean_ab <= max_aa;
  json n;
  n["a"] = noise_a.dir;
  n["a2"] = noise_a2.dir;
  n["paired"] = aa["paired"];
  n["kld"] = aa["kld"];
  n["kld_histogram"] = aa["kld_histogram"];
  n["abs_delta_top_logprob"] = aa["abs_delta_top_logprob"];
  n["top1_agreement"] = aa["top1_agreement"];
  n["mean_ratio"] = mean_aa > 0 ? json(mean_ab / mean_aa) : json();
  n["within_noise"] = within;
  n["label"] = within ? "within noise" : "beyond noise";
  std::string text = "A/A pair (the same build probed twice): KLD mean " + FormatDouble("%.3g", mean_aa) + ", p99 " +
                     FormatDouble("%.3g", aa["kld"]["p99"].get<double>()) + ", max " + FormatDouble("%.3g", max_aa) +
                     ", top-1 agreement " + FormatDouble("%.2f", 100 * aa["top1_agreement"].get<double>()) +
                     " %; A/B's mean KLD " + FormatDouble("%.3g", mean_ab);
  if (mean_aa > 0) text += " (" + FormatDouble("%.3g", mean_ab / mean_aa) + " times the A/A mean)";
  text += within ? " is not above the A/A pair's largest per-position KLD: within noise"
                 : " is above the A/A pair's largest per-position KLD: beyond noise";
  n["text"] = text;
  (*pd)["within_noise"] = within;
  (*pd)["noise"] = std::move(n);
  return Status::Ok();
}

}  // namespace evalrun
