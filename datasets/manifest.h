// Dataset manifests (compiled into the binary): a benchmark's in its folder
// (evals/benchmarks/<name>/*.json), shared ones in datasets/manifests/; for
// each dataset the files evalrun reads, their sha256, row counts,
// licence and source. Third-party data itself is never committed: users get
// it with `evalrun datasets fetch`, and every run checks it here.
//
// A folder of task files may add its own (datasets/manifest_file.h), through
// RegisterManifest.
//
// Thread-safety: the manifests are parsed once and then only read; every
// function here but RegisterManifest is safe to call from several threads.
#ifndef EVALRUN_DATASETS_MANIFEST_H_
#define EVALRUN_DATASETS_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

namespace evalrun {

struct ManifestFile {
  std::string path;      // relative to the data dir: "<dataset>/test.jsonl"
  std::string sha256;
  int64_t rows = -1;
  int64_t bytes = -1;
  bool optional = false;
  std::string note;
  nlohmann::json raw;    // the whole entry (fetch sources, members, ...)
};

struct Manifest {
  std::string name;      // "<dataset>"
  // The file it was read from, in messages ("evals/benchmarks/<name>/<dataset>.json");
  // empty for one built in memory (tests): then "manifest <name>".
  std::string source_file;
  // The task folder (`--tasks DIR`) a person's manifest came from; empty for
  // a built-in one. Messages that say how to fetch name it.
  std::string tasks_dir;
  std::string title, licence, homepage;
  std::vector<ManifestFile> files;
  nlohmann::json raw;
};

// "the manifest evals/benchmarks/<name>/<dataset>.json" / "manifest <dataset>".
std::string ManifestWhere(const Manifest& m);

// All manifests by name, parsed once (thread-safe).
const std::vector<Manifest>& AllManifests();
const Manifest* FindManifest(const std::string& name);

// Adds `m` to AllManifests(). InvalidInput naming both files when its name or
// one of its paths is another manifest's. Call on the main thread before any
// other thread reads the manifests, and before keeping a pointer that
// FindManifest or FindManifestFile gave (they may move).
Status RegisterManifest(Manifest m);

// "evalrun datasets fetch <dataset> --data-dir <dir>", with `--tasks <folder>`
// for a dataset of a person's manifest: the command that fetches it.
std::string FetchCommand(const std::string& dataset, const std::string& data_dir);
const ManifestFile* FindManifestFile(const std::string& rel_path);

// The data dir when none is given: $EVALRUN_DATA, else
// $XDG_DATA_HOME/evalrun, else ~/.local/share/evalrun.
std::string DefaultDataDir();

// Checks <data_dir>/<rel_path> against its manifest entry (sha256) and sets
// *abs_path. Missing or mismatched files fail with a message naming the file,
// the expected and found sha256 and the command that fetches it. Results are
// cached per process (a file is hashed once). Thread-safe.
Status VerifyDataFile(const std::string& data_dir, const std::string& rel_path,
                      std::string* abs_path);

}  // namespace evalrun

#endif  // EVALRUN_DATASETS_MANIFEST_H_
