#include "evals/benchmarks/table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace evalrun {
namespace {

// Built on first use: rows in other files may register before this file's
// statics are initialised.
std::vector<std::unique_ptr<Benchmark>>& Rows() {
  static auto* rows = new std::vector<std::unique_ptr<Benchmark>>();
  return *rows;
}

int FirstRunOrder(const Benchmark& b) {
  int order = 0;
  for (size_t i = 0; i < b.parts.size(); ++i)
    if (i == 0 || b.parts[i].run_order < order) order = b.parts[i].run_order;
  return order;
}

}  // namespace

BenchmarkRegistrar::BenchmarkRegistrar(Benchmark row) {
  if (row.name.empty() || FindBenchmark(row.name)) {
    std::fprintf(stderr, "evalrun: internal error: benchmark \"%s\" registered twice or without a name\n",
                 row.name.c_str());
    std::abort();
  }
  for (const PartDefinition& d : row.parts) RegisterPart(d);
  for (const PageSection& s : row.page_sections) RegisterPageSection(s);
  for (const CompareSection& s : row.compare_sections) RegisterCompareSection(s);
  Rows().push_back(std::make_unique<Benchmark>(std::move(row)));
}

std::vector<const Benchmark*> Benchmarks() {
  std::vector<const Benchmark*> out;
  for (const auto& b : Rows()) out.push_back(b.get());
  std::stable_sort(out.begin(), out.end(), [](const Benchmark* a, const Benchmark* b) {
    const int oa = FirstRunOrder(*a), ob = FirstRunOrder(*b);
    return oa != ob ? oa < ob : a->name < b->name;
  });
  return out;
}

const Benchmark* FindBenchmark(std::string_view name) {
  for (const auto& b : Rows())
    if (b->name == name) return b.get();
  return nullptr;
}

}  // namespace evalrun
