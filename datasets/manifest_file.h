// A dataset manifest that a person wrote: a `<name>.manifest.json` in a
// folder of task files (docs/tasks.md), read at run time with the keys of the
// built-in ones (datasets/manifest.h), each checked. It pins a public file by
// its source URL and sha256, so that `evalrun datasets fetch <task>
// --tasks DIR` fetches it and every run checks it, as for a built-in
// benchmark.
//
// Thread-safety: a pure function of the file.
#ifndef EVALRUN_DATASETS_MANIFEST_FILE_H_
#define EVALRUN_DATASETS_MANIFEST_FILE_H_

#include <string>

#include "datasets/manifest.h"
#include "evals/base/status.h"

namespace evalrun {

// Reads and checks the manifest at `path`; `tasks_dir` is the folder it was
// found in (Manifest::tasks_dir). InvalidInput naming the file and the key
// ("x.manifest.json: files[0].sha256: expected 64 lowercase hex digits"):
// not JSON, an unknown key (with "did you mean"), a name that is not
// [a-z0-9][a-z0-9._-]*, no files, a file path outside "<name>/" (absolute,
// "..", empty parts), a file without a sha256 or a source, a source that is
// not an http(s) URL.
Status LoadManifestFile(const std::string& path, const std::string& tasks_dir, Manifest* out);

}  // namespace evalrun

#endif  // EVALRUN_DATASETS_MANIFEST_FILE_H_
