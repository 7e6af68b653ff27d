// Reading the Markdown tables the publishers write (evals/publish/
// table_text.h MarkdownTable: every column padded to its widest cell), for
// tests.
//
//   UnpadTables: every table line ("| ... |") with each cell's padding taken
//     off ("| a | 1 |", an empty cell "|  |"), the rest of the text as it
//     is; so a test can look for a row by its cells whatever the widths.
//   TablesAligned: whether in every table (a run of lines starting with
//     '|') all lines have the same number of cells and each column the same
//     width in code points on every line, the rule line included; *why
//     names the first line that is not.
//
// Cells are split at '|' not preceded by '\' (MarkdownCell escapes '|').
// Thread-safety: pure functions.
#ifndef EVALRUN_TESTS_SUPPORT_MARKDOWN_TABLES_H_
#define EVALRUN_TESTS_SUPPORT_MARKDOWN_TABLES_H_

#include <string>
#include <vector>

namespace evalrun::testing {

std::string UnpadTables(const std::string& markdown);
bool TablesAligned(const std::string& markdown, std::string* why);
// The cells of one table line, as written (padding kept).
std::vector<std::string> TableCells(const std::string& line);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_MARKDOWN_TABLES_H_
