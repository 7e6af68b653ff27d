#include "evals/publish/table_notes.h"

#include <algorithm>

#include "evals/publish/html_text.h"
#include "evals/publish/table_text.h"

namespace evalrun {

std::string TableNotes::Refs(const std::vector<std::string>& texts) {
  std::string refs;
  for (const std::string& t : texts) {
    if (t.empty()) continue;
    auto it = std::find(texts_.begin(), texts_.end(), t);
    if (it == texts_.end()) it = texts_.insert(texts_.end(), t);
    refs += (refs.empty() ? "" : ", ") + std::to_string(it - texts_.begin() + 1);
  }
  return refs;
}

std::string TableNotes::Html() const {
  if (texts_.empty()) return "";
  std::string h = "<ol class=\"notes\">";
  for (const std::string& t : texts_) h += "<li>" + HtmlEscape(t) + "</li>";
  return h + "</ol>";
}

std::string TableNotes::Markdown() const {
  if (texts_.empty()) return "";
  std::string o = "Notes:\n\n";
  for (size_t i = 0; i < texts_.size(); ++i) o += std::to_string(i + 1) + ". " + MarkdownCell(texts_[i]) + "\n";
  return o + "\n";
}

}  // namespace evalrun
