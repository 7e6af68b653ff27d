// The benchmark table (evals/benchmarks/table.h) is what the rest of
// evalrun reads: every part, page section and compare section comes from a
// row; each row's datasets are manifests; each product row has its folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "datasets/manifest.h"
#include "evals/benchmarks/table.h"
#include "evals/benchmarks/table_list.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

TEST(BenchmarkTable, EveryPartComesFromExactlyOneRow) {
  std::map<std::string, int> rows_of;
  for (const Benchmark* b : Benchmarks())
    for (const PartDefinition& d : b->parts) ++rows_of[d.name];
  ASSERT_FALSE(PartDefinitions().empty());
  for (const PartDefinition* d : PartDefinitions()) EXPECT_EQ(rows_of[d->name], 1) << d->name;
  EXPECT_EQ(rows_of.size(), PartDefinitions().size());
}

TEST(BenchmarkTable, EachRowIsAFolderWithKnownDatasetsAndUses) {
  const std::vector<const Benchmark*> rows = Benchmarks();
  ASSERT_GE(rows.size(), 9u);
  for (const Benchmark* b : rows) {
    EXPECT_TRUE(fs::is_directory(fs::path(SourceDir()) / "evals/benchmarks" / b->name)) << b->name;
    EXPECT_FALSE(b->title.empty()) << b->name;
    EXPECT_FALSE(b->about.empty()) << b->name;
    EXPECT_FALSE(b->scorer.empty()) << b->name;
    EXPECT_FALSE(b->parts.empty()) << b->name;
    for (const std::string& d : b->datasets) EXPECT_NE(FindManifest(d), nullptr) << b->name << ": dataset " << d;
    for (const std::string& u : b->uses) EXPECT_NE(FindBenchmark(u), nullptr) << b->name << ": uses " << u;
    EXPECT_EQ(FindBenchmark(b->name), b);
  }
}

TEST(BenchmarkTable, EveryPageSectionIsOfARowsPart) {
  for (const PageSection* s : PageSections()) {
    bool found = false;
    for (const Benchmark* b : Benchmarks())
      for (const PageSection& mine : b->page_sections) found |= mine.part == s->part;
    EXPECT_TRUE(found) << s->part;
  }
}

TEST(BenchmarkTable, RowsRunInTheOrderOfTheirParts) {
  const std::vector<const Benchmark*> rows = Benchmarks();
  for (size_t i = 1; i < rows.size(); ++i)
    EXPECT_LE(rows[i - 1]->parts[0].run_order, rows[i]->parts[0].run_order) << rows[i]->name;
}

TEST(BenchmarkTable, DatasetsFetchTakesABenchmarksName) {
  // A benchmark's name brings its datasets; a dataset's or group's name
  // stays (a name that is both, as ifeval, is the dataset); a benchmark
  // without data brings nothing.
  EXPECT_EQ(BenchmarkDatasets({"thinking", "ifeval", "ruler-qa", "nonesuch"}),
            (std::vector<std::string>{"gpqa", "mmlu-pro", "ifeval", "ruler-qa", "nonesuch"}));
  for (const Benchmark* b : Benchmarks()) {
    if (b->datasets.empty()) {
      EXPECT_TRUE(BenchmarkDatasets({b->name}).empty()) << b->name;
    }
  }

  BinaryResult r = RunBinary({EvalrunBinary(), "datasets", "fetch", "speed"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nothing to fetch: speed reads no dataset"), std::string::npos) << r.out;
}

TEST(BenchmarkTable, ListShowsEveryRow) {
  BinaryResult r = RunBinary({EvalrunBinary(), "--list"}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const Benchmark* b : Benchmarks()) {
    EXPECT_NE(r.out.find("\n" + b->name + ": " + b->title + "\n"), std::string::npos) << b->name;
    for (const PartDefinition& d : b->parts) EXPECT_NE(r.out.find("  part     " + d.name + " ("), std::string::npos);
  }
}

}  // namespace
}  // namespace evalrun::testing
