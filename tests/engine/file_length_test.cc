// Files named for one job stay small enough to read: no source file of the
// project spans more than 650 lines, and none in evals/server/ (the client's
// transports, wire formats, streaming, retry) more than 400.
// Counted as `wc -l` does; fixtures (tests/fixtures/) are data, not code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxFileLines = 650;
constexpr int kMaxServerFileLines = 400;

int LineCount(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  int n = 0;
  for (char c; in.get(c);) n += c == '\n';
  return n;
}

bool IsSource(const fs::path& p) {
  static const std::set<std::string> kExt = {".cc", ".h", ".py", ".sh", ".inc"};
  return kExt.count(p.extension().string()) > 0;
}

// "path: N lines" for each source file under `dir` over `max` lines.
std::vector<std::string> Over(const std::string& dir, int max) {
  std::vector<std::string> out;
  const fs::path root = fs::path(SourceDir());
  for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
    if (!e.is_regular_file() || !IsSource(e.path())) continue;
    const std::string rel = fs::relative(e.path(), root).string();
    if (rel.rfind("tests/fixtures/", 0) == 0) continue;
    const int n = LineCount(e.path());
    if (n > max) out.push_back(rel + ": " + std::to_string(n) + " lines");
  }
  return out;
}

TEST(FileLength, NoSourceFileOver650Lines) {
  int seen = 0;
  for (const char* dir : {"evals", "scorers", "datasets", "bench", "fuzz", "scripts", "tests"}) {
    ASSERT_TRUE(fs::is_directory(fs::path(SourceDir()) / dir)) << dir;
    ++seen;
    EXPECT_EQ(Over(dir, kMaxFileLines), std::vector<std::string>{}) << "split these by job";
  }
  EXPECT_EQ(seen, 7);
}

TEST(FileLength, NoFileOfTheServerClientOver400Lines) {
  EXPECT_EQ(Over("evals/server", kMaxServerFileLines), std::vector<std::string>{}) << "split these by job";
}

TEST(FileLength, OnlyOneFileOfTheProjectIncludesHttplib) {
  // The transport is the only place httplib's types live (evals/server/http.h
  // is the interface); tests' own proxies and mirrors may use it.
  std::vector<std::string> found;
  const fs::path root = fs::path(SourceDir());
  for (const char* dir : {"evals", "scorers", "datasets", "bench", "fuzz"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file() || !IsSource(e.path())) continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);)
        if (line.rfind("#include <httplib.h>", 0) == 0) found.push_back(fs::relative(e.path(), root).string());
    }
  EXPECT_EQ(found, std::vector<std::string>{"evals/server/httplib_client.cc"});
}

}  // namespace
}  // namespace evalrun::testing
