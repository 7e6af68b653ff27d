#include "evals/parts/ruler_length.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace evalrun {

double TokenEstimator::Estimate(int64_t bytes) const {
  return anchor_tokens_ + slope_ * static_cast<double>(bytes - anchor_bytes_);
}

void TokenEstimator::Observe(int64_t bytes, int tokens, bool same_fit) {
  if (same_fit && has_anchor_) {
    const int64_t db = bytes - anchor_bytes_;
    const int64_t span = std::max<int64_t>(64, std::max(bytes, anchor_bytes_) / 100);
    if (std::llabs(db) >= span) {
      const double s = (tokens - anchor_tokens_) / static_cast<double>(db);
      if (s > 0) {
        slope_ = s;
        has_secant_ = true;
      }
    }
  }
  if (!has_anchor_ && !has_secant_ && bytes > 0) slope_ = tokens / static_cast<double>(bytes);
  has_anchor_ = true;
  anchor_bytes_ = bytes;
  anchor_tokens_ = tokens;
}

void TokenEstimator::RecordError(double error) {
  errors_.push_back(std::fabs(error));
  if (errors_.size() > 8) errors_.erase(errors_.begin());
}

double TokenEstimator::Margin(int tolerance) const {
  if (errors_.empty()) return tolerance / 2.0;
  const double worst = *std::max_element(errors_.begin(), errors_.end());
  return std::min(tolerance / 2.0, std::max(2.0, 2 * worst));
}

int EffectiveTolerance(const LengthTarget& target) {
  if (target.tolerance_tokens >= 0) return target.tolerance_tokens;
  return std::max(24, target.max_tokens / 200);
}

namespace {

// The largest n in [lower, upper] whose estimate is <= aim (lower when even
// lower is estimated above it): exponential probing up from lower, then
// bisection, on ProxyBytes only.
Status Predict(SizedPrompt* prompt, const TokenEstimator& est, int lower, int upper, double aim,
               int* n) {
  int64_t b = 0;
  EVALRUN_RETURN_IF_ERROR(prompt->ProxyBytes(lower, &b));
  if (est.Estimate(b) > aim || lower == upper) {
    *n = lower;
    return Status::Ok();
  }
  int good = lower;  // estimated to fit
  int bad = -1;      // estimated not to (or -1: none found below upper)
  int64_t step = 1;
  while (true) {
    const int probe = static_cast<int>(std::min<int64_t>(upper, good + step));
    EVALRUN_RETURN_IF_ERROR(prompt->ProxyBytes(probe, &b));
    if (est.Estimate(b) <= aim) {
      good = probe;
      if (probe == upper) break;
      step *= 2;
    } else {
      bad = probe;
      break;
    }
  }
  if (bad >= 0) {
    while (bad - good > 1) {
      const int mid = good + (bad - good) / 2;
      EVALRUN_RETURN_IF_ERROR(prompt->ProxyBytes(mid, &b));
      if (est.Estimate(b) <= aim) {
        good = mid;
      } else {
        bad = mid;
      }
    }
  }
  *n = good;
  return Status::Ok();
}

}  // namespace

Status FitToLength(SizedPrompt* prompt, const TokenCounter& count, const LengthTarget& target,
                   TokenEstimator* est, FitResult* out) {
  const int max_tokens = target.max_tokens;
  const int tol = EffectiveTolerance(target);
  const int min_units = prompt->MinUnits();
  const int max_units = prompt->MaxUnits();
  if (max_units < min_units) return Status::Internal("ruler length: MaxUnits < MinUnits");

  int fit_n = -1;  // largest n known to fit
  int fit_tokens = 0;
  int fit_estimate = -1;
  std::string fit_text;
  int64_t fit_bytes = 0;
  int64_t over_n = static_cast<int64_t>(max_units) + 1;  // smallest n known not to fit
  int over_tokens = 0;
  int checks = 0;
  int model_steps = 0;
  bool observed_here = false;

  // Builds and counts n; updates the bracket and the estimator.
  auto measure = [&](int n) -> Status {
    int64_t bytes = 0;
    EVALRUN_RETURN_IF_ERROR(prompt->ProxyBytes(n, &bytes));
    const bool had_estimate = est->has_anchor();
    const bool had_secant = est->has_secant();
    const double estimate_d = had_estimate ? est->Estimate(bytes) : 0.0;
    const int estimate = had_estimate ? static_cast<int>(std::lround(estimate_d)) : -1;
    std::string text;
    EVALRUN_RETURN_IF_ERROR(prompt->Build(n, &text));
    int tokens = 0;
    EVALRUN_RETURN_IF_ERROR(count(text, &tokens));
    ++checks;
    if (had_secant) est->RecordError(tokens - estimate_d);
    est->Observe(bytes, tokens, observed_here);
    observed_here = true;
    if (tokens <= max_tokens) {
      if (n > fit_n) {
        fit_n = n;
        fit_tokens = tokens;
        fit_estimate = estimate;
        fit_text = std::move(text);
        fit_bytes = bytes;
      }
    } else if (n < over_n) {
      over_n = n;
      over_tokens = tokens;
    }
    return Status::Ok();
  };

  if (!est->has_anchor()) EVALRUN_RETURN_IF_ERROR(measure(min_units));

  while (true) {
    if (fit_n >= 0) {
      if (max_tokens - fit_tokens <= tol || fit_n >= max_units || fit_n + 1 >= over_n) break;
      // One more unit, estimated from this exact count: would it overflow?
      int64_t next_bytes = 0;
      EVALRUN_RETURN_IF_ERROR(prompt->ProxyBytes(fit_n + 1, &next_bytes));
      if (fit_tokens + est->slope() * static_cast<double>(next_bytes - fit_bytes) > max_tokens) {
        break;
      }
      if (checks >= target.max_exact_checks) break;
    } else if (over_n <= min_units) {
      return Status::InvalidInput("the smallest prompt (" + std::to_string(min_units) +
                                  " haystack units) already has " + std::to_string(over_tokens) +
                                  " tokens, more than the " + std::to_string(max_tokens) +
                                  " allowed (length minus the answer budget)");
    }
    const int lower = std::max(fit_n + 1, min_units);
    const int upper = static_cast<int>(std::min<int64_t>(over_n - 1, max_units));
    int n = lower;
    const bool bracket_known = over_n <= max_units;
    if (model_steps < 4 || !bracket_known) {
      const double aim = max_tokens - est->Margin(tol);
      EVALRUN_RETURN_IF_ERROR(Predict(prompt, *est, lower, upper, aim, &n));
    } else {
      n = lower + (upper - lower) / 2;
    }
    ++model_steps;
    EVALRUN_RETURN_IF_ERROR(measure(n));
  }

  out->units = fit_n;
  out->text = std::move(fit_text);
  out->estimated_tokens = fit_estimate;
  out->exact_tokens = fit_tokens;
  out->exact_checks = checks;
  // Leave the estimator anchored on the accepted prompt, the best guide for
  // the next sample of the same task.
  est->Observe(fit_bytes, fit_tokens, false);
  return Status::Ok();
}

}  // namespace evalrun
