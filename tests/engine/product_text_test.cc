// The product's files say what the code does and why, never which tracker
// entry asked for it: no file of the product (README, docs, code and its
// comments, scripts, cards, CMake, the tests' own sources) cites an issue
// by its number, in any of the usual spellings: the word issue followed by a
// number (with or without '#'), or a number in parentheses after '#'.
// Fixture data (tests/fixtures/, other than its notes and scripts) is text
// from elsewhere and is left out. A link to another project's tracker
// (".../issues/7052") names the page, not a number in prose, and passes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

const RE2& IssueCitation() {
  static const RE2 re(R"((?i)\bissues?\s?#?\s?[0-9]+|\(#[0-9]+\))");
  return re;
}

bool IsProductText(const fs::path& p) {
  static const std::set<std::string> kExt = {".cc", ".h", ".py", ".sh", ".inc", ".md", ".txt", ".cmake", ".in",
                                             ".json"};
  const std::string name = p.filename().string();
  return kExt.count(p.extension().string()) > 0 || name == "CMakeLists.txt" || name == "run";
}

// "file:line: text" for each line of `rel` (relative to the source root) that cites an issue.
void Scan(const fs::path& root, const std::string& rel, std::vector<std::string>* hits) {
  std::ifstream in(root / rel, std::ios::binary);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (RE2::PartialMatch(line, IssueCitation())) hits->push_back(rel + ":" + std::to_string(n) + ": " + line);
}

bool IsFixtureData(const std::string& rel) {
  if (rel.rfind("tests/fixtures/", 0) != 0) return false;
  const std::string ext = fs::path(rel).extension().string();
  return ext != ".md" && ext != ".py" && ext != ".sh";
}

TEST(ProductText, TheMatcherKnowsTheSpellings) {
  const std::string word = std::string("iss") + "ue";
  for (const std::string& s : {word + " 38", word + " #38", "Is" + word.substr(2) + "s 37", word + "#12", "see (" + std::string("#45)"), word + "s 4"})
    EXPECT_TRUE(RE2::PartialMatch(s, IssueCitation())) << s;
  for (const std::string& s : {std::string("https://github.com/ggml-org/llama.cpp/issues/7052"), std::string("tissue 3"),
                               std::string("llama.cpp PR state 31306"), word + "s of the server"})
    EXPECT_FALSE(RE2::PartialMatch(s, IssueCitation())) << s;
}

TEST(ProductText, NoFileCitesAnIssueNumber) {
  const fs::path root(SourceDir());
  std::vector<std::string> hits;
  int files = 0;
  for (const char* top : {"README.md", "CMakeLists.txt", ".ci/run"})
    if (fs::exists(root / top)) Scan(root, top, &hits), ++files;
  for (const char* dir : {"docs", "evals", "scorers", "scripts", "cards", "datasets", "bench", "cmake", "fuzz", "tests"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file() || !IsProductText(e.path())) continue;
      const std::string rel = fs::relative(e.path(), root).string();
      if (IsFixtureData(rel)) continue;
      Scan(root, rel, &hits);
      ++files;
    }
  }
  EXPECT_GT(files, 300) << "the walk found too few files: is SourceDir() right?";
  std::string all;
  for (const auto& h : hits) all += "\n  " + h;
  EXPECT_TRUE(hits.empty()) << hits.size() << " lines cite an issue number; say what the code does and why:" << all;
}

}  // namespace
}  // namespace evalrun::testing
