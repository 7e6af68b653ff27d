#include "evals/base/jsonl.h"
#include "evals/base/json_bounds.h"

namespace evalrun {

Status ForEachJsonlLine(std::string_view text, const std::function<Status(int, std::string_view)>& line) {
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    ++line_no;
    std::string_view one = text.substr(pos, end - pos);
    pos = end + 1;
    if (!one.empty() && one.back() == '\r') one.remove_suffix(1);
    if (one.find_first_not_of(" \t") == std::string_view::npos) continue;
    EVALRUN_RETURN_IF_ERROR(line(line_no, one));
  }
  return Status::Ok();
}

Status ParseJsonl(std::string_view text, const std::string& source,
                  const std::function<Status(int, const nlohmann::json&)>& row) {
  return ForEachJsonlLine(text, [&](int line_no, std::string_view line) {
    nlohmann::json j;
    EVALRUN_RETURN_IF_ERROR(ParseJsonLine(line, source + ":" + std::to_string(line_no), &j));
    return row(line_no, j);
  });
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
