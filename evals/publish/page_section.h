// A part's own section of the report page, listed in its benchmark's row
// of the table (evals/benchmarks/table.h: Benchmark::page_sections), so
// that publishing names no part.
//
// A part whose section `replaces_row` has no row of the results table: it
// has no score to show there.
//
// Thread-safety: registration happens during static initialisation; the
// lookups are read-only after main starts.
#ifndef EVALRUN_EVALS_PUBLISH_PAGE_SECTION_H_
#define EVALRUN_EVALS_PUBLISH_PAGE_SECTION_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// Where on the page: with the results (after the kinds' own tables that
// follow the results table, before the by-length and category tables), or
// after the repeat's section (before the setup).
enum class PagePlace { kWithTheResults, kAfterTheRepeat };

struct PageSection {
  std::string part;  // the part whose results.json object it shows
  PagePlace place = PagePlace::kAfterTheRepeat;
  // Its place among the page sections of its place (smaller first; then by part name).
  int order = 0;
  bool replaces_row = true;
  // The section's model from the whole results.json; null when the run has
  // none of it.
  std::function<nlohmann::json(const nlohmann::json& results)> model;
  // "" for a null model.
  std::function<std::string(const nlohmann::json& model)> markdown;
  std::function<std::string(const nlohmann::json& model)> html;
};

// Registers `section` (a second one of one part aborts: a programming
// error). Called by the benchmark table's registrar (evals/benchmarks/table.h).
void RegisterPageSection(PageSection section);

// Every registered page section, by order then part name.
std::vector<const PageSection*> PageSections();

// Whether part `name`'s row is left out of the results table.
bool PageSectionReplacesRow(std::string_view name);

// The page sections' models, {part: model}, for the report model.
nlohmann::json PageSectionModels(const nlohmann::json& results);

// The Markdown / HTML of the page sections at `place`, from the models
// above, in order.
std::string RenderPageSectionsMarkdown(const nlohmann::json& models, PagePlace place);
std::string RenderPageSectionsHtml(const nlohmann::json& models, PagePlace place);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_PAGE_SECTION_H_
