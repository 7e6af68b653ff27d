#include "evals/publish/run_folder.h"
#include "evals/base/json_bounds.h"

#include <algorithm>
#include <filesystem>

#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "evals/run/verdict_kind.h"
#include "evals/run/sample_codec.h"

namespace evalrun {
namespace fs = std::filesystem;

std::string TrimRunDir(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string SamplesPath(const RunFolder& run, const std::string& part) {
  return run.dir + "/" + part + "/samples.jsonl";
}

std::string TornTailNote(const std::string& path) {
  return path + ": a torn last line (crash mid-write) was skipped";
}

Status LoadRunFolder(const std::string& dir_in, RunFolder* out) {
  *out = RunFolder();
  const std::string dir = TrimRunDir(dir_in);
  out->dir = dir;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::NotFound(dir + ": no such folder");
  if (!fs::is_directory(dir, ec))
    return Status::InvalidInput(dir + ": not a folder (expected a run folder runs/<job>)");
  const std::string res_path = dir + "/results.json";
  if (!fs::exists(res_path, ec)) {
    const bool started = fs::exists(dir + "/run.json", ec);
    return Status::NotFound(dir + ": not an evalrun run folder: " + res_path + " not found" +
                            (started ? " (run.json is there: results.json is written when the first part finishes)"
                                     : ""));
  }
  std::string text;
  Status st = ReadFileToString(res_path, &text);
  if (!st.ok()) return st;
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, res_path, &out->results));
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(out->results, res_path, ""));
  const auto& schema = JsonAt(out->results, {"schema"});
  if (!schema.is_string() || schema.get<std::string>() != kResultsSchema)
    return Status::InvalidInput(res_path + ": schema: expected \"" + kResultsSchema + "\", got " +
                                (schema.is_null() ? std::string("nothing") : DescribeJsonValue(schema)));
  const auto& parts = JsonAt(out->results, {"parts"});
  if (!parts.is_object())
    return Status::InvalidInput(res_path + ": parts: expected an object, got " + DescribeJsonValue(parts));
  for (auto it = parts.begin(); it != parts.end(); ++it) {
    if (!it->is_object())
      return Status::InvalidInput(res_path + ": parts." + it.key() + ": expected an object, got " +
                                  DescribeJsonValue(*it));
    out->parts.push_back(it.key());
  }
  // nlohmann::json keeps object keys sorted; order the parts as a run takes
  // them (the registry's run order), unknown names after.
  std::vector<std::string> ordered;
  for (const auto& n : KnownPartNames())
    if (std::find(out->parts.begin(), out->parts.end(), n) != out->parts.end()) ordered.push_back(n);
  for (const auto& n : out->parts)
    if (std::find(ordered.begin(), ordered.end(), n) == ordered.end()) ordered.push_back(n);
  out->parts = ordered;

  const std::string run_path = dir + "/run.json";
  if (fs::exists(run_path, ec)) {
    st = ReadFileToString(run_path, &text);
    if (!st.ok()) return st;
    EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, run_path, &out->run));
    EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(out->run, run_path, ""));
  }
  return Status::Ok();
}

Status DescribeFolderPart(const RunFolder& run, const std::string& part, FolderPart* out) {
  *out = FolderPart();
  out->name = part;
  out->display_name = PartDisplayName(part);
  out->definition = FindPartDefinition(part);
  const nlohmann::json& kind = JsonAt(run.results, {"parts", part.c_str(), "kind"});
  if (kind.is_null()) {
    if (out->definition) out->kind = out->definition->verdict;
    return Status::Ok();
  }
  VerdictKind k{""};
  if (!kind.is_string() || !VerdictKindByName(kind.get<std::string>(), &k)) {
    std::string known;
    for (VerdictKind v : RegisteredVerdictKinds()) known += (known.empty() ? "\"" : ", \"") + VerdictKindName(v) + "\"";
    return Status::InvalidInput(run.dir + "/results.json: parts." + part + ".kind: expected a verdict kind this " +
                                "evalrun knows (" + known + "), got " + DescribeJsonValue(kind));
  }
  out->kind = k;
  return Status::Ok();
}

Status ReadRecordsReadOnly(const std::string& path, VerdictKind kind, std::vector<SampleRecord>* records,
                           bool* torn_tail) {
  records->clear();
  *torn_tail = false;
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path + ": not found");
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  // A last line without its newline that does not parse was torn by a crash.
  size_t last_nl = text.rfind('\n');
  size_t tail_start = last_nl == std::string::npos ? 0 : last_nl + 1;
  if (tail_start < text.size()) {
    // Nested past the bound is not a tear: ParseJsonl below names the line.
    const std::string_view tail = std::string_view(text).substr(tail_start);
    if (CheckJsonBounds(tail, path).ok() && nlohmann::json::parse(tail, nullptr, false).is_discarded()) {
      *torn_tail = true;
      text.resize(tail_start);
    }
  }
  // Every line parsed first (a line that is not JSON is named before a
  // field of another), then each decoded.
  std::vector<std::pair<int, nlohmann::json>> lines;
  EVALRUN_RETURN_IF_ERROR(ParseJsonl(text, path, [&](int line, const nlohmann::json& j) {
    lines.emplace_back(line, j);
    return Status::Ok();
  }));
  records->reserve(lines.size());
  for (const auto& [line, j] : lines) {
    SampleRecord rec;
    EVALRUN_RETURN_IF_ERROR(DecodeSample(kind, j, path + ":" + std::to_string(line), &rec));
    records->push_back(std::move(rec));
  }
  return Status::Ok();
}

const nlohmann::json& LoadSummaryOf(const nlohmann::json& results) {
  static const nlohmann::json kNull;
  if (!results.is_object()) return kNull;
  for (const char* key : {"load", "noise"}) {
    auto it = results.find(key);
    if (it != results.end() && it->is_object()) return *it;
  }
  return kNull;
}

}  // namespace evalrun
