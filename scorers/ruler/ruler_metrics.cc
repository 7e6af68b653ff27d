#include "scorers/ruler/ruler_metrics.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "scorers/py_unicode.h"

namespace evalrun {
namespace {

// RULER's text has always been decoded by byte shape alone (see py::Utf8Check).
constexpr py::Utf8Check kShapeOnly = py::Utf8Check::kShapeOnly;

bool Contains(const std::string& lowered_pred, const std::string& ref) {
  return lowered_pred.find(py::PyLower(ref)) != std::string::npos;
}

}  // namespace

const char* RulerMetricName(RulerMetric metric) {
  return metric == RulerMetric::kStringMatchAll ? "string_match_all" : "string_match_part";
}

std::string RulerPostprocess(std::string_view pred) {
  std::string s(py::PyStrip(pred, kShapeOnly));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) <= 0x1F) c = '\n';
  }
  return std::string(py::PyStrip(s, kShapeOnly));
}

double StringMatchAll(std::string_view pred, const std::vector<std::string>& refs) {
  if (refs.empty()) return 0.0;
  const std::string p = py::PyLower(RulerPostprocess(pred));
  double hits = 0.0;  // sum([1.0 if ... else 0.0 for r in ref])
  for (const std::string& r : refs) hits += Contains(p, r) ? 1.0 : 0.0;
  return hits / static_cast<double>(refs.size());
}

double StringMatchPart(std::string_view pred, const std::vector<std::string>& refs) {
  if (refs.empty()) return 0.0;
  const std::string p = py::PyLower(RulerPostprocess(pred));
  for (const std::string& r : refs) {
    if (Contains(p, r)) return 1.0;
  }
  return 0.0;
}

double RulerSampleScore(RulerMetric metric, std::string_view pred,
                        const std::vector<std::string>& refs) {
  return metric == RulerMetric::kStringMatchAll ? StringMatchAll(pred, refs)
                                                : StringMatchPart(pred, refs);
}

double PyRound2(double x) {
  // glibc's printf rounds the exact binary value half-to-even, as CPython's
  // round() does (both are correctly rounded).
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return std::strtod(buf, nullptr);
}

double RulerTaskScoreFromSamples(const std::vector<double>& per_sample) {
  if (per_sample.empty()) return 0.0;
  double sum = 0.0;
  for (double s : per_sample) sum += s;
  return PyRound2(sum / static_cast<double>(per_sample.size()) * 100);
}

RulerTaskScore ScoreRulerTask(RulerMetric metric, const std::vector<std::string>& preds,
                              const std::vector<std::vector<std::string>>& refs) {
  RulerTaskScore out;
  const size_t n = std::min(preds.size(), refs.size());
  std::vector<double> per_sample;
  per_sample.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (RulerPostprocess(preds[i]).empty()) ++out.nulls;
    per_sample.push_back(RulerSampleScore(metric, preds[i], refs[i]));
  }
  out.total = static_cast<int>(n);
  out.score = RulerTaskScoreFromSamples(per_sample);
  return out;
}

}  // namespace evalrun
