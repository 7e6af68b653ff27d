#include "evals/tasks/task_rows.h"

#include "datasets/csv.h"
#include "evals/base/files.h"
#include "evals/base/jsonl.h"

namespace evalrun {
namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Status ReadCsvRows(const std::string& text, const std::string& shown, std::vector<TaskRow>* rows) {
  std::vector<std::vector<std::string>> records;
  std::vector<size_t> lines;
  Status st = ParseCsv(text, &records, &lines);
  if (!st.ok()) return Status::InvalidInput(shown + ": " + st.message());
  if (records.empty()) return Status::InvalidInput(shown + ": no header row");
  const std::vector<std::string>& header = records[0];
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != header.size())
      return Status::InvalidInput(shown + ":" + std::to_string(lines[r]) + ": " + std::to_string(records[r].size()) +
                                  " fields, the header has " + std::to_string(header.size()));
    TaskRow row{nlohmann::json::object(), static_cast<int>(lines[r])};
    for (size_t c = 0; c < header.size(); ++c) row.fields[header[c]] = records[r][c];
    rows->push_back(std::move(row));
  }
  return Status::Ok();
}

}  // namespace

Status ReadTaskRows(const std::string& path, const std::string& shown, std::vector<TaskRow>* rows) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  if (EndsWith(path, ".csv")) return ReadCsvRows(text, shown, rows);
  return ParseJsonl(text, shown, [&](int line, const nlohmann::json& j) {
    if (!j.is_object()) return Status::InvalidInput(shown + ":" + std::to_string(line) + ": expected a JSON object");
    rows->push_back({j, line});
    return Status::Ok();
  });
}

bool FieldText(const nlohmann::json& row, const std::string& name, std::string* out) {
  auto it = row.find(name);
  if (it == row.end()) return false;
  if (it->is_string()) *out = it->get<std::string>();
  else if (it->is_number() || it->is_boolean()) *out = it->dump();
  else return false;
  return true;
}

Status RenderTemplate(const std::string& tmpl, const nlohmann::json& row,
                      const std::vector<std::pair<std::string, std::string>>& extra, const std::string& where,
                      std::string* out) {
  out->clear();
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      *out += c;
      ++i;
      continue;
    }
    if (c != '{') {
      *out += c;
      continue;
    }
    const size_t end = tmpl.find('}', i);
    if (end == std::string::npos) return Status::InvalidInput(where + ": a '{' is never closed");
    const std::string name = tmpl.substr(i + 1, end - i - 1);
    bool found = false;
    for (const auto& [k, v] : extra)
      if (k == name) {
        *out += v;
        found = true;
        break;
      }
    std::string text;
    if (!found && !FieldText(row, name, &text))
      return Status::InvalidInput(where + ": the template names {" + name + "}, which the row lacks");
    if (!found) *out += text;
    i = end;
  }
  return Status::Ok();
}

}  // namespace evalrun
