// A small RFC 4180 CSV parser: text in, rows of strings out.
//
// Grammar (RFC 4180, section 2, with the common relaxations noted):
//   - fields are separated by ',' and records end with CRLF or LF; the last
//     record may or may not end with a line break;
//   - a field that starts with '"' is quoted: it runs to the next '"' that is
//     not doubled, may contain ',', CR and LF, and "" inside it stands for one
//     '"'; after the closing quote only ',', a line break or the end of the
//     text may follow;
//   - a '"' inside an unquoted field is kept as an ordinary character, and so
//     is a CR that is not followed by LF (relaxation);
//   - an empty line outside quotes is skipped, as pandas.read_csv does by
//     default (relaxation: RFC 4180 would make it a record of one empty field);
//   - a UTF-8 byte order mark at the very start is dropped.
// Records may have different numbers of fields; checking the width against a
// header is the caller's business (see CsvColumnIndices).
//
// Thread-safety: pure functions.
#ifndef EVALRUN_DATASETS_CSV_H_
#define EVALRUN_DATASETS_CSV_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"

namespace evalrun {

// Parses all of `text`. On success replaces *rows with one vector of fields
// per record, in order (the header, if the file has one, is rows[0]); when
// `record_lines` is not null it receives, for each record, the 1-based line
// number on which that record starts (a quoted field may span lines), for
// error messages. On failure (an unterminated quoted field, or a character
// other than ',' or a line break after a closing quote) returns InvalidInput
// with "line N: ..." and leaves the outputs unspecified; callers prefix the
// file name. Runs in time linear in the text. Pure function: thread-safe.
Status ParseCsv(std::string_view text, std::vector<std::vector<std::string>>* rows,
                std::vector<size_t>* record_lines = nullptr);

// Looks up each of `names` in `header` (exact, case-sensitive match) and
// stores their 0-based column indices in *indices, in the order of `names`.
// Returns InvalidInput naming every missing column, or a requested column
// that the header holds more than once (ambiguous). Pure function.
Status CsvColumnIndices(const std::vector<std::string>& header,
                        const std::vector<std::string_view>& names, std::vector<size_t>* indices);

}  // namespace evalrun

#endif  // EVALRUN_DATASETS_CSV_H_
