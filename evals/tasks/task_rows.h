// The rows of a task file's data (evals/tasks/task_file.h): a JSONL file
// (one object a line) or a CSV file with a header (every field a string),
// by the file's extension, each row kept with its line for messages; and
// the templates rendered against a row.
//
// Thread-safety: pure functions over plain values.
#ifndef EVALRUN_EVALS_TASKS_TASK_ROWS_H_
#define EVALRUN_EVALS_TASKS_TASK_ROWS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

struct TaskRow {
  nlohmann::json fields;  // an object
  int line = 0;           // where it starts in its file
};

// Reads every row of `path` (shown as `shown` in messages).
Status ReadTaskRows(const std::string& path, const std::string& shown, std::vector<TaskRow>* rows);

// The row's field `name` as text: a string as it is, a number or a bool as
// JSON writes it; false when the row has no such field (or it is null, an
// object or a list).
bool FieldText(const nlohmann::json& row, const std::string& name, std::string* out);

// `tmpl` with each {name} replaced by extra[name] when given, else the
// row's field; {{ and }} are braces. InvalidInput "<where>: the template
// names {x}, which the row lacks" when neither has it.
Status RenderTemplate(const std::string& tmpl, const nlohmann::json& row,
                      const std::vector<std::pair<std::string, std::string>>& extra, const std::string& where,
                      std::string* out);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_TASKS_TASK_ROWS_H_
