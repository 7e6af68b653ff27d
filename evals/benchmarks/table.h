// The benchmark table: one row per benchmark, registered from the
// benchmark's own folder with one line,
//
//   EVALRUN_BENCHMARK(CapitalsBenchmark());
//
// and nothing else in the project names it. A row says what the benchmark
// is (name, title), what it adds to a card (its parts), what `evalrun
// datasets fetch <name>` brings for it (its datasets, manifest names), how
// an answer is graded (its scorer, and the official one it equals) and
// what it brings to the page and to `compare` beyond its kind's tables.
//
// Registering a row hands each piece to the index of the layer that reads
// it, so that no arrow runs back up: the parts to the part registry
// (evals/run/part_registry.h: the card loader, the runner, `score`, the
// run-folder reader), the sections to publishing
// (evals/publish/page_section.h, compare_section.h). `evalrun --list` and
// `datasets fetch <name>` read the table itself.
//
// Registration runs during static initialisation (evalrun_core is an OBJECT
// library, so no row is dropped by the linker); a second row of one name, a
// part or a section registered twice aborts (a programming error). Lookups
// are for after it, from any thread.
#ifndef EVALRUN_EVALS_BENCHMARKS_TABLE_H_
#define EVALRUN_EVALS_BENCHMARKS_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "evals/publish/compare_section.h"
#include "evals/publish/page_section.h"
#include "evals/run/part_registry.h"

namespace evalrun {

struct Benchmark {
  // Its folders: evals/benchmarks/<name>/, scorers/<name>/ where it grades
  // in its own way, tests/benchmarks/<name>/.
  std::string name;
  std::string title;  // as reports show it (upper case, hyphens): "<Title>"
  std::string about;  // one line for `evalrun --list`
  // What it adds to a card (parts.<part>); most benchmarks have one part,
  // named as the benchmark.
  std::vector<PartDefinition> parts;
  // The datasets (manifest names, datasets/manifest.h) it reads; empty for
  // one that brings its own items or none.
  std::vector<std::string> datasets;
  // Other benchmarks whose parts or code it uses, by name: the only names
  // its folder may give besides its own and its datasets'.
  std::vector<std::string> uses;
  // How an answer is graded, and the official scorer it equals.
  std::string scorer;
  // Its own sections of the page and its own view in `compare`; none: its
  // kind's tables alone.
  std::vector<PageSection> page_sections;
  std::vector<CompareSection> compare_sections;
};

class BenchmarkRegistrar {
 public:
  explicit BenchmarkRegistrar(Benchmark row);
};

#define EVALRUN_BENCHMARK_CONCAT_(a, b) a##b
#define EVALRUN_BENCHMARK_CONCAT(a, b) EVALRUN_BENCHMARK_CONCAT_(a, b)
// At namespace scope in the benchmark's folder: EVALRUN_BENCHMARK(MyBenchmark());
// (Variadic: a row written as Benchmark{.name = ..., .parts = {...}} has commas.)
#define EVALRUN_BENCHMARK(...)                                                                            \
  static const ::evalrun::BenchmarkRegistrar EVALRUN_BENCHMARK_CONCAT(evalrun_benchmark_row_, __LINE__) { \
    __VA_ARGS__                                                                                           \
  }

// Every row, in the run order of its first part (ties by name).
std::vector<const Benchmark*> Benchmarks();
// The row of `name`, or null.
const Benchmark* FindBenchmark(std::string_view name);

}  // namespace evalrun

#endif  // EVALRUN_EVALS_BENCHMARKS_TABLE_H_
