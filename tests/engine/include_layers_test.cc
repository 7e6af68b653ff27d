// The include graph of the product (evals/, scorers/, datasets/) has no
// circle and no arrow running back up. Each folder is a layer:
//
//   8 evals/ (cli, main)                        the command line
//   7 evals/benchmarks/<name>/                  one benchmark
//   6 evals/benchmarks/ (the table), evals/kinds/
//   5 evals/publish/                            report, compare, merge
//   4 evals/run/                                card, plan, request pool, scoring stage, results
//   3 evals/watch/, datasets/, scorers/<name>/  load sampling, data, a benchmark's own grading
//   2 evals/server/, evals/sandbox/, scorers/   HTTP, processes in a sandbox, shared graders
//   1 evals/proc/                               child processes
//   0 evals/base/                               plain helpers
//
// A file includes only its own folder or a lower layer; besides, a
// benchmark's folders are reached only from themselves: scorers/<name>/
// from evals/benchmarks/<name>/ (or a benchmark whose row `uses` it), and
// evals/benchmarks/<other>/ only where the row `uses` <other>.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evals/benchmarks/table.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

struct Layer {
  std::string folder;  // "evals/run", "scorers/ruler", "evals/benchmarks/ruler"
  int rank = 0;
  std::string benchmark;  // for a benchmark's own folder: its name
};

Layer LayerOf(const std::string& rel) {
  const std::string dir = fs::path(rel).parent_path().string();
  static const std::map<std::string, int> kRanks = {
      {"evals/base", 0},  {"evals/proc", 1},    {"evals/server", 2}, {"evals/sandbox", 2}, {"scorers", 2},
      {"evals/watch", 3}, {"datasets", 3},      {"evals/run", 4},    {"evals/publish", 5}, {"evals/kinds", 6},
      {"evals/benchmarks", 6}, {"evals/tasks", 7}, {"evals", 8}};
  auto it = kRanks.find(dir);
  if (it != kRanks.end()) return {dir, it->second, ""};
  for (const auto& [prefix, rank] : {std::pair<std::string, int>{"evals/benchmarks/", 7}, {"scorers/", 3}})
    if (dir.rfind(prefix, 0) == 0 && dir.find('/', prefix.size()) == std::string::npos)
      return {dir, rank, dir.substr(prefix.size())};
  return {dir, -1, ""};
}

bool Uses(const std::string& benchmark, const std::string& other) {
  const Benchmark* b = FindBenchmark(benchmark);
  if (b == nullptr) return false;
  for (const std::string& u : b->uses)
    if (u == other) return true;
  return false;
}

// Why `from` may not include `to`; "" when it may.
std::string Refusal(const Layer& from, const Layer& to) {
  if (from.folder == to.folder) return "";
  if (from.rank < 0 || to.rank < 0) return "a folder outside the layers";
  if (!to.benchmark.empty()) {
    const bool scorer = to.folder.rfind("scorers/", 0) == 0;
    const bool mine = from.folder.rfind("evals/benchmarks/", 0) == 0 &&
                      (from.benchmark == to.benchmark || Uses(from.benchmark, to.benchmark));
    if (!mine) return scorer ? "a benchmark's grading, from outside its benchmark"
                             : "another benchmark's folder, not in the row's `uses`";
    return "";
  }
  if (to.rank >= from.rank) return "an arrow running up (or across) the layers";
  return "";
}

std::vector<std::string> Includes(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"((evals|scorers|datasets)/[^"]+)")re");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kInclude)) out.push_back(m[1]);
  }
  return out;
}

std::map<std::string, std::vector<std::string>> Graph() {
  std::map<std::string, std::vector<std::string>> g;
  const fs::path root(SourceDir());
  for (const char* dir : {"evals", "scorers", "datasets"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cc" || ext == ".h"))
        g[fs::relative(e.path(), root).string()] = Includes(e.path());
    }
  return g;
}

TEST(IncludeLayers, NoArrowRunsBackUp) {
  const auto g = Graph();
  ASSERT_GT(g.size(), 300u);
  std::vector<std::string> bad;
  for (const auto& [file, includes] : g)
    for (const std::string& inc : includes) {
      const std::string why = Refusal(LayerOf(file), LayerOf(inc));
      if (!why.empty()) bad.push_back(file + " includes " + inc + ": " + why);
    }
  std::string all;
  for (const auto& b : bad) all += "\n  " + b;
  EXPECT_TRUE(bad.empty()) << bad.size() << " includes against the layers:" << all;
}

TEST(IncludeLayers, NoCircle) {
  const auto g = Graph();
  std::map<std::string, int> state;  // 1 on the path, 2 done
  std::vector<std::string> path, circles;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    path.push_back(f);
    auto it = g.find(f);
    if (it != g.end())
      for (const std::string& inc : it->second) {
        if (state[inc] == 1) {
          std::string c;
          for (auto p = std::find(path.begin(), path.end(), inc); p != path.end(); ++p) c += *p + " -> ";
          circles.push_back(c + inc);
        } else if (state[inc] == 0 && g.count(inc)) {
          visit(inc);
        }
      }
    path.pop_back();
    state[f] = 2;
  };
  for (const auto& [file, includes] : g)
    if (state[file] == 0) visit(file);
  std::string all;
  for (const auto& c : circles) all += "\n  " + c;
  EXPECT_TRUE(circles.empty()) << all;
}

TEST(IncludeLayers, TheRulesRefuseWhatTheyShould) {
  EXPECT_EQ(Refusal(LayerOf("evals/run/a.cc"), LayerOf("evals/base/b.h")), "");
  EXPECT_NE(Refusal(LayerOf("evals/run/a.cc"), LayerOf("evals/publish/b.h")), "");
  EXPECT_NE(Refusal(LayerOf("evals/run/a.cc"), LayerOf("scorers/ruler/b.h")), "");
  EXPECT_EQ(Refusal(LayerOf("evals/benchmarks/ruler/a.cc"), LayerOf("scorers/ruler/b.h")), "");
  EXPECT_NE(Refusal(LayerOf("evals/benchmarks/ruler/a.cc"), LayerOf("evals/benchmarks/gpqa/b.h")), "");
  EXPECT_NE(Refusal(LayerOf("evals/publish/a.cc"), LayerOf("evals/benchmarks/table.h")), "");
  EXPECT_NE(Refusal(LayerOf("evals/nowhere/a.cc"), LayerOf("evals/base/b.h")), "");
}

}  // namespace
}  // namespace evalrun::testing
