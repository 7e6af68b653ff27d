// LiveCodeBench end to end: the real evalrun against the fake server, whose
// model answers each fixture problem (tests/fixtures/livecodebench/) with one
// of the fixture answers; the answers graded in the sandbox give the
// official grader's verdicts (official_verdicts.json); report and compare
// (McNemar on pass/fail); a run killed with -9 while it grades resumes
// without asking again; `evalrun score` on recorded answers; a grader that
// cannot start stops the run before any request.
//
// The fixture rows are given as the card's `data_file` (their sha256 is not
// the manifest's). The cards set unsafe_exec so that a machine without user
// namespaces still grades (at the "rlimits" level; the level is recorded and
// checked against what the sandbox probe reports). The per-test timeout is
// 3 s, as the official verdicts were recorded.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "evals/benchmarks/livecodebench/lcb_rows.h"
#include "evals/run/sample_codec.h"
#include "evals/run/verdict_codec.h"
#include "evals/sandbox/sandbox.h"
#include "scorers/livecodebench/lcb_sandbox_runner.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun::testing {
namespace {

const std::string kFix = LcbFixtureDir();

std::vector<int> ResultsOf(const nlohmann::json& v) {
  std::vector<int> out;
  for (const auto& r : v["results"]) out.push_back(r.is_boolean() ? (r.get<bool>() ? 1 : 0) : r.get<int>());
  return out;
}

class E2eLiveCodeBench : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    rows_ = dir_ + "/rows.jsonl";
    WriteFile(rows_, ReadFile(kFix + "test.jsonl") + ReadFile(kFix + "test2.jsonl"));
    for (const char* f : {"test.jsonl", "test2.jsonl"}) {
      LcbReadOptions o;
      o.decode_private_tests = false;
      ASSERT_TRUE(ReadLcbFile(kFix + f, f, o, [&](LcbProblem&& p) {
                    content_[p.question_id] = p.question_content;
                    return Status::Ok();
                  }).ok());
    }
    for (const auto& a : Lines(kFix + "answers.jsonl")) answers_[a["id"].get<std::string>()] = a;
    const nlohmann::json official = nlohmann::json::parse(ReadFile(kFix + "official_verdicts.json"));
    for (const auto& v : official["verdicts"]) official_[v["id"].get<std::string>()] = v;
    ASSERT_EQ(official_.size(), 45u);
  }

  // The model answers question q with the fixture answer picks[q]
  // (`prefix` put at the top of its code).
  void Serve(FakeServer* server, std::map<std::string, std::string> picks, const std::string& prefix = "") {
    server->SetResponder([this, picks, prefix](const nlohmann::json& req) {
      const std::string user = req["messages"][1]["content"].get<std::string>();
      for (const auto& [q, answer] : picks)
        if (user.find(content_.at(q)) != std::string::npos) {
          std::string text = answers_.at(answer)["response"].get<std::string>();
          const size_t at = text.find("```python\n");
          if (at != std::string::npos) text.insert(at + 10, prefix);
          return FakeReply{text, "", "stop"};
        }
      return FakeReply{"I do not know this one.", "", "stop"};
    });
  }

  std::string Card(const std::string& base_url, const std::string& extra = "") {
    return WriteCard(base_url, "2",
                     R"({"livecodebench": {"data_file": ")" + rows_ +
                         R"(", "test_timeout_s": 3, "unsafe_exec": true, "max_tokens": 4096)" + extra + "}}",
                     R"("scoring": {"concurrency": 2},)");
  }

  // Every sample's verdict is the official's for the answer given.
  void ExpectOfficial(const std::vector<nlohmann::json>& samples, const std::map<std::string, std::string>& picks) {
    ASSERT_EQ(samples.size(), picks.size());
    for (const auto& s : samples) {
      const std::string q = s["id"].get<std::string>();
      const auto pick = picks.find(q);
      ASSERT_NE(pick, picks.end()) << "a sample of a question not asked: " << q;
      const auto found = official_.find(pick->second);
      ASSERT_NE(found, official_.end()) << "no official verdict for answer " << pick->second;
      const nlohmann::json& want = found->second;
      EXPECT_EQ(s["outcomes"].get<std::vector<int>>(), ResultsOf(want)) << q << " " << s["message"];
      EXPECT_EQ(s["passed"], want["passed"]) << q;
      EXPECT_EQ(s["code_sha256"], want["code_sha256"]) << q;
      EXPECT_EQ(s["profile"], "official");
      if (!want["passed"].get<bool>()) {
        EXPECT_EQ(s["message"], want["error_message"]) << q;
      }
    }
  }

  std::string SandboxLevelHere() {
    std::unique_ptr<CodeSandbox> box;
    if (!MakeSandbox(LcbSandboxOptions("/usr/bin/python3", true), RealProcessRunner::Default(), &box).ok()) return "";
    return box->level();
  }

  std::string rows_;
  std::map<std::string, std::string> content_;       // question_id -> question_content
  std::map<std::string, nlohmann::json> answers_;    // answer id -> fixture answer line
  std::map<std::string, nlohmann::json> official_;   // answer id -> the official verdict
};

// Two official false negatives (sum_iterate, mean_nested_tuples), a wrong
// answer and two passes; then answers that pass where those fail.
const std::map<std::string, std::string> kSetA = {{"abc900_a", "sum_iterate"},
                                                  {"1900A", "avg_float"},
                                                  {"3900", "pair_wrong"},
                                                  {"3950", "mean_nested_tuples"},
                                                  {"abc950_d", "chain_recursion"}};
const std::map<std::string, std::string> kSetB = {{"abc900_a", "sum_input"},
                                                  {"1900A", "avg_float_off"},
                                                  {"3900", "pair_list"},
                                                  {"3950", "mean_exact"},
                                                  {"abc950_d", "chain_recursion_low"}};

TEST_F(E2eLiveCodeBench, ARunGradesAsTheOfficialGraderAndReportAndCompareReadIt) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  Serve(&server, kSetA);
  BinaryResult a = Run({"--card", Card(server.base_url()), "--job", "a"}, 240);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("window: data_file (" + rows_ + "), contest_date any: 5 problems"), std::string::npos) << a.err;
  ExpectOfficial(Samples("a", "livecodebench"), kSetA);
  const nlohmann::json r = Results("a")["parts"]["livecodebench"];
  EXPECT_EQ(r["kind"], "code");
  EXPECT_EQ(r["n"], 5);
  EXPECT_DOUBLE_EQ(r["pass_at_1"].get<double>(), 0.4);
  EXPECT_EQ(r["profile"], "official");
  EXPECT_DOUBLE_EQ(r["profiles"]["official"]["pass_at_1"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(r["profiles"]["fixed"]["pass_at_1"].get<double>(), 0.8);
  EXPECT_EQ(r["profiles_differ"], (nlohmann::json{"abc900_a", "3950"}));
  EXPECT_EQ(r["failures"], (nlohmann::json{{"runtime_error", 1}, {"wrong_answer", 2}}));
  EXPECT_EQ(r["by_difficulty"]["easy"]["n"], 2);
  EXPECT_EQ(r["by_platform"]["atcoder"]["passed"], 1);
  EXPECT_EQ(r["by_month"]["2024-10"]["pass_at_1"], 1.0);
  EXPECT_EQ(r["sandbox"]["level"], SandboxLevelHere());
  EXPECT_EQ(r["sandbox"]["interpreter"]["path"], "/usr/bin/python3");
  EXPECT_FALSE(r["sandbox"]["interpreter"]["version"].get<std::string>().empty());
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/a/run.json"));
  EXPECT_EQ(run["sandbox"]["livecodebench"]["level"], r["sandbox"]["level"]);

  Serve(&server, kSetB);
  BinaryResult b = Run({"--card", Card(server.base_url()), "--job", "b"}, 240);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ExpectOfficial(Samples("b", "livecodebench"), kSetB);

  BinaryResult c = RunBinary({EvalrunBinary(), "compare", dir_ + "/runs/a", dir_ + "/runs/b", "--json"});
  ASSERT_TRUE(c.exit_code == 0 || c.exit_code == 4) << c.err;
  const nlohmann::json doc = nlohmann::json::parse(c.out.substr(c.out.find('{')));
  ASSERT_EQ(doc["parts"].size(), 1u);
  const nlohmann::json& pd = doc["parts"][0];
  EXPECT_EQ(pd["kind"], "code");
  EXPECT_EQ(pd["headline"], "pass_at_1");
  const nlohmann::json& overall = pd["metrics"][0]["overall"];
  EXPECT_EQ(overall["a_better"], 2);  // 1900A, abc950_d
  EXPECT_EQ(overall["b_better"], 3);  // abc900_a, 3900, 3950
  EXPECT_DOUBLE_EQ(overall["p_value"].get<double>(), 1.0);  // McNemar exact, 2 vs 3
  EXPECT_EQ(pd["flipped"].size(), 5u);

  BinaryResult rep = RunBinary({EvalrunBinary(), "report", dir_ + "/runs/a"});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string md = ReadFile(dir_ + "/runs/a/report.md");
  EXPECT_NE(md.find("LiveCodeBench: pass@1 by difficulty"), std::string::npos) << md;
  EXPECT_NE(md.find("pass@1 (official)"), std::string::npos) << md;
}

// The weaker levels (the card caps the probe) grade as the official grader
// too: the same answers, the same verdicts, the level recorded.
TEST_F(E2eLiveCodeBench, EveryLevelBelowBubblewrapGradesAsTheOfficialGrader) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  Serve(&server, kSetA);
  for (const std::string level : {"unshare", "seccomp"}) {
    BinaryResult r = Run({"--card", Card(server.base_url(), R"(, "sandbox_max_level": ")" + level + "\""),
                          "--job", level},
                         240);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json box = Results(level)["parts"]["livecodebench"]["sandbox"];
    if (box["level"] != level) {
      // This machine cannot make it: the probe says why, and a weaker level graded.
      EXPECT_NE(box["probe"][level], "ok") << box.dump();
      continue;
    }
    ExpectOfficial(Samples(level, "livecodebench"), kSetA);
    EXPECT_EQ(box["probe"][level], "ok");
  }
}

TEST_F(E2eLiveCodeBench, KilledWhileGradingResumesWithoutAskingAgain) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  const std::map<std::string, std::string> pass = {{"abc900_a", "sum_input"},
                                                   {"1900A", "avg_float"},
                                                   {"3900", "pair_list"},
                                                   {"3950", "mean_exact"},
                                                   {"abc950_d", "chain_recursion"}};
  // Each grading takes a second or more: a kill lands while it grades.
  Serve(&server, pass, "import time\ntime.sleep(1)\n");
  const std::string card = WriteCard(server.base_url(), "2",
                                     R"({"livecodebench": {"data_file": ")" + rows_ +
                                         R"(", "test_timeout_s": 3, "unsafe_exec": true}})",
                                     R"("scoring": {"concurrency": 1},)");
  const std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "k",
                                         "--out", dir_ + "/runs", "--data-dir", dir_};
  const int pid = SpawnBinary(argv, dir_ + "/k.out", dir_ + "/k.err");
  ASSERT_GT(pid, 0);
  const std::string part = dir_ + "/runs/k/livecodebench";
  bool ready = false;
  for (int i = 0; i < 1200 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ready = std::filesystem::exists(part + "/answers.jsonl") && Lines(part + "/answers.jsonl").size() == 5 &&
            std::filesystem::exists(part + "/samples.jsonl") && Lines(part + "/samples.jsonl").size() >= 1;
  }
  ASSERT_TRUE(ready) << ReadFile(dir_ + "/k.err");
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitBinary(pid, 30).signal, SIGKILL);
  const size_t graded_before = Lines(part + "/samples.jsonl").size();
  ASSERT_LT(graded_before, 5u);
  EXPECT_EQ(server.chat_requests(), 5);

  BinaryResult resumed = RunBinary(argv, 240);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(server.chat_requests(), 5);  // nothing asked again
  EXPECT_NE(resumed.err.find("answered, not scored"), std::string::npos) << resumed.err;
  const auto samples = Samples("k", "livecodebench");
  ASSERT_EQ(samples.size(), 5u);
  for (const auto& s : samples) EXPECT_EQ(s["passed"], true) << s.dump();
  const nlohmann::json r = Results("k")["parts"]["livecodebench"];
  EXPECT_EQ(r["complete"], true);
  EXPECT_DOUBLE_EQ(r["pass_at_1"].get<double>(), 1.0);
  EXPECT_FALSE(std::filesystem::exists(part + "/answers.jsonl"));
}

TEST_F(E2eLiveCodeBench, ScoreGradesRecordedAnswersAsTheOfficialGrader) {
  const std::string card = Card("http://127.0.0.1:1/v1");
  // A compile error, no code, a wrong answer, a runtime error, a float off in
  // the last bit, deep recursion; passes.
  const std::vector<std::map<std::string, std::string>> sets = {
      {{"abc900_a", "sum_syntax_error"}, {"1900A", "avg_missing_line"}, {"3900", "pair_exception"},
       {"3950", "mean_float_noise"}, {"abc950_d", "chain_recursion_limit"}},
      {{"abc900_a", "sum_no_code"}, {"1900A", "avg_extra_spaces"}, {"3900", "pair_tuple"}, {"3950", "mean_exact"},
       {"abc950_d", "chain_recursion_low"}}};
  for (size_t k = 0; k < sets.size(); ++k) {
    std::string lines;
    for (const auto& [q, answer] : sets[k])
      lines += nlohmann::json{{"question_id", q}, {"id", answer}, {"response", answers_.at(answer)["response"]}}
                   .dump() + "\n";
    const std::string responses = dir_ + "/responses" + std::to_string(k) + ".jsonl";
    WriteFile(responses, lines);
    const std::string job = "s" + std::to_string(k);
    BinaryResult s = Run({"score", "--card", card, "--part", "livecodebench", "--input", rows_, "--responses",
                          responses, "--job", job},
                         240);
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.err.find("window: input (" + rows_ + ")"), std::string::npos) << s.err;
    ExpectOfficial(Samples(job, "livecodebench"), sets[k]);
  }
  const auto no_code = Samples("s1", "livecodebench");
  bool seen = false;
  for (const auto& s : no_code)
    if (s["id"] == "abc900_a") {
      seen = true;
      EXPECT_EQ(s["failure"], "no_code");
    }
  EXPECT_TRUE(seen);
  EXPECT_EQ(Results("s0")["parts"]["livecodebench"]["failures"]["compile_error"], 1);
}

TEST_F(E2eLiveCodeBench, AGraderThatCannotStartStopsTheRunBeforeAnyRequest) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  Serve(&server, kSetA);
  BinaryResult r = Run({"--card", Card(server.base_url(), R"(, "python": "/nonexistent/python3")"), "--job", "x"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("parts.livecodebench.python"), std::string::npos) << r.err;
  EXPECT_EQ(server.chat_requests(), 0);
}

TEST_F(E2eLiveCodeBench, AWindowAndAReleaseAreCheckedAndPrinted) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  Serve(&server, kSetB);
  // contest_date 2024-09-28 and 2024-10-05 are in; the three of 2023-2024/03 are not.
  BinaryResult r = Run({"--card", Card(server.base_url(), R"(, "start_date": "2024-09-01", "end_date": "2024-12-31")"),
                        "--job", "w"},
                       240);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("contest_date 2024-09-01 .. 2024-12-31: 2 problems"), std::string::npos) << r.err;
  EXPECT_EQ(Samples("w", "livecodebench").size(), 2u);
  const nlohmann::json info = Results("w")["parts"]["livecodebench"]["info"];
  EXPECT_EQ(info["window"]["problems"], 2);
  EXPECT_EQ(info["dataset"]["release"], "data_file");
  BinaryResult bad = Run({"--card", Card(server.base_url(), R"(, "release": "release_v9")"), "--job", "bad"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("parts.livecodebench.release"), std::string::npos) << bad.err;
}

TEST(CodeVerdictCodec, AVerdictReadsBackAsWrittenAndABadFailureIsNamed) {
  CodeVerdict v;
  v.passed = false;
  v.failure = "wrong_answer";
  v.profile = "official";
  v.outcomes = {1, -2};
  v.failed_test = 1;
  v.message = "Wrong Answer";
  v.code_sha256 = "ab";
  v.cut_off = true;
  v.other = CodeOutcome{"fixed", true, "none"};
  nlohmann::json line;
  codec_internal::CodecFor(VerdictKind::kCode).Encode(v, &line);
  Verdict back;
  ASSERT_TRUE(codec_internal::CodecFor(VerdictKind::kCode).Decode(codec_internal::LineReader(line, "x:1"), &back).ok());
  const CodeVerdict& b = std::get<CodeVerdict>(back);
  EXPECT_EQ(b.outcomes, v.outcomes);
  EXPECT_EQ(b.failed_test, 1);
  EXPECT_TRUE(b.cut_off);
  ASSERT_TRUE(b.other.has_value());
  EXPECT_EQ(b.other->profile, "fixed");
  EXPECT_TRUE(b.other->passed);
  EXPECT_EQ(HeadlineScore(back), 0.0);
  line["failure"] = "oops";
  Status st = codec_internal::CodecFor(VerdictKind::kCode).Decode(codec_internal::LineReader(line, "x:1"), &back);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("x:1: failure"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace evalrun::testing
