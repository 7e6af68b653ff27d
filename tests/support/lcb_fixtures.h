// The LiveCodeBench fixtures (tests/fixtures/livecodebench/, README.md
// there): the problems' tests as the official get_evaluation_sample lists
// them (public, then private) and the answer files, for the grader's tests
// and the bench (no GoogleTest here: the bench links this too).
#ifndef EVALRUN_TESTS_SUPPORT_LCB_FIXTURES_H_
#define EVALRUN_TESTS_SUPPORT_LCB_FIXTURES_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scorers/livecodebench/lcb_grade.h"

namespace evalrun::testing {

// The folder, with a trailing '/'.
std::string LcbFixtureDir();
// question_id -> its tests, from test.jsonl, test2.jsonl and test3.jsonl.
Status LcbFixtureProblems(std::map<std::string, LcbTestCases>* out);
// The lines of an answers file of the folder ("answers.jsonl"); throws
// std::runtime_error naming the file and line when one is not JSON.
std::vector<nlohmann::json> LcbFixtureAnswers(const std::string& file);

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_LCB_FIXTURES_H_
