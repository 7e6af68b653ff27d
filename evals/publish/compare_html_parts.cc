#include "evals/publish/compare_html_parts.h"

#include <cctype>

#include "evals/publish/html_text.h"

namespace evalrun {

using nlohmann::json;

std::string CompareAnchor(const std::string& part) {
  std::string s = "part-";
  for (unsigned char c : part) s += std::isalnum(c) ? static_cast<char>(c) : '-';
  return s;
}

std::string HtmlBadge(const std::string& cls, const std::string& text) {
  return "<span class=\"badge " + cls + "\">" + HtmlEscape(text) + "</span>";
}

std::string CompareVerdictBadge(const std::string& verdict) {
  if (verdict == "regression") return HtmlBadge("b-bad", verdict);
  if (verdict == "improvement" || verdict == "within thresholds") return HtmlBadge("b-ok", verdict);
  return HtmlBadge("b-info", verdict);
}

std::string CompareNoiseBadge(const json& part_doc) {
  const json& w = part_doc.value("within_noise", json());
  if (!w.is_boolean()) return "";
  return " " + HtmlBadge(w.get<bool>() ? "b-noise" : "b-info", w.get<bool>() ? "within noise" : "beyond noise");
}

std::string HtmlTd(const std::string& s, bool num) {
  return std::string(num ? "<td class=\"num\">" : "<td>") + s + "</td>";
}

std::string HtmlTh(const std::string& s, bool num) {
  return std::string(num ? "<th class=\"num\">" : "<th>") + s + "</th>";
}

}  // namespace evalrun
