#include "tests/support/temp_dir.h"

#include <filesystem>

#include "tests/support/run_binary.h"

namespace evalrun::testing {

TempDir::TempDir(const std::string& prefix) : path_(MakeTempDir(prefix)) {}

TempDir::~TempDir() { RemoveTree(path_); }

void WriteText(const std::string& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  WriteFile(path, text);
}

}  // namespace evalrun::testing
