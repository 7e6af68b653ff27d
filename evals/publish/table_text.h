// Small text helpers for the tables that `evalrun compare` and `evalrun
// report` print (Markdown) and draw (HTML): numbers, lists, table cells and
// the closing "Notes" section.
//
// Thread-safety: pure functions.
#ifndef EVALRUN_EVALS_PUBLISH_TABLE_TEXT_H_
#define EVALRUN_EVALS_PUBLISH_TABLE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// One number through a printf format that takes one double ("%.2f", "%+.2f",
// "%g"); at most 63 bytes.
std::string FormatDouble(const char* format, double x);

// A fraction (0.025) as percentage points through `format` ("%+.2f":
// "+2.50"); a value that rounds to zero at two decimals is written as 0, so
// that no "-0.00" appears.
std::string FormatPoints(double fraction, const char* format = "%+.2f");

// The strings with `sep` between them.
std::string Join(const std::vector<std::string>& v, const std::string& sep);

// How a Markdown table cell is made of a text.
struct MarkdownCellStyle {
  bool tabs_as_spaces = false;  // '\t' becomes ' ' (else kept)
  size_t max_bytes = 0;         // 0: any length; else (>= 3) a longer cell becomes
                                // its first max_bytes - 3 bytes + "..." (bytes, not characters)
};

// `s` as one Markdown table cell: '|' as "\|", '<' and '>' as "&lt;" and
// "&gt;" (no HTML in a published table), '\n' and '\r' as ' '; then `style`.
std::string MarkdownCell(std::string_view s, const MarkdownCellStyle& style = {});

// A Markdown table that also reads aligned as plain text: every column as
// wide as its widest cell (the header's included), every cell padded with
// spaces to that width, so that each line has its '|' at the same places
// whatever the figures' widths (123456.7 or 1.2). Widths count UTF-8 code
// points ("—" is one; a wide East Asian character still counts one).
// Cells are used as given: make them with MarkdownCell first. `align` has
// one char per column, 'r' right-aligned (the rule "--:", the cell padded on
// its left), anything else or missing left-aligned ("---"); a row with fewer
// cells than the header gets empty ones, extra cells are dropped. Ends with
// a newline after the last row.
std::string MarkdownTable(const std::vector<std::string>& header, const std::string& align,
                          const std::vector<std::vector<std::string>>& rows);

// The width MarkdownTable gives `s`: its UTF-8 code points.
size_t TextWidth(std::string_view s);

// "## Notes", a blank line, "- <note>" per note (JSON strings; each made a
// cell with `style`), a blank line; "" when `notes` is empty.
std::string MarkdownNotes(const nlohmann::json& notes, const MarkdownCellStyle& style = {});

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_TABLE_TEXT_H_
