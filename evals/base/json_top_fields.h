// The raw text of a few top-level fields of one JSON object, found without
// building the object: a scan for keys that skips strings and nested values.
//
// For a first pass over a large JSON Lines file that needs two fields of
// every row and the whole of only some (a dataset of 12,032 rows scanned for
// id and category, 600 of them parsed). Each row used afterwards must still be
// parsed whole (ParseJsonLine): the scan checks the structure it walks
// (strings closed, brackets matched, keys and values in place) but not the
// text of values it skips (numbers, escapes, literals).
//
// Thread-safety: pure function.
#ifndef EVALRUN_EVALS_BASE_JSON_TOP_FIELDS_H_
#define EVALRUN_EVALS_BASE_JSON_TOP_FIELDS_H_

#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

// For each of `keys`, the raw JSON text of its value at the top level of the
// object `line` (a string keeps its quotes and escapes; decode it with
// nlohmann::json::parse), or an empty view when the key is absent. Keys are
// compared as written (a key spelled with \u escapes is not found). Returns
// false with *error when `line` is not one JSON object as far as the scan
// can tell ("not a JSON object", "unterminated string at byte 12", "a
// second \"category\" at byte 80", ...).
bool ScanTopLevelFields(std::string_view line, const std::vector<std::string_view>& keys,
                        std::vector<std::string_view>* values, std::string* error);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BASE_JSON_TOP_FIELDS_H_
