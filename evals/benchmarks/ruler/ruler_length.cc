#include "evals/benchmarks/ruler/ruler_length.h"

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

// FitToLength's search: a bracket [fit_n_, over_n_) of haystack units
// narrowed by exact counts, each one also teaching the estimator.
class LengthSearch {
 public:
  LengthSearch(SizedPrompt* prompt, const TokenCounter& count, const LengthTarget& target, TokenEstimator* est)
      : prompt_(prompt),
        count_(count),
        target_(target),
        est_(est),
        max_tokens_(target.max_tokens),
        tol_(EffectiveTolerance(target)),
        min_units_(prompt->MinUnits()),
        max_units_(prompt->MaxUnits()),
        over_n_(static_cast<int64_t>(max_units_) + 1) {}

  Status Run(FitResult* out) {
    if (max_units_ < min_units_) return Status::Internal("ruler length: MaxUnits < MinUnits");
    if (!est_->has_anchor()) EVALRUN_RETURN_IF_ERROR(Measure(min_units_));
    while (true) {
      bool done = false;
      EVALRUN_RETURN_IF_ERROR(CheckDone(&done));
      if (done) break;
      int n = 0;
      EVALRUN_RETURN_IF_ERROR(NextUnits(&n));
      EVALRUN_RETURN_IF_ERROR(Measure(n));
    }
    out->units = fit_n_;
    out->text = std::move(fit_text_);
    out->estimated_tokens = fit_estimate_;
    out->exact_tokens = fit_tokens_;
    out->exact_checks = checks_;
    // Leave the estimator anchored on the accepted prompt, the best guide for
    // the next sample of the same task.
    est_->Observe(fit_bytes_, fit_tokens_, false);
    return Status::Ok();
  }

 private:
  // Builds and counts n; updates the bracket and the estimator.
  Status Measure(int n) {
    int64_t bytes = 0;
    EVALRUN_RETURN_IF_ERROR(prompt_->ProxyBytes(n, &bytes));
    const bool had_estimate = est_->has_anchor();
    const bool had_secant = est_->has_secant();
    const double estimate_d = had_estimate ? est_->Estimate(bytes) : 0.0;
    const int estimate = had_estimate ? static_cast<int>(std::lround(estimate_d)) : -1;
    std::string text;
    EVALRUN_RETURN_IF_ERROR(prompt_->Build(n, &text));
    int tokens = 0;
    EVALRUN_RETURN_IF_ERROR(count_(text, &tokens));
    ++checks_;
    if (had_secant) est_->RecordError(tokens - estimate_d);
    est_->Observe(bytes, tokens, observed_here_);
    observed_here_ = true;
    if (tokens <= max_tokens_) {
      if (n > fit_n_) {
        fit_n_ = n;
        fit_tokens_ = tokens;
        fit_estimate_ = estimate;
        fit_text_ = std::move(text);
        fit_bytes_ = bytes;
      }
    } else if (n < over_n_) {
      over_n_ = n;
      over_tokens_ = tokens;
    }
    return Status::Ok();
  }

  // *done when the fit found is close enough (or cannot grow); an error
  // when even the smallest prompt is over.
  Status CheckDone(bool* done) {
    if (fit_n_ >= 0) {
      if (max_tokens_ - fit_tokens_ <= tol_ || fit_n_ >= max_units_ || fit_n_ + 1 >= over_n_) {
        *done = true;
        return Status::Ok();
      }
      // One more unit, estimated from this exact count: would it overflow?
      int64_t next_bytes = 0;
      EVALRUN_RETURN_IF_ERROR(prompt_->ProxyBytes(fit_n_ + 1, &next_bytes));
      if (fit_tokens_ + est_->slope() * static_cast<double>(next_bytes - fit_bytes_) > max_tokens_) {
        *done = true;
        return Status::Ok();
      }
      if (checks_ >= target_.max_exact_checks) *done = true;
    } else if (over_n_ <= min_units_) {
      return Status::InvalidInput("the smallest prompt (" + std::to_string(min_units_) +
                                  " haystack units) already has " + std::to_string(over_tokens_) +
                                  " tokens, more than the " + std::to_string(max_tokens_) +
                                  " allowed (length minus the answer budget)");
    }
    return Status::Ok();
  }

  // The next size to count: predicted from the estimator for the first
  // steps (or while no upper bound is known), then bisected.
  Status NextUnits(int* n) {
    const int lower = std::max(fit_n_ + 1, min_units_);
    const int upper = static_cast<int>(std::min<int64_t>(over_n_ - 1, max_units_));
    *n = lower;
    const bool bracket_known = over_n_ <= max_units_;
    if (model_steps_ < 4 || !bracket_known) {
      const double aim = max_tokens_ - est_->Margin(tol_);
      EVALRUN_RETURN_IF_ERROR(Predict(prompt_, *est_, lower, upper, aim, n));
    } else {
      *n = lower + (upper - lower) / 2;
    }
    ++model_steps_;
    return Status::Ok();
  }

  SizedPrompt* const prompt_;
  const TokenCounter& count_;
  const LengthTarget& target_;
  TokenEstimator* const est_;
  const int max_tokens_;
  const int tol_;
  const int min_units_;
  const int max_units_;

  int fit_n_ = -1;  // largest n known to fit
  int fit_tokens_ = 0;
  int fit_estimate_ = -1;
  std::string fit_text_;
  int64_t fit_bytes_ = 0;
  int64_t over_n_;  // smallest n known not to fit
  int over_tokens_ = 0;
  int checks_ = 0;
  int model_steps_ = 0;
  bool observed_here_ = false;
};

}  // namespace

Status FitToLength(SizedPrompt* prompt, const TokenCounter& count, const LengthTarget& target,
                   TokenEstimator* est, FitResult* out) {
  return LengthSearch(prompt, count, target, est).Run(out);
}

}  // namespace evalrun
