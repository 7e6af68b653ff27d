#include "tests/support/lcb_fixtures.h"

#include <stdexcept>

#include "evals/benchmarks/livecodebench/lcb_rows.h"
#include "tests/support/jsonl_file.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {

std::string LcbFixtureDir() { return FixturePath("livecodebench/"); }

Status LcbFixtureProblems(std::map<std::string, LcbTestCases>* out) {
  for (const char* f : {"test.jsonl", "test2.jsonl", "test3.jsonl"}) {
    EVALRUN_RETURN_IF_ERROR(ReadLcbFile(LcbFixtureDir() + f, f, {}, [&](LcbProblem&& p) {
      LcbTestCases& t = (*out)[p.question_id];
      for (const auto* list : {&p.public_tests, &p.private_tests})
        for (const auto& c : *list) {
          t.inputs.push_back(c.input);
          t.outputs.push_back(c.output);
        }
      t.fn_name = p.func_name;
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

std::vector<nlohmann::json> LcbFixtureAnswers(const std::string& file) {
  const JsonLines answers = LoadJsonLines(LcbFixtureDir() + file);
  if (!answers.error.empty()) throw std::runtime_error(answers.error);
  return answers.values();
}

}  // namespace evalrun::testing
