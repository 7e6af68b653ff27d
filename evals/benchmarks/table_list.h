// What the command line reads of the benchmark table (table.h) itself:
// `evalrun --list`, and `evalrun datasets fetch <benchmark>`.
//
// Thread-safety: read-only after static initialisation.
#ifndef EVALRUN_EVALS_BENCHMARKS_TABLE_LIST_H_
#define EVALRUN_EVALS_BENCHMARKS_TABLE_LIST_H_

#include <cstdio>
#include <string>
#include <vector>

#include "datasets/manifest.h"
#include "evals/benchmarks/table.h"

namespace evalrun {

// Every row: name, title, what it is, its parts (kind, card keys), data,
// the benchmarks it uses, its scorer, what the page and `compare` show.
void PrintBenchmarkTable(FILE* out);

// `datasets fetch` names with each benchmark's name (one that is not also a
// dataset's) replaced by its datasets; other names as they are, for fetch
// to check. A benchmark without datasets drops out.
std::vector<std::string> BenchmarkDatasets(const std::vector<std::string>& names);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_TABLE_LIST_H_
