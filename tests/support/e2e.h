// Shared pieces of the end-to-end tests: a temp folder, a card pointing at
// the fake server, running the real evalrun binary, reading what it wrote
// (jsonl_file.h).
#ifndef EVALRUN_TESTS_SUPPORT_E2E_H_
#define EVALRUN_TESTS_SUPPORT_E2E_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/jsonl_file.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  void TearDown() override { RemoveTree(dir_); }

  // A card with the given server and `parts` object (JSON text).
  std::string WriteCard(const std::string& base_url, const std::string& slots, const std::string& parts,
                        const std::string& extra_top = "") {
    std::string card = R"({
      "name": "e2e",
      "model": {"name": "fake"},
      "server": {"base_url": ")" + base_url + R"(", "slots": )" + slots + R"(, "ready_timeout_s": 20,
                 "request_timeout_base_s": 30},
      "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
      "thinking": false,)" + extra_top + R"(
      "parts": )" + parts + "}";
    std::string path = dir_ + "/card.json";
    WriteFile(path, card);
    return path;
  }

  // evalrun with --out <tmp>/runs --data-dir <shared datasets> and `args`.
  BinaryResult Run(const std::vector<std::string>& args, double timeout_s = 120) {
    std::vector<std::string> argv = {EvalrunBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const char* a : {"--out", "--data-dir"}) {
      bool given = false;
      for (const auto& x : args) given |= x == a;
      if (given) continue;
      argv.push_back(a);
      argv.push_back(std::string(a) == "--out" ? dir_ + "/runs" : DatasetsDir());
    }
    return RunBinary(argv, timeout_s);
  }

  // The lines of a JSON Lines file (jsonl_file.h: a line that is not JSON
  // fails the test); a file not there (yet) has none.
  std::vector<nlohmann::json> Lines(const std::string& path) {
    if (!std::filesystem::exists(path)) return {};
    return ReadJsonLines(path);
  }
  std::vector<nlohmann::json> Samples(const std::string& job, const std::string& part) {
    return Lines(dir_ + "/runs/" + job + "/" + part + "/samples.jsonl");
  }
  nlohmann::json Results(const std::string& job) {
    return nlohmann::json::parse(ReadFile(dir_ + "/runs/" + job + "/results.json"));
  }

  std::string dir_;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_E2E_H_
