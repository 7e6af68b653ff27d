#include "evals/base/jsonl.h"
#include "evals/base/json_bounds.h"

namespace evalrun {

Status ParseJsonl(std::string_view text, const std::string& source,
                  const std::function<Status(int, const nlohmann::json&)>& row) {
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    ++line_no;
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    nlohmann::json j;
    EVALRUN_RETURN_IF_ERROR(ParseJsonLine(line, source + ":" + std::to_string(line_no), &j));
    EVALRUN_RETURN_IF_ERROR(row(line_no, j));
  }
  return Status::Ok();
}

Status ParseJsonLine(std::string_view line, const std::string& where, nlohmann::json* out) {
  EVALRUN_RETURN_IF_ERROR(CheckJsonBounds(line, where));
  *out = nlohmann::json::parse(line, nullptr, false);
  if (out->is_discarded()) return Status::InvalidInput(where + ": not a JSON line");
  return Status::Ok();
}

std::string DumpLine(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace evalrun
