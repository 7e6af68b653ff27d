// Reading a finished (or interrupted) run folder, for `evalrun compare` and
// `evalrun report`. Nothing here writes: a torn last sample line is skipped
// in memory, never cut off the file (the runner's evals/run/run_files.h is the
// writer's side, which does cut it).
//
// What a run folder holds and what is read of it:
//   <dir>/results.json          required; schema "evalrun.results/1", with
//                               a `parts` object of objects.
//   <dir>/run.json              optional (a `score` job has none): the card,
//                               server, host and evalrun version.
//   <dir>/<part>/samples.jsonl  read per part on demand (ReadRecordsReadOnly),
//                               through the codec of the part's verdict kind.
//
// Errors name the folder or file and, for bad JSON, the line/column or the
// field: NotFound for a missing folder ("runs/x: no such folder") or a folder
// without results.json ("not an evalrun run folder: ..."), InvalidInput for
// anything malformed.
//
// Thread-safety: the functions share no state; a RunFolder is a plain value.
#ifndef EVALRUN_EVALS_PUBLISH_RUN_FOLDER_H_
#define EVALRUN_EVALS_PUBLISH_RUN_FOLDER_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"
#include "evals/run/part_registry.h"
#include "evals/run/sample_record.h"
#include "evals/run/verdict.h"

namespace evalrun {

// A run folder as written by `evalrun` or `evalrun score`, read-only.
struct RunFolder {
  std::string dir;                 // as given, without a trailing '/'
  nlohmann::json results;          // results.json (schema evalrun.results/1)
  nlohmann::json run;              // run.json; null for a `score` job (none)
  std::vector<std::string> parts;  // the keys of results.parts, in run order
                                   // (the registry's; names it lacks after)
};

// Reads <dir>/results.json (required; its schema must be
// "evalrun.results/1") and <dir>/run.json (optional). NotFound names a
// missing folder or "not an evalrun run folder"; InvalidInput names the
// file, line/column or field.
Status LoadRunFolder(const std::string& dir, RunFolder* out);

// The machine-load summary of a run's results.json ("load"; "noise" in runs
// written before 2026-12), or a null value.
const nlohmann::json& LoadSummaryOf(const nlohmann::json& results);

// `dir` without trailing '/' (a lone "/" stays), as RunFolder::dir has it.
std::string TrimRunDir(std::string dir);

// <run.dir>/<part>/samples.jsonl.
std::string SamplesPath(const RunFolder& run, const std::string& part);

// What `compare` and `report` know of one part of a run folder.
struct FolderPart {
  std::string name;
  std::string display_name;          // the registry's, else the name
  // results.json's parts.<name>.kind, else (results written before it was
  // recorded) the registry's; nullopt: the part writes no samples (a procedure) or
  // this build does not know it.
  std::optional<VerdictKind> kind;
  const PartDefinition* definition = nullptr;  // null: not in this build's registry
};

// `part` of `run` (one of run.parts). InvalidInput names results.json and
// the field when its kind is not one of the verdict kinds.
Status DescribeFolderPart(const RunFolder& run, const std::string& part, FolderPart* out);

// Reads <run dir>/<part>/samples.jsonl without changing it, each line
// through the codec of `kind` (evals/run/sample_codec.h). A last line that
// lacks its newline and does not parse (a crash mid-write) is skipped and
// *torn_tail set; any other bad line is InvalidInput naming path:line and
// the field. A missing file is NotFound naming the path.
Status ReadRecordsReadOnly(const std::string& path, VerdictKind kind, std::vector<SampleRecord>* records,
                           bool* torn_tail);

// The note both commands print for a skipped torn line:
// "<path>: a torn last line (crash mid-write) was skipped".
std::string TornTailNote(const std::string& path);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_RUN_FOLDER_H_
