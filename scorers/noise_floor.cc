#include "scorers/noise_floor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace evalrun {
namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

double NormalQuantile(double p) {
  // Phi(x) = erfc(-x / sqrt(2)) / 2 is increasing; bisect until the interval
  // stops shrinking in doubles.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

NoiseFloor ComputeNoiseFloor(const std::vector<double>& x, const std::vector<double>& y, int64_t n, double alpha,
                             double power) {
  NoiseFloor f;
  f.pairs = static_cast<int64_t>(std::min(x.size(), y.size()));
  double sq = 0;
  for (int64_t i = 0; i < f.pairs; ++i) {
    const double d = y[i] - x[i];
    if (d != 0) ++f.flips;
    sq += d * d;
  }
  f.n = n > 0 ? n : f.pairs;
  f.alpha = alpha;
  f.power = power;
  f.z_alpha = NormalQuantile(1 - alpha / 2);
  f.z_power = NormalQuantile(power);
  f.resolution = f.n > 0 ? 1.0 / static_cast<double>(f.n) : 0;
  if (f.pairs == 0) return f;
  f.flip_rate = static_cast<double>(f.flips) / static_cast<double>(f.pairs);
  f.mean_sq_diff = sq / static_cast<double>(f.pairs);
  if (f.flips > 0 && f.n > 0) f.mde = (f.z_alpha + f.z_power) * std::sqrt(f.mean_sq_diff / static_cast<double>(f.n));
  return f;
}

bool WithinNoise(const NoiseFloor& f, double delta) {
  // Deltas come rounded to 6 decimals; compare with that slack.
  const double a = std::fabs(delta) + 1e-9;
  if (f.mde) return a < *f.mde;
  return f.pairs > 0 && a < f.resolution;
}

nlohmann::json NoiseFloorJson(const NoiseFloor& f) {
  auto r6 = [](double v) { return std::round(v * 1e6) / 1e6; };
  nlohmann::json j;
  j["pairs"] = f.pairs;
  j["flips"] = f.flips;
  j["flip_rate"] = r6(f.flip_rate);
  j["mean_sq_diff"] = r6(f.mean_sq_diff);
  j["n"] = f.n;
  j["alpha"] = f.alpha;
  j["power"] = f.power;
  j["z_alpha"] = r6(f.z_alpha);
  j["z_power"] = r6(f.z_power);
  j["mde"] = f.mde ? nlohmann::json(r6(*f.mde)) : nlohmann::json();
  j["mde_below"] = f.mde || f.pairs == 0 ? nlohmann::json() : nlohmann::json(r6(f.resolution));
  j["formula"] = kNoiseFloorFormula;
  j["text"] = NoiseFloorText(f);
  return j;
}

std::string NoiseFloorText(const NoiseFloor& f) {
  const std::string rate = "flip rate " + std::to_string(f.flips) + "/" + std::to_string(f.pairs);
  if (f.pairs == 0) return rate + ": nothing paired in the A/A pair: no floor";
  if (!f.mde)
    return rate + ": no flips in the A/A pair: the floor is below 1/n = " + Fmt("%.2f", 100 * f.resolution) +
           " pp (n = " + std::to_string(f.n) + ")";
  const bool binary = std::fabs(f.mean_sq_diff - f.flip_rate) < 1e-12;
  return rate + " = " + Fmt("%.2f", 100 * f.flip_rate) + " %; MDE = (" + Fmt("%.3f", f.z_alpha) + " + " +
         Fmt("%.3f", f.z_power) + ") * sqrt(" + (binary ? "" : "s2 ") + Fmt("%.4f", f.mean_sq_diff) + " / " +
         std::to_string(f.n) + ") = " + Fmt("%.2f", 100 * *f.mde) + " pp (alpha " + Fmt("%g", f.alpha) +
         ", power " + Fmt("%g", f.power) + ")";
}

}  // namespace evalrun
