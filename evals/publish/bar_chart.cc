#include "evals/publish/bar_chart.h"

#include <algorithm>

#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"
#include "evals/publish/table_text.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string NumOrDash(const json& v, const char* f) { return v.is_number() ? FormatDouble(f, v.get<double>()) : "—"; }

// Cuts a label for a chart row (the full text goes into <title>).
std::string ShortLabel(const std::string& s, size_t max) {
  return s.size() <= max ? s : Utf8Shortened(s, max - 1);
}

}  // namespace

std::string BarChart(const json& rows) {
  const int kWidth = 760, kLabelW = 250, kBarX = kLabelW + 12, kBarW = 360, kRowH = 24, kTop = 26;
  const int height = kTop + static_cast<int>(rows.size()) * kRowH + 8;
  std::string s = "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(height) +
                  "\" width=\"100%\" role=\"img\">";
  for (int t = 0; t <= 100; t += 25) {
    double x = kBarX + kBarW * t / 100.0;
    s += "<line x1=\"" + FormatDouble("%.1f", x) + "\" y1=\"" + std::to_string(kTop - 6) + "\" x2=\"" +
         FormatDouble("%.1f", x) + "\" y2=\"" + std::to_string(height - 6) + "\" class=\"grid\"/>";
    s += "<text x=\"" + FormatDouble("%.1f", x) + "\" y=\"" + std::to_string(kTop - 10) +
         "\" class=\"axis\" text-anchor=\"middle\">" + std::to_string(t) + "</text>";
  }
  int i = 0;
  for (const auto& r : rows) {
    const int y = kTop + i * kRowH;
    const double v = r["score"].is_number() ? std::max(0.0, std::min(100.0, r["score"].get<double>())) : 0.0;
    const std::string name = JsonText(r["name"]);
    s += "<g><title>" + HtmlEscape(name) + ": " + NumOrDash(r["score"], "%.2f") + " % (n " + NumOrDash(r["n"], "%.0f") +
         ")</title>";
    s += "<text x=\"" + std::to_string(kLabelW) + "\" y=\"" + std::to_string(y + 15) +
         "\" class=\"label\" text-anchor=\"end\">" + HtmlEscape(ShortLabel(name, 38)) + "</text>";
    s += "<rect x=\"" + std::to_string(kBarX) + "\" y=\"" + std::to_string(y + 4) + "\" width=\"" +
         std::to_string(kBarW) + "\" height=\"14\" rx=\"3\" class=\"track\"/>";
    s += "<rect x=\"" + std::to_string(kBarX) + "\" y=\"" + std::to_string(y + 4) + "\" width=\"" +
         FormatDouble("%.1f", kBarW * v / 100) + "\" height=\"14\" rx=\"3\" class=\"bar\"/>";
    s += "<text x=\"" + std::to_string(kBarX + kBarW + 10) + "\" y=\"" + std::to_string(y + 15) +
         "\" class=\"value\">" + NumOrDash(r["score"], "%.1f") + " %<tspan class=\"axis\"> · n " +
         NumOrDash(r["n"], "%.0f") + "</tspan></text></g>";
    ++i;
  }
  return s + "</svg>";
}

}  // namespace evalrun
