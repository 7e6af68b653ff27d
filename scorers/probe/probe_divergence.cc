#include "scorers/probe/probe_divergence.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace evalrun {
namespace {

constexpr double kProbFloor = 1e-12;

bool SameToken(const TokenLogprob& x, const TokenLogprob& y) {
  if (x.id >= 0 && y.id >= 0) return x.id == y.id;
  return x.token == y.token;
}

int Find(const std::vector<TokenLogprob>& side, const TokenLogprob& t) {
  for (size_t i = 0; i < side.size(); ++i)
    if (SameToken(side[i], t)) return static_cast<int>(i);
  return -1;
}

// One side's probabilities over the union, its rest after the estimates for
// the tokens it misses.
struct Side {
  std::vector<double> p;  // by union index
  double rest = 0;
};

Side Spread(const std::vector<TokenLogprob>& own, const std::vector<TokenLogprob>& uni) {
  Side s;
  double sum = 0, kth = 1;
  for (const auto& t : own) {
    const double p = std::exp(t.logprob);
    sum += p;
    kth = std::min(kth, p);
  }
  const double rest = std::max(0.0, 1.0 - sum);
  size_t missing = 0;
  for (const auto& t : uni) missing += Find(own, t) < 0;
  const double q = missing ? std::min(kth, rest / static_cast<double>(missing)) : 0.0;
  for (const auto& t : uni) {
    const int i = Find(own, t);
    s.p.push_back(i >= 0 ? std::exp(own[i].logprob) : q);
  }
  s.rest = std::max(0.0, rest - q * static_cast<double>(missing));
  return s;
}

double Term(double pa, double pb) {
  if (pa <= 0) return 0;
  return pa * (std::log(pa) - std::log(std::max(pb, kProbFloor)));
}

}  // namespace

PositionDivergence ComparePosition(const std::vector<TokenLogprob>& a, const std::vector<TokenLogprob>& b) {
  PositionDivergence d;
  std::vector<TokenLogprob> uni = a;
  for (const auto& t : b)
    if (Find(a, t) < 0) uni.push_back(t);
  d.same_sets = uni.size() == a.size() && a.size() == b.size();
  const Side sa = Spread(a, uni), sb = Spread(b, uni);
  double kld = 0;
  for (size_t i = 0; i < uni.size(); ++i) {
    // Identical inputs give identical terms' operands: exactly 0.
    if (sa.p[i] != sb.p[i]) kld += Term(sa.p[i], sb.p[i]);
  }
  if (sa.rest != sb.rest) kld += Term(sa.rest, sb.rest);
  d.kld = kld;
  d.rest_a = sa.rest;
  d.rest_b = sb.rest;
  d.same_top = SameToken(a.front(), b.front());
  d.top_logprob_a = a.front().logprob;
  const int in_b = Find(b, a.front());
  d.top_a_in_b = in_b >= 0;
  d.top_logprob_b = in_b >= 0 ? b[in_b].logprob : std::log(std::max(sb.p[0], kProbFloor));
  d.abs_delta_top = std::fabs(d.top_logprob_a - d.top_logprob_b);
  return d;
}

double Percentile(const std::vector<double>& v, double fraction) {
  if (v.empty()) return 0;
  if (fraction <= 0) return v.front();
  if (fraction >= 1) return v.back();
  double p = fraction * static_cast<double>(v.size() - 1);
  const size_t ip = static_cast<size_t>(p);
  p -= static_cast<double>(ip);
  return (1 - p) * v[ip] + p * v[std::min(ip + 1, v.size() - 1)];
}

ValueSummary Summarize(std::vector<double> v) {
  ValueSummary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.median = v.size() % 2 == 0 ? 0.5 * (v[v.size() / 2] + v[v.size() / 2 - 1]) : v[v.size() / 2];
  s.p95 = Percentile(v, 0.95);
  s.p99 = Percentile(v, 0.99);
  s.max = v.back();
  s.min = v.front();
  return s;
}

DecadeCounts CountByDecade(const std::vector<double>& values) {
  DecadeCounts c;
  c.decades.assign(kDecadeHighest - kDecadeLowest + 2, 0);
  for (double v : values) {
    if (std::isnan(v)) {
      ++c.not_a_number;
    } else if (v <= 0) {
      ++c.zero;
    } else if (v < std::pow(10.0, kDecadeLowest)) {
      ++c.decades.front();
    } else if (v >= std::pow(10.0, kDecadeHighest)) {
      ++c.decades.back();
    } else {
      // floor(log10 v) can be off by one next to a power of ten; the edges decide.
      int e = static_cast<int>(std::floor(std::log10(v)));
      if (v < std::pow(10.0, e)) --e;
      if (v >= std::pow(10.0, e + 1)) ++e;
      e = std::max(kDecadeLowest, std::min(kDecadeHighest - 1, e));
      ++c.decades[e - kDecadeLowest + 1];
    }
  }
  return c;
}

}  // namespace evalrun
