// PunktModel::Load: the English model's four parameter files (punkt.h says
// their format), read into the sets and maps the tokenizer looks up.
#include "scorers/punkt.h"

#include <string>
#include <string_view>

#include "evals/base/files.h"

namespace evalrun {

namespace {

// Reads `path` and calls row(line_number, line) for each non-blank line
// (a trailing "\r" removed). Stops at the first failing row.
template <typename RowFn>
Status ForEachRow(const std::string& path, RowFn row) {
  std::string data;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &data));
  size_t rows = 0;
  size_t line_no = 0;
  size_t start = 0;
  while (start < data.size()) {
    size_t nl = data.find('\n', start);
    if (nl == std::string::npos) nl = data.size();
    std::string_view line(data.data() + start, nl - start);
    ++line_no;
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    EVALRUN_RETURN_IF_ERROR(row(line_no, line));
    ++rows;
  }
  if (rows == 0) return Status::InvalidInput(path + ": no rows (expected at least one)");
  return Status::Ok();
}

Status RowError(const std::string& path, size_t line_no, const std::string& what) {
  return Status::InvalidInput(path + ":" + std::to_string(line_no) + ": " + what);
}

}  // namespace

Status PunktModel::Load(const std::string& dir, std::unique_ptr<PunktModel>* out) {
  std::unique_ptr<PunktModel> model(new PunktModel());

  auto word_list = [](const std::string& path, StringSet* set) {
    return ForEachRow(path, [&](size_t line_no, std::string_view line) {
      if (line.find('\t') != std::string_view::npos) {
        return RowError(path, line_no, "expected one word per line, found a tab");
      }
      set->emplace(line);
      return Status::Ok();
    });
  };
  EVALRUN_RETURN_IF_ERROR(word_list(dir + "/abbrev_types.txt", &model->abbrev_types_));
  EVALRUN_RETURN_IF_ERROR(word_list(dir + "/sent_starters.txt", &model->sent_starters_));

  const std::string colloc_path = dir + "/collocations.tab";
  EVALRUN_RETURN_IF_ERROR(ForEachRow(colloc_path, [&](size_t line_no, std::string_view line) {
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0 || tab + 1 == line.size() ||
        line.find('\t', tab + 1) != std::string_view::npos) {
      return RowError(colloc_path, line_no,
                      "expected \"first<TAB>second\" with two non-empty words");
    }
    model->collocations_.emplace_back(std::string(line.substr(0, tab)),
                                      std::string(line.substr(tab + 1)));
    return Status::Ok();
  }));

  const std::string ortho_path = dir + "/ortho_context.tab";
  EVALRUN_RETURN_IF_ERROR(ForEachRow(ortho_path, [&](size_t line_no, std::string_view line) {
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0 ||
        line.find('\t', tab + 1) != std::string_view::npos) {
      return RowError(ortho_path, line_no, "expected \"word<TAB>flags\"");
    }
    const std::string_view flags = line.substr(tab + 1);
    int value = 0;
    if (flags.empty() || flags.size() > 3) {
      return RowError(ortho_path, line_no, "expected flags as a decimal number in [0, 127]");
    }
    for (char c : flags) {
      if (c < '0' || c > '9') {
        return RowError(ortho_path, line_no, "expected flags as a decimal number in [0, 127]");
      }
      value = value * 10 + (c - '0');
    }
    if (value > 127)
      return RowError(ortho_path, line_no, "expected flags as a decimal number in [0, 127]");
    if (!model->ortho_context_.emplace(std::string(line.substr(0, tab)), value).second) {
      return RowError(ortho_path, line_no,
                      "duplicate word \"" + std::string(line.substr(0, tab)) + "\"");
    }
    return Status::Ok();
  }));

  *out = std::move(model);
  return Status::Ok();
}

}  // namespace evalrun
