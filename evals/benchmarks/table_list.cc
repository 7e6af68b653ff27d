#include "evals/benchmarks/table_list.h"

#include <string>

namespace evalrun {
namespace {

std::string Joined(const std::vector<std::string>& v, const char* none) {
  if (v.empty()) return none;
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "<name> (choice; card keys: questions, max_tokens, ...)".
std::string PartLine(const PartDefinition& d) {
  std::vector<std::string> keys;
  for (const CardKey& k : d.keys) keys.push_back(k.name);
  const std::string kind = d.verdict ? std::string(d.verdict->name()) : std::string("a procedure");
  return d.name + " (" + kind + "; card keys: " + Joined(keys, "none") + ")";
}

// What the page shows of it: the results table's row, its own sections.
std::string PageLine(const Benchmark& b) {
  bool row = true;
  for (const PageSection& s : b.page_sections) row &= !s.replaces_row;
  std::string line = row ? "a row of the results table and its kind's tables" : "no row of the results table";
  if (!b.page_sections.empty()) line += row ? ", and a section of its own" : ": a section of its own";
  return line;
}

}  // namespace

void PrintBenchmarkTable(FILE* out) {
  std::fprintf(out, "The benchmark table (run a part with --parts <part>; get a benchmark's data with "
                    "`evalrun datasets fetch <benchmark>`):\n");
  for (const Benchmark* b : Benchmarks()) {
    std::fprintf(out, "\n%s: %s\n  %s\n", b->name.c_str(), b->title.c_str(), b->about.c_str());
    for (const PartDefinition& d : b->parts) std::fprintf(out, "  part     %s\n", PartLine(d).c_str());
    std::fprintf(out, "  data     %s\n", Joined(b->datasets, "nothing to fetch (built in, or a file of its own)").c_str());
    if (!b->uses.empty()) std::fprintf(out, "  uses     %s\n", Joined(b->uses, "").c_str());
    std::fprintf(out, "  scorer   %s\n", b->scorer.c_str());
    std::fprintf(out, "  page     %s\n", PageLine(*b).c_str());
    std::fprintf(out, "  compare  %s\n", b->compare_sections.empty() ? "its kind's view" : "its kind's view and its own");
  }
}

std::vector<std::string> BenchmarkDatasets(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    const Benchmark* b = FindManifest(n) ? nullptr : FindBenchmark(n);
    if (b == nullptr) {
      out.push_back(n);
      continue;
    }
    for (const std::string& d : b->datasets) out.push_back(d);
  }
  return out;
}

}  // namespace evalrun
