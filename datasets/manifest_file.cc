#include "datasets/manifest_file.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "datasets/fetch_plan.h"
#include "evals/base/json_fields.h"

namespace evalrun {
namespace {

bool IsNameChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'; }

bool IsDatasetName(const std::string& n) {
  if (n.empty() || n[0] == '.' || n[0] == '_' || n[0] == '-') return false;
  for (char c : n)
    if (!IsNameChar(c)) return false;
  return true;
}

bool IsHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// "<name>/a/b.jsonl": under the dataset's folder of the data dir, every part
// a plain name.
bool IsUnder(const std::string& path, const std::string& name) {
  if (path.compare(0, name.size() + 1, name + "/") != 0 || path.find('\\') != std::string::npos) return false;
  size_t at = name.size() + 1;
  while (at <= path.size()) {
    const size_t slash = std::min(path.find('/', at), path.size());
    const std::string part = path.substr(at, slash - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = slash + 1;
  }
  return true;
}

Status ParseFileEntry(const nlohmann::json& e, const std::string& src, const std::string& at, Manifest* m) {
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(e, src, at));
  JsonFields j(e, src, at);
  // A mistyped key is named first: a near miss says more than "missing".
  j.Allow({"path", "sha256", "rows", "bytes", "optional", "note", "fetch_group", "format", "members", "source"});
  EVALRUN_RETURN_IF_ERROR(j.Finish());
  ManifestFile f;
  std::string group, format;
  nlohmann::json members;
  EVALRUN_RETURN_IF_ERROR(j.String("path", &f.path, true));
  EVALRUN_RETURN_IF_ERROR(j.String("sha256", &f.sha256, true));
  EVALRUN_RETURN_IF_ERROR(j.IntIn("rows", 0, JsonFields::kNoLimit, &f.rows));
  EVALRUN_RETURN_IF_ERROR(j.IntIn("bytes", 0, JsonFields::kNoLimit, &f.bytes));
  EVALRUN_RETURN_IF_ERROR(j.Bool("optional", &f.optional));
  EVALRUN_RETURN_IF_ERROR(j.String("note", &f.note));
  EVALRUN_RETURN_IF_ERROR(j.String("fetch_group", &group));
  EVALRUN_RETURN_IF_ERROR(j.String("format", &format));
  EVALRUN_RETURN_IF_ERROR(j.Raw("members", &members));
  const nlohmann::json* source = nullptr;
  EVALRUN_RETURN_IF_ERROR(j.Object("source", &source, true));
  if (!IsUnder(f.path, m->name))
    return j.Error("path", "expected a file under \"" + m->name + "/\" (the dataset's folder of the data dir), got \"" +
                               f.path + "\"");
  if (!IsHex64(f.sha256)) return j.Error("sha256", "expected 64 lowercase hex digits, got \"" + f.sha256 + "\"");
  f.raw = e;
  fetch_internal::FetchSource parsed;
  EVALRUN_RETURN_IF_ERROR(fetch_internal::ParseSource(*m, f, &parsed));
  m->files.push_back(std::move(f));
  return Status::Ok();
}

}  // namespace

Status LoadManifestFile(const std::string& path, const std::string& tasks_dir, Manifest* out) {
  std::string text;
  EVALRUN_RETURN_IF_ERROR(ReadFileToString(path, &text));
  Manifest m;
  m.source_file = path;
  m.tasks_dir = tasks_dir;
  EVALRUN_RETURN_IF_ERROR(ParseJsonText(text, path, &m.raw, DuplicateKeys::kError));
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(m.raw, path, ""));
  JsonFields j(m.raw, path, "");
  j.Allow({"name", "title", "licence", "homepage", "source_note", "note", "revision", "zip_password", "needs", "files"});
  EVALRUN_RETURN_IF_ERROR(j.Finish());
  std::string note;
  std::vector<std::string> needs;
  EVALRUN_RETURN_IF_ERROR(j.String("name", &m.name, true));
  EVALRUN_RETURN_IF_ERROR(j.String("title", &m.title));
  EVALRUN_RETURN_IF_ERROR(j.String("licence", &m.licence));
  EVALRUN_RETURN_IF_ERROR(j.String("homepage", &m.homepage));
  for (const char* k : {"source_note", "note", "revision", "zip_password"}) EVALRUN_RETURN_IF_ERROR(j.String(k, &note));
  EVALRUN_RETURN_IF_ERROR(j.StringList("needs", &needs));
  nlohmann::json list;
  EVALRUN_RETURN_IF_ERROR(j.Raw("files", &list, true));
  if (!IsDatasetName(m.name))
    return j.Error("name", "expected a name of a-z, 0-9, '.', '_' and '-' (a folder of the data dir), got \"" +
                               m.name + "\"");
  if (!list.is_array() || list.empty())
    return j.Error("files", "expected a non-empty list of files, got " + DescribeJsonValue(list));
  for (size_t i = 0; i < list.size(); ++i)
    EVALRUN_RETURN_IF_ERROR(ParseFileEntry(list[i], path, "files[" + std::to_string(i) + "]", &m));
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace evalrun
