// The hostile answers of tests/fixtures/escape/ through the real evalrun, at
// every sandbox level this machine offers: a whole run against the fake
// server (which answers each problem with the answer its text names), then
// `evalrun score` of the same answers from a file. A decoy process holds an
// API key and a problems file in its command line; the card, the rows and
// their folder are readable by anyone, so that only the sandbox stands
// between an answer and them. Each evalrun exits 0; every hostile answer is
// graded failed and the honest one passed; the key is in no sample and no
// result; once evalrun has exited nothing of an answer is left.
#include <sys/stat.h>

#include <map>

#include "tests/support/e2e.h"
#include "tests/support/escape_check.h"
#include "tests/support/fake_server.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun::testing {
namespace {

const std::vector<std::string>& Answered() {
  static const std::vector<std::string> names = {
      "honest_sum",     "read_tests_by_walking", "read_tests_from_cmdline", "steal_api_key", "outlive_grading",
      "cpu_burners_escape", "clone_parent_zombies",  "sysv_residue",            "file_residue"};
  return names;
}

std::string Fence(const std::string& code) { return "Here you go.\n\n```python\n" + code + "\n```\n"; }

std::string AnswerCode(const std::string& name) {
  return name == "honest_sum" ? "n = int(input())\nprint(sum(map(int, input().split())))" : EscapeAnswer(name);
}

// One copy of abc900_a per answer, its id and text naming the answer.
std::string RowsNamingAnswers() {
  const std::string first = ReadFile(LcbFixtureDir() + "test.jsonl");
  nlohmann::json row = nlohmann::json::parse(first.substr(0, first.find('\n')));
  std::string rows;
  for (const std::string& name : Answered()) {
    nlohmann::json r = row;
    r["question_id"] = "esc_" + name;
    r["question_content"] = row["question_content"].get<std::string>() + "\n[answer: " + name + "]";
    rows += r.dump() + "\n";
  }
  return rows;
}

class E2eLcbEscape : public E2eTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Every answer's verdict, the key nowhere, nothing left.
  void ExpectContained(const std::string& job, const BinaryResult& r) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<nlohmann::json> samples = Samples(job, "livecodebench");
    ASSERT_EQ(samples.size(), Answered().size());
    for (const auto& s : samples) {
      const std::string id = s["id"].get<std::string>();
      EXPECT_EQ(s["passed"].get<bool>(), id == "esc_honest_sum") << s.dump();
      EXPECT_EQ(s.dump().find(EscapeKey()), std::string::npos) << id << " reached the key";
    }
    EXPECT_EQ(ReadFile(dir_ + "/runs/" + job + "/results.json").find(EscapeKey()), std::string::npos);
    EXPECT_EQ(EscapeLeftovers(), std::vector<std::string>{}) << job;
  }
};

TEST_P(E2eLcbEscape, ARunAndAScoreOfHostileAnswersEndWellAndLeaveNothing) {
  const std::string level = GetParam();
  EscapeDecoy decoy;
  ASSERT_TRUE(decoy.ok());
  ASSERT_EQ(EscapeLeftovers(), std::vector<std::string>{}) << "left by an earlier run; remove it first";
  chmod(dir_.c_str(), 0755);
  const std::string rows = dir_ + "/rows.jsonl";
  WriteFile(rows, RowsNamingAnswers());
  FakeServer server{{.slots = 3}};
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json& req) {
    const std::string user = req["messages"][1]["content"].get<std::string>();
    for (const std::string& name : Answered())
      if (user.find("[answer: " + name + "]") != std::string::npos)
        return FakeReply{Fence(AnswerCode(name)), "", "stop"};
    return FakeReply{"no answer", "", "stop"};
  });
  const std::string card = WriteCard(server.base_url(), "3",
                                     R"({"livecodebench": {"data_file": ")" + rows +
                                         R"(", "test_timeout_s": 3, "sandbox_max_level": ")" + level +
                                         R"(", "unsafe_exec": )" + (level == "rlimits" ? "true" : "false") + "}}",
                                     R"("scoring": {"concurrency": 3},)");
  for (const std::string& f : {card, rows}) chmod(f.c_str(), 0644);
  BinaryResult run = Run({"--card", card, "--job", "run"}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json res = Results("run")["parts"]["livecodebench"];
  if (res["sandbox"]["level"] != level) GTEST_SKIP() << level << " cannot be made here: " << res["sandbox"].dump();
  ExpectContained("run", run);

  std::string responses;
  for (const std::string& name : Answered())
    responses += nlohmann::json{{"question_id", "esc_" + name}, {"id", name}, {"response", Fence(AnswerCode(name))}}
                     .dump() + "\n";
  WriteFile(dir_ + "/responses.jsonl", responses);
  BinaryResult score = Run({"score", "--card", card, "--part", "livecodebench", "--input", rows, "--responses",
                            dir_ + "/responses.jsonl", "--job", "score"},
                           300);
  ExpectContained("score", score);
  RemoveEscapeFiles();
}

INSTANTIATE_TEST_SUITE_P(Levels, E2eLcbEscape, ::testing::Values("namespaces", "unshare", "seccomp", "rlimits"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace evalrun::testing
