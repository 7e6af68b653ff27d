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
//   <dir>/<part>/samples.jsonl  read per part on demand (ReadSamplesReadOnly).
//
// Errors name the folder or file and, for bad JSON, the line/column or the
// field: NotFound for a missing folder ("runs/x: no such folder") or a folder
// without results.json ("not an evalrun run folder: ..."), InvalidInput for
// anything malformed.
//
// Thread-safety: the functions share no state; a RunFolder is a plain value.
#ifndef EVALRUN_EVALS_PUBLISH_RUN_FOLDER_H_
#define EVALRUN_EVALS_PUBLISH_RUN_FOLDER_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/status.h"

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

// `dir` without trailing '/' (a lone "/" stays), as RunFolder::dir has it.
std::string TrimRunDir(std::string dir);

// <run.dir>/<part>/samples.jsonl.
std::string SamplesPath(const RunFolder& run, const std::string& part);

// Reads <run dir>/<part>/samples.jsonl without changing it. A last line that
// lacks its newline and does not parse (a crash mid-write) is skipped and
// *torn_tail set; any other bad line is InvalidInput naming path:line. A
// missing file is NotFound naming the path.
Status ReadSamplesReadOnly(const std::string& path, std::vector<nlohmann::json>* lines,
                           bool* torn_tail);

// The note both commands print for a skipped torn line:
// "<path>: a torn last line (crash mid-write) was skipped".
std::string TornTailNote(const std::string& path);

// The sample's "id" as a string (numbers are printed); "" when absent.
std::string SampleId(const nlohmann::json& sample);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_PUBLISH_RUN_FOLDER_H_
