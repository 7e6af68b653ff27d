// Text made safe for the report's HTML page (evals/publish/report_html.h).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_HTML_TEXT_H_
#define EVALRUN_EVALS_PUBLISH_HTML_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun {

// & < > " ' as entities.
std::string HtmlEscape(std::string_view s);

// `j` as JSON that is safe inside <script type="application/json">...</script>:
// '<', '>', '&', U+2028 and U+2029 written as \u escapes, so no text can
// close the block. JSON.parse of the block's text gives `j` back.
std::string JsonForScriptBlock(const nlohmann::json& j);

// The first at most `max_bytes` bytes of `s`, never splitting a UTF-8
// sequence; *cut tells whether anything was left out.
std::string Utf8Prefix(std::string_view s, size_t max_bytes, bool* cut);

// Utf8Prefix of `s`, with "…" after it when something was left out (a label
// or an answer shown short).
std::string Utf8Shortened(std::string_view s, size_t max_bytes);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_HTML_TEXT_H_
