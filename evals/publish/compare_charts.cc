#include "evals/publish/compare_charts.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/table_text.h"
#include "scorers/statistics.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string F(double x) { return FormatDouble("%.1f", x); }

double Num(const json& v, double fallback = 0) { return v.is_number() ? v.get<double>() : fallback; }

std::string Text(double x, double y, const std::string& cls, const std::string& anchor, const std::string& s) {
  return "<text x=\"" + F(x) + "\" y=\"" + F(y) + "\" class=\"" + cls + "\" text-anchor=\"" + anchor + "\">" +
         HtmlEscape(s) + "</text>";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return "<line x1=\"" + F(x1) + "\" y1=\"" + F(y1) + "\" x2=\"" + F(x2) + "\" y2=\"" + F(y2) + "\" class=\"" + cls +
         "\"/>";
}

std::string SvgOpen(int width, int height, const std::string& label, const char* cls = "chart") {
  return std::string("<svg class=\"") + cls + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
         "\" width=\"100%\" role=\"img\" aria-label=\"" + HtmlEscape(label) + "\">";
}

// "1e-6" for 10^-6; "0" for 0.
std::string PowerOfTen(double v) {
  if (v <= 0) return "0";
  return "1e" + std::to_string(static_cast<int>(std::lround(std::log10(v))));
}

// The index of the bin of `bins` (kld_histogram's) that holds v > 0.
size_t BinOf(const json& bins, double v) {
  for (size_t i = 0; i < bins.size(); ++i) {
    const json& to = bins[i]["to"];
    if (!to.is_number() || v < to.get<double>()) return i;
  }
  return bins.empty() ? 0 : bins.size() - 1;
}

// The KLD histogram's geometry: which decades it shows (lo..hi, -1 when
// none), its columns (the zero bar first) and its scale.
struct KldLayout {
  static constexpr int kWidth = 760, kLeft = 52, kPlotH = 170, kBottom = 44;
  const json& bins;
  bool noise = false;  // an A/A histogram of the same bins is drawn beside
  const json& noise_bins;
  double zero = 0, noise_zero = 0;
  int lo = -1, hi = -1;
  int columns = 1;
  int legend = 0;
  int top = 0;
  double gap = 14;
  double col_w = 0;
  int height = 0;
  double base = 0;
  double max_count = 0;

  double ColX(int col) const { return kLeft + col * col_w + (col > 0 ? gap : 0); }
  double H(double c) const { return max_count > 0 ? kPlotH * c / max_count : 0.0; }
};

const json& EmptyBins() {
  static const json kEmpty = json::array();
  return kEmpty;
}

KldLayout LayOutKld(const json& histogram, const json& marks, const json& noise_histogram) {
  const json& bins = histogram["bins"];
  const bool noise = noise_histogram.is_object() && noise_histogram["bins"].size() == bins.size();
  KldLayout l{bins, noise, noise ? noise_histogram["bins"] : EmptyBins()};
  l.zero = Num(histogram["zero"]);
  l.noise_zero = noise ? Num(noise_histogram["zero"]) : 0;
  // The decades shown: from the lowest to the highest that holds a position
  // (of either pair) or a mark.
  auto take = [&](size_t b) {
    const int k = static_cast<int>(b);
    l.lo = l.lo < 0 ? k : std::min(l.lo, k);
    l.hi = std::max(l.hi, k);
  };
  l.max_count = std::max(l.zero, l.noise_zero);
  for (size_t b = 0; b < bins.size(); ++b) {
    const double c = Num(bins[b]["count"]), nc = noise ? Num(l.noise_bins[b]["count"]) : 0;
    l.max_count = std::max(l.max_count, std::max(c, nc));
    if (c > 0 || nc > 0) take(b);
  }
  for (const auto& m : marks)
    if (Num(m["value"]) > 0) take(BinOf(bins, Num(m["value"])));
  l.columns = 1 + (l.lo < 0 ? 0 : l.hi - l.lo + 1);
  l.legend = noise ? 18 : 0;
  l.top = 24 + l.legend + 13 * static_cast<int>(marks.size());
  l.col_w = std::min(noise ? 80.0 : 64.0, (KldLayout::kWidth - KldLayout::kLeft - 16 - l.gap) / l.columns);
  l.height = l.top + KldLayout::kPlotH + KldLayout::kBottom;
  l.base = l.top + KldLayout::kPlotH;
  return l;
}

// One column: the A/B bar (and the A/A bar beside it) and the label.
std::string KldColumn(const KldLayout& l, int col, double count, double noise_count, const std::string& label,
                      const std::string& title, const std::string& cls) {
  const double x = l.ColX(col) + 3, w = l.noise ? (l.col_w - 8) / 2 : l.col_w - 6;
  std::string g;
  auto one = [&](double bx, double c, const std::string& what, const std::string& bar_cls) {
    const double h = l.H(c);
    g += "<g><title>" + HtmlEscape(what + title + ": " + FormatDouble("%.0f", c) + " positions") + "</title>";
    g += "<rect x=\"" + F(bx) + "\" y=\"" + F(l.base - h) + "\" width=\"" + F(w) + "\" height=\"" + F(h) +
         "\" class=\"" + bar_cls + "\"/>";
    if (c > 0) g += Text(bx + w / 2, l.base - h - 4, "value", "middle", FormatDouble("%.0f", c));
    g += "</g>";
  };
  one(x, count, l.noise ? "A/B, " : "", cls);
  if (l.noise) one(x + w + 2, noise_count, "A/A, ", "bar noise-bar");
  g += Text(l.ColX(col) + l.col_w / 2, l.base + 16, "axis", "middle", label);
  return g;
}

// The zero bar, then a column per decade shown.
std::string KldColumns(const KldLayout& l) {
  std::string s = KldColumn(l, 0, l.zero, l.noise_zero, "0", "KLD exactly 0 (identical candidates)", "bar zero-bar");
  for (int b = l.lo; l.lo >= 0 && b <= l.hi; ++b) {
    const json& bin = l.bins[b];
    const double from = Num(bin["from"]);
    const bool last = !bin["to"].is_number();
    const std::string label = b == 0 ? "<" + PowerOfTen(Num(bin["to"])) : last ? "≥" + PowerOfTen(from)
                                                                               : PowerOfTen(from);
    const std::string title = b == 0 ? "above 0, below " + PowerOfTen(Num(bin["to"]))
                              : last ? "from " + PowerOfTen(from) + " up"
                                     : "[" + PowerOfTen(from) + ", " + PowerOfTen(Num(bin["to"])) + ")";
    s += KldColumn(l, 1 + b - l.lo, Num(bin["count"]), l.noise ? Num(l.noise_bins[b]["count"]) : 0, label, title,
                   "bar");
  }
  return s;
}

// A vertical line per mark (mean, p99, a limit) at its place on the log axis.
std::string KldMarks(const KldLayout& l, const json& marks) {
  std::string s;
  int j = 0;
  for (const auto& m : marks) {
    const double v = Num(m["value"]);
    double x = l.ColX(0) + l.col_w / 2;  // a value of 0 sits on the zero bar
    if (v > 0 && l.lo >= 0) {
      const size_t b = BinOf(l.bins, v);
      const json& bin = l.bins[b];
      double frac = 0.5;
      if (Num(bin["from"]) > 0 && bin["to"].is_number())
        frac = (std::log10(v) - std::log10(Num(bin["from"]))) /
               (std::log10(Num(bin["to"])) - std::log10(Num(bin["from"])));
      x = l.ColX(1 + static_cast<int>(b) - l.lo) + std::max(0.0, std::min(1.0, frac)) * l.col_w;
    }
    const bool limit = m.value("limit", false);
    const double ty = 14 + l.legend + 13 * j;
    s += Line(x, ty + 3, x, l.base, limit ? "limit" : "grid");
    s += Text(x, ty, limit ? "limit-text" : "axis", x > KldLayout::kWidth * 0.7 ? "end" : "start",
              JsonText(m["name"]) + " " + FormatDouble("%.3g", v));
    ++j;
  }
  return s;
}

}  // namespace

std::string DeltaChart(const json& rows, std::optional<double> noise_mde) {
  const int kWidth = 960, kLabelW = 214, kPlotX = 226, kPlotW = 400, kRowH = 26, kTop = 26;
  double range = 0.01;  // at least +-1 pp
  for (const auto& r : rows)
    for (const char* k : {"delta", "ci_low", "ci_high"}) range = std::max(range, std::fabs(Num(r[k])));
  if (noise_mde) range = std::max(range, *noise_mde);
  const double range_pp = std::min(100.0, range * 100);
  double step = 50;
  for (double s : {0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 25.0, 50.0})
    if (range_pp / s <= 4) {
      step = s;
      break;
    }
  const double lim = std::min(100.0, std::ceil(range_pp / step - 1e-9) * step);
  auto X = [&](double fraction) {
    const double pp = std::max(-lim, std::min(lim, fraction * 100));
    return kPlotX + kPlotW * (pp + lim) / (2 * lim);
  };
  const int plot_bottom = kTop + static_cast<int>(rows.size()) * kRowH;
  const int height = plot_bottom + 30;
  std::string s = SvgOpen(kWidth, height, "B minus A with 95 % intervals", "chart wide");
  if (noise_mde && *noise_mde > 0) {
    s += "<rect x=\"" + F(X(-*noise_mde)) + "\" y=\"" + std::to_string(kTop - 4) + "\" width=\"" +
         F(X(*noise_mde) - X(-*noise_mde)) + "\" height=\"" + std::to_string(plot_bottom - kTop + 4) +
         "\" class=\"band\"><title>within noise: |Δ| below " + HtmlEscape(FormatPoints(*noise_mde, "%.2f")) +
         " pp (the A/A pair's detectable difference)</title></rect>";
  }
  for (double t = -lim; t <= lim + 1e-9; t += step) {
    s += Line(X(t / 100), kTop - 6, X(t / 100), plot_bottom, std::fabs(t) < 1e-9 ? "zero" : "grid");
    s += Text(X(t / 100), kTop - 10, "axis", "middle", FormatDouble(std::fabs(t) < 1e-9 ? "%.0f" : "%+g", t));
  }
  int i = 0;
  for (const auto& r : rows) {
    const double y = kTop + i * kRowH + 13;
    const double d = Num(r["delta"]), lo = Num(r["ci_low"], d), hi = Num(r["ci_high"], d);
    const std::string tone = hi < 0 ? " bad" : lo > 0 ? " good" : "";
    const std::string name = JsonText(r["name"]);
    const std::string value = FormatPoints(d) + " pp [" + FormatPoints(lo) + ", " + FormatPoints(hi) + "] · n " +
                              JsonText(r["n"]) + " · p " + FormatPValue(Num(r["p_value"], 1));
    s += "<g><title>" + HtmlEscape(name + ": " + value) + "</title>";
    s += Text(kLabelW, y + 4, "label", "end", Utf8Shortened(name, 34));
    s += Line(X(lo), y, X(hi), y, "ci" + tone);
    s += Line(X(lo), y - 5, X(lo), y + 5, "ci" + tone);
    s += Line(X(hi), y - 5, X(hi), y + 5, "ci" + tone);
    s += "<circle cx=\"" + F(X(d)) + "\" cy=\"" + F(y) + "\" r=\"4.5\" class=\"dot" + tone + "\"/>";
    s += Text(kPlotX + kPlotW + 12, y + 4, "label", "start", value) + "</g>";
    ++i;
  }
  std::string caption = "Δ = B − A, percentage points, with its 95 % interval";
  if (noise_mde && *noise_mde > 0) caption += "; shaded: within noise (±" + FormatPoints(*noise_mde, "%.2f") + " pp)";
  s += Text(kPlotX + kPlotW / 2.0, height - 6, "axis", "middle", caption);
  return s + "</svg>";
}

std::string KldHistogramChart(const json& histogram, const json& marks, const json& noise_histogram) {
  const KldLayout l = LayOutKld(histogram, marks, noise_histogram);
  const int kLeft = KldLayout::kLeft;
  std::string s = SvgOpen(KldLayout::kWidth, l.height, "positions by KLD, one bar per decade");
  if (l.noise) {
    s += "<rect x=\"" + F(kLeft) + "\" y=\"6\" width=\"12\" height=\"10\" class=\"bar\"/>";
    s += Text(kLeft + 18, 15, "label", "start", "A/B");
    s += "<rect x=\"" + F(kLeft + 60) + "\" y=\"6\" width=\"12\" height=\"10\" class=\"bar noise-bar\"/>";
    s += Text(kLeft + 78, 15, "label", "start", "A/A (the noise pair)");
  }
  for (double f : {0.0, 0.5, 1.0}) {
    const double y = l.base - KldLayout::kPlotH * f;
    s += Line(kLeft - 4, y, l.ColX(l.columns - 1) + l.col_w, y, "grid");
    s += Text(kLeft - 8, y + 4, "axis", "end", FormatDouble("%.0f", l.max_count * f));
  }
  s += KldColumns(l);
  s += KldMarks(l, marks);
  s += Text(kLeft - 4, l.height - 6, "axis", "start",
            "KLD(A‖B) per position, nats: one bar per decade [from, next); the first bar: exactly 0");
  return s + "</svg>";
}

}  // namespace evalrun
