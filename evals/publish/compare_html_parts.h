// The pieces a part's section of compare's page (compare_html.h) is made
// of: its anchor, the verdict and noise badges, table cells. Shared by
// compare_html.cc and by a kind that renders its own section
// (KindView::ComparePartHtml, kind_view.h), so that its section links,
// and looks, like the others.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_HTML_PARTS_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_HTML_PARTS_H_

#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/json_fields.h"
#include "evals/publish/html_text.h"

namespace evalrun {

// The id of part `part`'s <section>: "part-" and the name, every character
// but ASCII letters and digits as '-'.
std::string CompareAnchor(const std::string& part);

// <span class="badge CLS">text</span>, the text escaped.
std::string HtmlBadge(const std::string& cls, const std::string& text);
// A part's verdict as a badge: red for "regression", green for
// "improvement" and "within thresholds", grey otherwise.
std::string CompareVerdictBadge(const std::string& verdict);
// " " and a "within noise" / "beyond noise" badge from the part document's
// within_noise; "" when it is not a bool.
std::string CompareNoiseBadge(const nlohmann::json& part_doc);

// <td> / <th> around `s` (HTML, used as it is); `num`: right-aligned.
std::string HtmlTd(const std::string& s, bool num = false);
std::string HtmlTh(const std::string& s, bool num = false);

// The short names the sections are written with (`using namespace
// compare_html_short;` inside a .cc's own namespace).
namespace compare_html_short {
inline std::string Td(const std::string& s, bool num = false) { return HtmlTd(s, num); }
inline std::string Th(const std::string& s, bool num = false) { return HtmlTh(s, num); }
inline std::string Badge(const std::string& cls, const std::string& text) { return HtmlBadge(cls, text); }
inline std::string Anchor(const std::string& part) { return CompareAnchor(part); }
inline std::string VerdictBadge(const std::string& verdict) { return CompareVerdictBadge(verdict); }
inline std::string NoiseBadge(const nlohmann::json& part) { return CompareNoiseBadge(part); }
inline std::string E(const nlohmann::json& v) { return HtmlEscape(JsonText(v)); }
inline std::string Esc(const std::string& s) { return HtmlEscape(s); }
}  // namespace compare_html_short

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_HTML_PARTS_H_
