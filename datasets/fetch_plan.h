// What `evalrun datasets fetch` fetches, and from where (internal to
// datasets/: fetch.cc uses it, and manifest_file.cc checks a person's
// manifest's sources with ParseSource): each manifest entry's "source" as a
// FetchSource, that source moved onto a mirror, and the names given on the
// command line resolved to manifest files. The forms of "source" and the
// mirror's layout are those of datasets/fetch.h.
//
// Nothing here touches the network or the data dir. Thread-safety: pure
// functions. A Target points into the manifests it was resolved from, which
// must outlive it.
#ifndef EVALRUN_DATASETS_FETCH_PLAN_H_
#define EVALRUN_DATASETS_FETCH_PLAN_H_

#include <string>
#include <vector>

#include "datasets/manifest.h"
#include "evals/base/status.h"

namespace evalrun::fetch_internal {

// One manifest file's source, parsed.
struct FetchSource {
  enum class Kind { kFile, kZipMember, kHfRows };
  Kind kind = Kind::kFile;
  std::string url;         // the file, the zip, or the rows endpoint
  std::string zip_member;  // kZipMember
  bool sort_lines = false;  // kZipMember "transform": "sort-lines"
  // kHfRows
  std::string dataset, config, split;
  std::vector<std::string> columns;
  int page_rows = 100;
};

// Parses f's "source" (f is one of m's files) into *out. Fails with
// InvalidInput naming the manifest (ManifestWhere), the file and the
// field: no "source", an unknown or mistyped field, a url that is not
// http(s), page_rows outside 1..100, a paged source without "rows".
Status ParseSource(const Manifest& m, const ManifestFile& f, FetchSource* out);

// The source `s` of the file at `rel_path` as the mirror serves it (`mirror`
// without a trailing slash): a plain download of <mirror>/<rel_path>,
// installed as is, whatever the source (a paged one included: a mirror is a
// served copy of a data dir, and has no rows API).
FetchSource OnMirror(const FetchSource& s, const std::string& mirror, const std::string& rel_path);

// A file to fetch and the manifest that lists it.
struct Target {
  const Manifest* manifest;
  const ManifestFile* file;
};

// The file's "fetch_group" (the name that fetches an optional file), or "".
std::string GroupOf(const ManifestFile& f);

// Appends to *out the files that `names` mean (FetchOptions::names in
// fetch.h: empty means every dataset's required files), each file once, in
// the order the names and the manifests give them; a dataset brings the
// required files of the datasets it "needs" too. Fails with InvalidInput for
// a name that matches nothing (with a did-you-mean and the known names) or a
// "needs" naming an unknown dataset; *out may then hold part of the list.
Status ResolveTargets(const std::vector<Manifest>& manifests, const std::vector<std::string>& names,
                      std::vector<Target>* out);

}  // namespace evalrun::fetch_internal

#endif  // EVALRUN_DATASETS_FETCH_PLAN_H_
