// SectionTables (kind_view.h) as the renderers show them, from their JSON
// ({title, columns, rows, note}, as the report model and compare's document
// hold them): Markdown tables under "### <title>", and HTML tables under
// <h3>, every cell escaped. An entry that is not such an object is skipped.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_SECTION_TABLES_H_
#define EVALRUN_EVALS_PUBLISH_SECTION_TABLES_H_

#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

std::string SectionTablesMarkdown(const nlohmann::json& tables);
std::string SectionTablesHtml(const nlohmann::json& tables);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_SECTION_TABLES_H_
