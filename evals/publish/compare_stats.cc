#include "evals/publish/compare_stats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "scorers/statistics.h"

namespace evalrun::compare_internal {
namespace {

double Round6(double x) { return std::round(x * 1e6) / 1e6; }

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

}  // namespace

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
        nlohmann::json f = {{"id", pr.a->id}, {"label", pr.a->label}, {"a", x}, {"b", y}};
        if (!pr.a->answer.empty() || !pr.b->answer.empty()) {
          f["answer_a"] = pr.a->answer;
          f["answer_b"] = pr.b->answer;
        }
        flips->push_back(std::move(f));
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

}  // namespace evalrun::compare_internal
