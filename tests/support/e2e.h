// Shared pieces of the end-to-end tests: a temp folder, a card pointing at
// the fake server (test_card.h), running the real evalrun binary, reading
// what it wrote (jsonl_file.h).
#ifndef EVALRUN_TESTS_SUPPORT_E2E_H_
#define EVALRUN_TESTS_SUPPORT_E2E_H_

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/jsonl_file.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_card.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  void TearDown() override { RemoveTree(dir_); }

  // The fake server's card (test_card.h) at <tmp>/card.json, with JSON text
  // spliced in: `slots` is the value of server.slots and any further server
  // members ("2", "\"auto\"", "1, \"retries\": 0"), `parts` the parts
  // object, `extra_top` further top-level members, each ending in a comma
  // ("\"max_failed\": 0,"). Text that is not JSON fails the test.
  std::string WriteCard(const std::string& base_url, const std::string& slots, const std::string& parts,
                        const std::string& extra_top = "") {
    nlohmann::json card = TestCard(base_url, JsonText(parts));
    card["server"].update(JsonText("{\"slots\": " + slots + "}"));
    std::string top = extra_top;
    while (!top.empty() && (top.back() == ',' || std::isspace(static_cast<unsigned char>(top.back())))) top.pop_back();
    card.update(JsonText("{" + top + "}"));
    return WriteCard(card);
  }
  // `card` at <tmp>/card.json.
  std::string WriteCard(const nlohmann::json& card) { return WriteCardFile(dir_ + "/card.json", card); }

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

 private:
  static nlohmann::json JsonText(const std::string& text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) ADD_FAILURE() << "not JSON: " << text;
    return j.is_discarded() ? nlohmann::json::object() : j;
  }
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_E2E_H_
