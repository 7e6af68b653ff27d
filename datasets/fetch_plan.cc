#include "datasets/fetch_plan.h"

#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "evals/base/json_fields.h"
#include "evals/base/near_miss.h"
#include "evals/server/http.h"

namespace evalrun::fetch_internal {

// ---------------------------------------------------------------------------
// Sources, parsed from the manifest entries.

Status ParseSource(const Manifest& m, const ManifestFile& f, FetchSource* out) {
  const std::string where = ManifestWhere(m);
  const std::string path = "files[" + f.path + "].source";
  if (!f.raw.contains("source"))
    return Status::InvalidInput(where + ": " + f.path + ": no \"source\": evalrun cannot fetch it");
  const nlohmann::json& src = f.raw.at("source");
  EVALRUN_RETURN_IF_ERROR(JsonFields::RequireObject(src, where, path));
  JsonFields j(src, where, path);
  std::string note, transform;
  const nlohmann::json* rows = nullptr;
  EVALRUN_RETURN_IF_ERROR(j.String("url", &out->url, true));
  EVALRUN_RETURN_IF_ERROR(j.String("note", &note));
  EVALRUN_RETURN_IF_ERROR(j.String("zip_member", &out->zip_member));
  EVALRUN_RETURN_IF_ERROR(j.Enum("transform", {"sort-lines"}, &transform));
  EVALRUN_RETURN_IF_ERROR(j.Object("hf_rows", &rows));
  EVALRUN_RETURN_IF_ERROR(j.Finish());
  HttpUrl u;
  if (!ParseHttpUrl(out->url, &u))
    return Status::InvalidInput(where + ": " + j.PathOf("url") + ": expected an http(s) URL");
  out->sort_lines = transform == "sort-lines";
  if (rows != nullptr) {
    out->kind = FetchSource::Kind::kHfRows;
    JsonFields r(*rows, where, j.PathOf("hf_rows"));
    EVALRUN_RETURN_IF_ERROR(r.String("dataset", &out->dataset, true));
    EVALRUN_RETURN_IF_ERROR(r.String("config", &out->config, true));
    EVALRUN_RETURN_IF_ERROR(r.String("split", &out->split, true));
    EVALRUN_RETURN_IF_ERROR(r.StringList("columns", &out->columns, true));
    EVALRUN_RETURN_IF_ERROR(r.Int("page_rows", &out->page_rows));
    EVALRUN_RETURN_IF_ERROR(r.Finish());
    if (out->page_rows < 1 || out->page_rows > 100)
      return Status::InvalidInput(where + ": " + r.PathOf("page_rows") + ": expected 1..100 (the API's limit)");
    if (f.rows < 0)
      return Status::InvalidInput(where + ": " + f.path + ": a paged source needs \"rows\"");
  } else if (!out->zip_member.empty()) {
    out->kind = FetchSource::Kind::kZipMember;
  }
  return Status::Ok();
}

// The mirror's layout (fetch.h): every file by its data-dir path, as installed.
FetchSource OnMirror(const FetchSource& s, const std::string& mirror, const std::string& rel_path) {
  FetchSource m = s;
  m.kind = FetchSource::Kind::kFile;
  m.url = mirror + "/" + rel_path;
  m.zip_member.clear();
  m.sort_lines = false;
  return m;
}

// ---------------------------------------------------------------------------
// Which files a list of names means.

std::string GroupOf(const ManifestFile& f) { return f.raw.value("fetch_group", std::string()); }

Status ResolveTargets(const std::vector<Manifest>& manifests, const std::vector<std::string>& names,
                      std::vector<Target>* out) {
  std::set<std::string> seen;
  auto add = [&](const Manifest& m, const ManifestFile& f) {
    if (seen.insert(f.path).second) out->push_back({&m, &f});
  };
  std::function<Status(const std::string&, std::set<std::string>*)> add_dataset =
      [&](const std::string& name, std::set<std::string>* visiting) -> Status {
    const Manifest* m = nullptr;
    for (const auto& x : manifests)
      if (x.name == name) m = &x;
    if (m == nullptr) return Status::InvalidInput("the manifests: \"needs\" names unknown dataset \"" + name + "\"");
    if (!visiting->insert(name).second) return Status::Ok();
    for (const auto& f : m->files)
      if (!f.optional) add(*m, f);
    if (m->raw.contains("needs") && m->raw.at("needs").is_array())
      for (const auto& n : m->raw.at("needs"))
        if (n.is_string()) EVALRUN_RETURN_IF_ERROR(add_dataset(n.get<std::string>(), visiting));
    return Status::Ok();
  };
  std::set<std::string> visiting;
  if (names.empty()) {
    for (const auto& m : manifests) EVALRUN_RETURN_IF_ERROR(add_dataset(m.name, &visiting));
    return Status::Ok();
  }
  std::vector<std::string> known = {"all"};
  for (const auto& m : manifests) {
    known.push_back(m.name);
    for (const auto& f : m.files) {
      known.push_back(f.path);
      if (!GroupOf(f).empty()) known.push_back(GroupOf(f));
    }
  }
  for (const auto& name : names) {
    bool matched = false;
    for (const auto& m : manifests) {
      if (name == "all") {
        for (const auto& f : m.files) add(m, f);
        matched = true;
        continue;
      }
      if (m.name == name) {
        EVALRUN_RETURN_IF_ERROR(add_dataset(name, &visiting));
        matched = true;
      }
      for (const auto& f : m.files) {
        if (GroupOf(f) == name || f.path == name) {
          add(m, f);
          matched = true;
        }
      }
    }
    if (!matched) {
      std::string list;
      for (const auto& m : manifests) list += (list.empty() ? "" : ", ") + m.name;
      std::set<std::string> groups;
      for (const auto& m : manifests)
        for (const auto& f : m.files)
          if (!GroupOf(f).empty()) groups.insert(GroupOf(f));
      for (const auto& g : groups) list += ", " + g;
      return Status::InvalidInput("unknown dataset \"" + name + "\"" + DidYouMean(name, known) +
                                  "; known: " + list + ", all (or a file path from `evalrun datasets list`)");
    }
  }
  return Status::Ok();
}

}  // namespace evalrun::fetch_internal
