#include "tests/support/jsonl_file.h"

#include <fstream>
#include <sstream>

#include "evals/base/json_bounds.h"

namespace evalrun::testing {

std::vector<nlohmann::json> JsonLines::values() const {
  std::vector<nlohmann::json> out;
  out.reserve(lines.size());
  for (const JsonLine& l : lines) out.push_back(l.value);
  return out;
}

namespace {

// One line's value, or "" and *what when it is not JSON within bounds.
bool ParseLine(const std::string& line, const std::string& where, nlohmann::json* out, std::string* what) {
  const Status bounds = CheckJsonBounds(line, where);
  if (!bounds.ok()) {
    *what = bounds.message();
    return false;
  }
  try {
    *out = nlohmann::json::parse(line);
    return true;
  } catch (const nlohmann::json::exception& e) {
    *what = where + ": " + e.what();
    return false;
  }
}

}  // namespace

JsonLines SplitJsonLines(const std::string& text, const std::string& source) {
  JsonLines out;
  int number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    JsonLine row{number, nullptr};
    std::string what;
    if (ParseLine(line, source + ":" + std::to_string(number), &row.value, &what))
      out.lines.push_back(std::move(row));
    else
      out.error += (out.error.empty() ? "" : "\n") + what;
  }
  return out;
}

JsonLines LoadJsonLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {{}, path + ": cannot open"};
  std::stringstream text;
  text << in.rdbuf();
  return SplitJsonLines(text.str(), path);
}

}  // namespace evalrun::testing
