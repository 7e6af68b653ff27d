#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <filesystem>

#include "tests/support/run_binary.h"

namespace evalrun::testing {

TempDir::TempDir(const std::string& prefix, const std::string& parent) {
  if (parent.empty()) {
    path_ = MakeTempDir(prefix);
    return;
  }
  std::string pattern = parent + "/" + prefix + "-XXXXXX";
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() { RemoveTree(path_); }

void WriteText(const std::string& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  WriteFile(path, text);
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace evalrun::testing
