// The benchmarks written as task files (task_file.h): one generic part,
// FilePart, prepared, scored and aggregated from a TaskSpec, and the rows
// of the benchmark table (evals/benchmarks/table.h) made from the files: the
// built-in tasks/ folder (compiled in, as the dataset manifests are), the
// folders the user names (`--tasks DIR`, $EVALRUN_TASKS, the card's
// `tasks`). Each file is one benchmark of one part, named by its `name`,
// listed by --list, its card keys checked like any part's.
//
// A choice answer gives the "choice" kind; a number, an exact string or a
// regex chain gives the shared "match" kind (evals/kinds/match.h).
//
// Thread-safety: loading registers rows and runs on the main thread before
// any card is read; a FilePart is prepared once and then scored from any
// thread (Score reads only what Prepare built).
#ifndef EVALRUN_EVALS_TASKS_FILE_BENCHMARK_H_
#define EVALRUN_EVALS_TASKS_FILE_BENCHMARK_H_

#include <string>
#include <vector>

#include "evals/base/status.h"
#include "evals/tasks/task_file.h"

namespace evalrun {

// Registers the task as a row of the table. InvalidInput naming the file
// when its name is taken (by a built-in benchmark or another task file).
Status RegisterTask(TaskSpec spec);

// Every *.json of `dir`, by name, each loaded and registered; the first bad
// file stops with its message. A folder loaded before is skipped.
Status LoadTaskFolder(const std::string& dir);

// The built-in tasks (tasks/*.json, compiled in), once; later calls do
// nothing. An error names the file (a bad built-in file is a build bug).
Status LoadBuiltinTasks();

// The folders of $EVALRUN_TASKS (':'-separated) and `dirs`, after the
// built-in tasks.
Status LoadTasks(const std::vector<std::string>& dirs);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_TASKS_FILE_BENCHMARK_H_
