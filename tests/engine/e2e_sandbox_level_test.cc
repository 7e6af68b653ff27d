// The sandbox level end to end (evals/sandbox/sandbox.h, the LiveCodeBench
// part): the real evalrun against the fake server with the card's
// `sandbox_max_level`, the level and the probe recorded in results.json and
// run.json; with no isolating level (the card caps it at "rlimits") the run
// is refused before any request, its message naming --unsafe-exec, and
// `--unsafe-exec` lets it run (recorded). The model answers nothing useful
// ("no_code"): the verdicts are not the point.
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun::testing {
namespace {

const std::string kFix = LcbFixtureDir();

class E2eSandboxLevel : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    ASSERT_TRUE(server_.Start());
    server_.SetResponder([](const nlohmann::json&) { return FakeReply{"No code from me.", "", "stop"}; });
  }

  std::string Card(const std::string& level) {
    return WriteCard(server_.base_url(), "2",
                     R"({"livecodebench": {"data_file": ")" + kFix + R"(test.jsonl", "test_timeout_s": 3, )"
                     R"("questions": 2, "sandbox_max_level": ")" + level + R"("}})");
  }

  FakeServer server_{{.slots = 2}};
};

TEST_F(E2eSandboxLevel, TheCappedLevelIsTakenAndRecordedWithWhyNotStronger) {
  BinaryResult r = Run({"--card", Card("seccomp"), "--job", "s"}, 240);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("grading in the sandbox at level \"seccomp\""), std::string::npos) << r.err;
  const nlohmann::json res = Results("s")["parts"]["livecodebench"];
  EXPECT_EQ(res["n"], 2);
  EXPECT_EQ(res["failures"]["no_code"], 2);
  const nlohmann::json& box = res["sandbox"];
  EXPECT_EQ(box["level"], "seccomp");
  EXPECT_EQ(box["max_level"], "seccomp");
  EXPECT_EQ(box["unsafe_exec"], false);
  EXPECT_EQ(box["probe"], (nlohmann::json{{"namespaces", "above the cap (seccomp)"},
                                          {"unshare", "above the cap (seccomp)"},
                                          {"seccomp", "ok"}}));
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/s/run.json"));
  EXPECT_EQ(run["sandbox"]["livecodebench"]["level"], "seccomp");
  EXPECT_EQ(run["sandbox"]["livecodebench"]["probe"], box["probe"]);
}

TEST_F(E2eSandboxLevel, NoIsolatingLevelIsRefusedUnlessUnsafeExecIsGiven) {
  BinaryResult refused = Run({"--card", Card("rlimits"), "--job", "r"}, 120);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("no isolating level works on this machine"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("pass --unsafe-exec"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("apt-get install bubblewrap"), std::string::npos) << refused.err;
  EXPECT_EQ(server_.chat_requests(), 0);

  BinaryResult allowed = Run({"--card", Card("rlimits"), "--job", "u", "--unsafe-exec"}, 240);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("NO ISOLATION (--unsafe-exec)"), std::string::npos) << allowed.err;
  const nlohmann::json box = Results("u")["parts"]["livecodebench"]["sandbox"];
  EXPECT_EQ(box["level"], "rlimits");
  EXPECT_EQ(box["unsafe_exec"], true);
  EXPECT_EQ(box["probe"]["rlimits"], "ok");
  EXPECT_EQ(server_.chat_requests(), 2);

  // `score` takes the flag too.
  const std::string responses = dir_ + "/responses.jsonl";
  WriteFile(responses, R"({"question_id": "abc900_a", "response": "none"})" "\n");
  BinaryResult no = Run({"score", "--card", Card("rlimits"), "--part", "livecodebench", "--input",
                         kFix + "test.jsonl", "--responses", responses, "--job", "sc"});
  EXPECT_EQ(no.exit_code, 1) << no.err;
  EXPECT_NE(no.err.find("pass --unsafe-exec"), std::string::npos) << no.err;
  BinaryResult yes = Run({"score", "--card", Card("rlimits"), "--part", "livecodebench", "--input",
                          kFix + "test.jsonl", "--responses", responses, "--job", "sc2", "--unsafe-exec"});
  ASSERT_EQ(yes.exit_code, 0) << yes.err;
  EXPECT_EQ(Results("sc2")["parts"]["livecodebench"]["sandbox"]["level"], "rlimits");
}

// The minimum level (--sandbox or the card's `sandbox`): below it the run is
// refused before any request, saying why each stronger level is missing;
// at or above it the run goes on and records the minimum. The cap stands in
// for a machine that offers no more than "seccomp".
TEST_F(E2eSandboxLevel, ALevelBelowTheMinimumAskedIsRefusedBeforeAnyRequest) {
  BinaryResult refused = Run({"--card", Card("seccomp"), "--job", "m", "--sandbox", "namespaces"}, 120);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("the strongest sandbox this machine offers is \"seccomp\", below the minimum "
                             "\"namespaces\""),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("namespaces: above the cap (seccomp)"), std::string::npos) << refused.err;
  EXPECT_EQ(server_.chat_requests(), 0);

  const std::string card = WriteCard(server_.base_url(), "2",
                                     R"({"livecodebench": {"data_file": ")" + kFix +
                                         R"(test.jsonl", "test_timeout_s": 3, "questions": 2, "sandbox": "unshare", )"
                                         R"("sandbox_max_level": "seccomp"}})");
  BinaryResult by_card = Run({"--card", card, "--job", "c"}, 120);
  EXPECT_EQ(by_card.exit_code, 1) << by_card.err;
  EXPECT_NE(by_card.err.find("below the minimum \"unshare\""), std::string::npos) << by_card.err;
  // The flag overrides the card's minimum.
  BinaryResult ok = Run({"--card", card, "--job", "ok", "--sandbox", "seccomp"}, 240);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const nlohmann::json box = Results("ok")["parts"]["livecodebench"]["sandbox"];
  EXPECT_EQ(box["level"], "seccomp");
  EXPECT_EQ(box["minimum"], "seccomp");
  EXPECT_EQ(server_.chat_requests(), 2);
  BinaryResult report = RunBinary({EvalrunBinary(), "report", dir_ + "/runs/ok"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(ReadFile(dir_ + "/runs/ok/report.md").find("Graded in the code sandbox at level \"seccomp\" (minimum "
                                                        "asked: \"seccomp\")"),
            std::string::npos);
}

}  // namespace
}  // namespace evalrun::testing
