// A part's own view in `evalrun compare`, listed in its benchmark's row of
// the table (evals/benchmarks/table.h: Benchmark::compare_sections), so that
// compare names no part.
//
// `add` puts the part's view into its compare document under the part's
// name (part_doc[part]) and may put lines first in the notes; the
// renderers show that view inside the part's section, and the document's
// changes right under the verdict.
//
// Thread-safety: registration happens during static initialisation; the
// lookups are read-only after main starts.
#ifndef EVALRUN_EVALS_PUBLISH_COMPARE_SECTION_H_
#define EVALRUN_EVALS_PUBLISH_COMPARE_SECTION_H_

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

struct CompareSection {
  std::string part;
  std::function<void(const nlohmann::json& results_a, const nlohmann::json& results_b, nlohmann::json* part_doc,
                     nlohmann::json* notes)>
      add;
  // The view (part_doc[part]) inside the part's section; "" for none.
  std::function<std::string(const nlohmann::json& view)> part_markdown, part_html;
  // The whole comparison document's lines for this part under the verdict.
  std::function<std::string(const nlohmann::json& cmp)> doc_markdown, doc_html;
};

// For part `part`'s compare document: its registered section's `add`, if any.
void AddCompareSection(const std::string& part, const nlohmann::json& results_a, const nlohmann::json& results_b,
                       nlohmann::json* part_doc, nlohmann::json* notes);

// The view of part document `p` (p["part"]'s section); "" for none.
std::string CompareSectionMarkdown(const nlohmann::json& p);
std::string CompareSectionHtml(const nlohmann::json& p);

// Registers `section` (a second one of one part aborts: a programming
// error). Called by the benchmark table's registrar (evals/benchmarks/table.h).
void RegisterCompareSection(CompareSection section);

// Every registered section's document lines (by part name).
std::string CompareSectionsDocMarkdown(const nlohmann::json& cmp);
std::string CompareSectionsDocHtml(const nlohmann::json& cmp);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_COMPARE_SECTION_H_
