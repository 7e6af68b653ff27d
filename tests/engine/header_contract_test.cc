// Headers are the contracts (docs/architecture.md): every header in evals/,
// scorers/ and datasets/ opens with a comment, before its include guard,
// that says what it promises and states its thread-safety.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

// The comment lines before the first preprocessor line, lower-cased.
std::string OpeningComment(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("//", 0) != 0) break;
    out += line + "\n";
  }
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

TEST(HeaderContractTest, OpeningCommentIsReadAsTheLinesBeforeTheGuard) {
  EXPECT_EQ(OpeningComment("// A.\n// Thread-safety: none.\n#ifndef X\n// later\n"), "// a.\n// thread-safety: none.\n");
  EXPECT_EQ(OpeningComment("#ifndef X\n// Thread\n"), "");
}

TEST(HeaderContractTest, EveryHeaderOpensWithItsContractAndThreadSafety) {
  std::vector<std::string> missing;
  int headers = 0;
  for (const char* dir : {"evals", "scorers", "datasets"}) {
    const fs::path root = fs::path(SourceDir()) / dir;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file() || e.path().extension() != ".h") continue;
      ++headers;
      const std::string comment = OpeningComment(ReadFile(e.path().string()));
      const std::string rel = fs::relative(e.path(), SourceDir()).string();
      if (comment.size() < 40)
        missing.push_back(rel + ": no opening comment");
      else if (comment.find("thread") == std::string::npos)
        missing.push_back(rel + ": the opening comment does not state its thread-safety");
    }
  }
  EXPECT_GT(headers, 100) << "headers not found under " << SourceDir();
  std::string list;
  for (const auto& m : missing) list += "\n  " + m;
  EXPECT_TRUE(missing.empty()) << missing.size() << " headers:" << list;
}

}  // namespace
}  // namespace evalrun::testing
