// The differential test: our answers to our fixture problems
// (tests/fixtures/livecodebench/, make_fixtures.py) graded by evalrun's
// harness give the verdicts the OFFICIAL grader gave them
// (official_verdicts.json, made by run_official.py from
// LiveCodeBench/LiveCodeBench @ 28fef95e; README.md there), test result for
// test result, error_code and error_message; and the `fixed` profile passes
// exactly the answers marked as official false negatives and agrees with
// the official everywhere else.
//
// The official profile's parity runs at every sandbox level this machine
// offers, the default (namespaces) first, and with the plain runner (no
// sandbox): what an answer may read and start differs between the levels,
// its verdict must not (NumPy needs the libraries behind /etc/alternatives,
// big integers the exact comparison). A level the machine cannot make is
// skipped with the probe's reasons. The harness runs with Debian's python3
// (/usr/bin/python3, the official verdicts were recorded with it; else
// python3 on PATH), answers in parallel; the time-limit and overall-limit
// cases make each run take 10 to 40 s (the latter on a loaded machine).
#include <gtest/gtest.h>

#include <unistd.h>

#include <future>
#include <map>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "evals/sandbox/sandbox.h"
#include "scorers/livecodebench/lcb_grade.h"
#include "scorers/livecodebench/lcb_plain_runner.h"
#include "scorers/livecodebench/lcb_prompt.h"
#include "scorers/livecodebench/lcb_sandbox_runner.h"
#include "scorers/livecodebench/lcb_verdict.h"
#include "tests/support/lcb_fixtures.h"
#include "tests/support/run_binary.h"

namespace evalrun {
namespace {

const std::string kDir = testing::LcbFixtureDir();

std::string Python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

std::map<std::string, LcbTestCases> Problems() {
  std::map<std::string, LcbTestCases> out;
  Status st = testing::LcbFixtureProblems(&out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

std::vector<nlohmann::json> Answers(const std::string& file = "answers.jsonl") {
  return testing::LcbFixtureAnswers(file);
}

std::vector<int> OfficialResults(const nlohmann::json& v) {
  std::vector<int> out;
  for (const auto& r : v["results"]) out.push_back(r.is_boolean() ? (r.get<bool>() ? 1 : 0) : r.get<int>());
  return out;
}

// Grades every answer with `profile` through `runner`, 8 at a time.
std::vector<LcbGrade> GradeAll(const std::vector<nlohmann::json>& answers, LcbProfile profile, int timeout_s,
                               const LcbRunner& runner = PlainPythonRunner(Python())) {
  const auto problems = Problems();
  std::vector<LcbGrade> grades(answers.size());
  for (size_t start = 0; start < answers.size(); start += 8) {
    std::vector<std::future<void>> batch;
    for (size_t i = start; i < std::min(answers.size(), start + 8); ++i)
      batch.push_back(std::async(std::launch::async, [&, i] {
        const std::string code = ExtractLcbCode(answers[i]["response"].get<std::string>());
        Status st = GradeLcbCode(code, problems.at(answers[i]["question_id"].get<std::string>()),
                                 {timeout_s, profile}, runner, &grades[i]);
        EXPECT_TRUE(st.ok()) << answers[i]["id"] << ": " << st.ToString();
      }));
    for (auto& f : batch) f.get();
  }
  return grades;
}

// Grades `answers_file` with the official profile through `runner` and
// checks every verdict against the official grader's (`verdicts_file`);
// counts the failure kinds.
std::map<std::string, int> ExpectOfficialVerdicts(const std::string& answers_file, const std::string& verdicts_file,
                                                  const LcbRunner& runner) {
  const nlohmann::json official = nlohmann::json::parse(testing::ReadFile(kDir + verdicts_file));
  const std::vector<nlohmann::json> answers = Answers(answers_file);
  EXPECT_EQ(official["verdicts"].size(), answers.size());
  if (official["verdicts"].size() != answers.size()) return {};
  const std::vector<LcbGrade> grades = GradeAll(answers, LcbProfile::kOfficial, official["timeout"].get<int>(), runner);
  std::map<std::string, int> kinds;
  int passed = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    const nlohmann::json& want = official["verdicts"][i];
    const std::string id = answers[i]["id"].get<std::string>();
    EXPECT_EQ(want["id"], id);
    const std::string code = ExtractLcbCode(answers[i]["response"].get<std::string>());
    EXPECT_EQ(Sha256Hex(code), want["code_sha256"]) << id << ": extracted code differs";
    EXPECT_EQ(grades[i].results, OfficialResults(want)) << id << " " << grades[i].error_message << " "
                                                        << grades[i].error;
    EXPECT_EQ(grades[i].error_code, want["error_code"].is_null() ? 0 : want["error_code"].get<int>()) << id;
    EXPECT_EQ(grades[i].error_message, want["error_message"].is_null() ? "" : want["error_message"].get<std::string>())
        << id;
    EXPECT_EQ(grades[i].passed(), want["passed"].get<bool>()) << id;
    LcbVerdict v = MakeLcbVerdict(grades[i], code, false);
    ++kinds[LcbFailureName(v.failure)];
    passed += v.passed;
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(passed) / answers.size(), official["pass@1"].get<double>());
  return kinds;
}

// The parity runs: "plain" (no sandbox), then each sandbox level.
class LcbParity : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "plain") return;
    SandboxLevel level;
    ASSERT_TRUE(ParseSandboxLevel(GetParam(), &level));
    SandboxOptions o = LcbSandboxOptions(Python(), level == SandboxLevel::kRlimits);
    o.max_level = level;
    SandboxProbe probe;
    ASSERT_TRUE(MakeSandbox(o, RealProcessRunner::Default(), &box_, &probe).ok()) << probe.Notes();
    if (box_->level() != GetParam()) GTEST_SKIP() << GetParam() << " cannot be made here:\n" << probe.Notes();
  }
  LcbRunner Runner() const { return box_ ? SandboxLcbRunner(box_.get()) : PlainPythonRunner(Python()); }

  std::unique_ptr<CodeSandbox> box_;
};

TEST_P(LcbParity, OfficialProfileMatchesTheOfficialGraderVerdictForVerdict) {
  std::map<std::string, int> kinds = ExpectOfficialVerdicts("answers.jsonl", "official_verdicts.json", Runner());
  // Every failure kind but cut_off (a property of the response) is covered.
  for (const char* k : {"wrong_answer", "time_limit", "runtime_error", "compile_error", "no_code"})
    EXPECT_GT(kinds[k], 0) << k;
}

// NumPy programs (arrays, np.int64 / np.float64 / np.bool_ printed and
// returned) and stdin read through a name bound before the test.
TEST_P(LcbParity, NumPyAndBoundStdinProgramsMatchTheOfficialGrader) {
  std::map<std::string, int> kinds =
      ExpectOfficialVerdicts("answers_more.jsonl", "official_verdicts_more.json", Runner());
  EXPECT_GT(kinds["none"], 8);
  EXPECT_GT(kinds["runtime_error"], 2);
  EXPECT_GT(kinds["wrong_answer"], 1);
}

// Integers of up to 9,543 digits, negative ones among them, returned and
// printed; floats, strings and a lowered digit limit beside them.
TEST_P(LcbParity, BigIntegersMatchTheOfficialGrader) {
  std::map<std::string, int> kinds =
      ExpectOfficialVerdicts("answers_bigint.jsonl", "official_verdicts_bigint.json", Runner());
  EXPECT_EQ(kinds["none"], 5);
  EXPECT_EQ(kinds["wrong_answer"], 6);
  EXPECT_EQ(kinds["runtime_error"], 1);
}

INSTANTIATE_TEST_SUITE_P(Levels, LcbParity,
                         ::testing::Values("namespaces", "unshare", "seccomp", "rlimits", "plain"),
                         [](const auto& info) { return info.param; });

// `fixed` passes the one official false negative among the NumPy and
// bound-stdin answers and agrees everywhere else.
TEST(LcbDifferentialTest, FixedProfileOnTheNumPyAnswersAgreesButForOneFalseNegative) {
  const nlohmann::json official = nlohmann::json::parse(testing::ReadFile(kDir + "official_verdicts_more.json"));
  const std::vector<nlohmann::json> answers = Answers("answers_more.jsonl");
  const std::vector<LcbGrade> fixed = GradeAll(answers, LcbProfile::kFixed, official["timeout"].get<int>());
  int fixed_differs = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (answers[i]["fixed_passes_where_official_fails"].get<bool>()) {
      ++fixed_differs;
      EXPECT_TRUE(fixed[i].passed()) << answers[i]["id"];
    } else {
      EXPECT_EQ(fixed[i].results, OfficialResults(official["verdicts"][i])) << answers[i]["id"];
    }
  }
  EXPECT_EQ(fixed_differs, 1);
}

TEST(LcbDifferentialTest, FixedProfilePassesTheOfficialFalseNegativesAndAgreesElsewhere) {
  const nlohmann::json official = nlohmann::json::parse(testing::ReadFile(kDir + "official_verdicts.json"));
  const std::vector<nlohmann::json> answers = Answers();
  const std::vector<LcbGrade> grades = GradeAll(answers, LcbProfile::kFixed, official["timeout"].get<int>());
  int fixed = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    const std::string id = answers[i]["id"].get<std::string>();
    if (answers[i]["fixed_passes_where_official_fails"].get<bool>()) {
      ++fixed;
      EXPECT_FALSE(official["verdicts"][i]["passed"].get<bool>()) << id;
      EXPECT_TRUE(grades[i].passed()) << id << ": " << grades[i].error_message << " " << grades[i].error;
    } else {
      EXPECT_EQ(grades[i].results, OfficialResults(official["verdicts"][i])) << id;
    }
  }
  EXPECT_EQ(fixed, 7);
}

TEST(LcbDifferentialTest, ARunnerThatCannotStartIsAnErrorNotAVerdict) {
  LcbGrade g;
  Status st = GradeLcbCode("print(1)", {{"1\n"}, {"1\n"}, ""}, {}, PlainPythonRunner("/nonexistent/python3"), &g);
  EXPECT_EQ(st.code(), Status::Code::kNotFound) << st.ToString();
}

}  // namespace
}  // namespace evalrun
