// End to end: a job killed or interrupted in the middle is resumed by the
// same command (same --job) without losing or repeating an answer, and a
// job is never resumed against another card or server model unless asked.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "tests/support/e2e.h"
#include "tests/support/wait_for.h"
#include "tests/support/fake_server.h"
#include "tests/support/jsonl_file.h"

namespace evalrun::testing {
namespace {

std::string PromptOf(const nlohmann::json& request) {
  const auto& m = request["messages"];
  return m.empty() ? std::string() : m.back().value("content", std::string());
}

// Every regular file under `root` (relative path -> bytes).
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[std::filesystem::relative(e.path(), root).string()] = ReadFile(e.path().string());
  return files;
}

size_t CountLines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

class E2eResume : public E2eTest {
 protected:
  std::string MmluCard(const std::string& base_url, int questions, int max_tokens = 64) {
    return WriteCard(base_url, "2", R"({"mmlupro": {"questions": )" + std::to_string(questions) +
                                        R"(, "max_tokens": )" + std::to_string(max_tokens) + "}}");
  }
  std::vector<std::string> Argv(const std::string& card, const std::string& job,
                                const std::vector<std::string>& extra = {}) {
    std::vector<std::string> a = {EvalrunBinary(), "--card", card, "--job", job, "--out", dir_ + "/runs",
                                  "--data-dir", DatasetsDir()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  std::string SamplesPath(const std::string& job) { return dir_ + "/runs/" + job + "/mmlupro/samples.jsonl"; }
  std::set<std::string> PlannedIds(const std::string& job) {
    const nlohmann::json results = Results(job);
    std::set<std::string> ids;
    for (const auto& id : results["parts"]["mmlupro"]["info"]["ids"]) ids.insert(id.get<std::string>());
    return ids;
  }
  // The ids of a finished job's samples; fails the test on a repeated id.
  std::set<std::string> AnsweredOnce(const std::string& job) {
    std::set<std::string> ids;
    for (const auto& s : Samples(job, "mmlupro"))
      EXPECT_TRUE(ids.insert(s["id"].get<std::string>()).second) << "answered twice: " << s["id"];
    return ids;
  }
};

// kill -9 in the middle of a run, with a torn last line as a crash in the
// middle of a write leaves it; the same command then completes the job.
// Cuts the last line of `path` in two; returns that line (parsed) and the
// lines before it in *kept.
nlohmann::json TearLastLine(const std::string& path, std::string* kept) {
  const std::string text = ReadFile(path);
  EXPECT_FALSE(text.empty()) << path;
  if (text.empty()) return nlohmann::json::object();
  EXPECT_EQ(text.back(), '\n');
  const size_t last_start = text.rfind('\n', text.size() - 2) + 1;
  *kept = text.substr(0, last_start);
  const std::string last_line = text.substr(last_start, text.size() - 1 - last_start);
  WriteFile(path, *kept + last_line.substr(0, last_line.size() / 2));
  return nlohmann::json::parse(last_line);
}

std::set<std::string> Shas(const std::string& lines) {
  std::set<std::string> shas;
  for (const nlohmann::json& line : ParseJsonLines(lines, "lines"))
    shas.insert(line.at("prompt_sha256").get<std::string>());
  return shas;
}

TEST_F(E2eResume, KillNineThenResumeAnswersEachQuestionOnce) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) {
    FakeReply r{"Answer: C", "", "stop"};
    r.delay_ms = 40;
    return r;
  });
  const int kQuestions = 30;
  const std::string card = MmluCard(server.base_url(), kQuestions);
  const std::string samples_path = SamplesPath("k");
  int pid = SpawnBinary(Argv(card, "k"), dir_ + "/out1.txt", dir_ + "/err1.txt");
  ASSERT_GT(pid, 0);
  // Answers count once journaled; the scoring stage writes samples.jsonl
  // after, in batches (its first answer at once).
  const std::string journal_path = dir_ + "/runs/k/mmlupro/answers.jsonl";
  bool enough = WaitFor(
      [&] { return CountLines(ReadFile(journal_path)) >= 8 && CountLines(ReadFile(samples_path)) >= 1; }, 60);
  kill(pid, SIGKILL);
  BinaryResult killed = WaitBinary(pid, 20);
  ASSERT_TRUE(enough) << ReadFile(dir_ + "/err1.txt");
  EXPECT_EQ(killed.signal, SIGKILL);

  // Tear the last line of both files in two, as a crash in the middle of
  // their writes would: the answer journal (answers.jsonl: each answer as it
  // arrived) and samples.jsonl (the scored records).
  std::string kept;
  const nlohmann::json torn = TearLastLine(samples_path, &kept);
  std::string kept_journal;
  const nlohmann::json torn_answer = TearLastLine(journal_path, &kept_journal);
  const std::string run_json = ReadFile(dir_ + "/runs/k/run.json");
  std::set<std::string> kept_shas = Shas(kept), journaled_shas = Shas(kept_journal);
  ASSERT_EQ(kept_shas.size(), CountLines(kept));
  std::set<std::string> answered = kept_shas;
  answered.insert(journaled_shas.begin(), journaled_shas.end());
  const size_t asked_before = server.requests().size();

  BinaryResult r = RunBinary(Argv(card, "k"), 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("dropped a torn last line of answers.jsonl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dropped a torn last line of samples.jsonl"), std::string::npos) << r.err;

  // Lines written before are byte-identical; every question answered once.
  const std::string after = ReadFile(samples_path);
  EXPECT_EQ(after.substr(0, kept.size()), kept);
  EXPECT_EQ(ReadFile(dir_ + "/runs/k/run.json"), run_json);
  std::set<std::string> ids = AnsweredOnce("k");
  EXPECT_EQ(ids.size(), static_cast<size_t>(kQuestions));
  EXPECT_EQ(ids, PlannedIds("k"));
  EXPECT_EQ(Results("k")["parts"]["mmlupro"]["n"], kQuestions);

  // The resumed run asked each unanswered question once and no kept one:
  // an answer whose scored line was torn is scored again from the journal,
  // one whose journal line was torn (and that was never scored) is asked
  // again. (Questions in flight at the kill were seen by the server but
  // never recorded: they are asked again too.)
  auto requests = server.requests();
  std::multiset<std::string> second;
  for (size_t i = asked_before; i < requests.size(); ++i) second.insert(Sha256Hex(PromptOf(requests[i])));
  EXPECT_EQ(second.size(), kQuestions - answered.size());
  for (const auto& sha : second) {
    EXPECT_EQ(second.count(sha), 1u) << "asked twice in the resumed run";
    EXPECT_EQ(answered.count(sha), 0u) << "a kept answer was asked again";
  }
  const std::string torn_sha = torn["prompt_sha256"].get<std::string>();
  EXPECT_EQ(second.count(torn_sha), journaled_shas.count(torn_sha) ? 0u : 1u);
  const std::string torn_answer_sha = torn_answer["prompt_sha256"].get<std::string>();
  EXPECT_EQ(second.count(torn_answer_sha), answered.count(torn_answer_sha) ? 0u : 1u);
  std::multiset<std::string> first;
  for (size_t i = 0; i < asked_before; ++i) first.insert(Sha256Hex(PromptOf(requests[i])));
  for (const auto& sha : first) EXPECT_EQ(first.count(sha), 1u) << "asked twice before the kill";
}

// Ctrl-C once: no new request, the ones in flight are answered and kept,
// results.json is written, exit 130; the same command then completes.
TEST_F(E2eResume, CtrlCStopsCleanlyAndResumes) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) {
    FakeReply r{"Answer: A", "", "stop"};
    r.delay_ms = 100;
    return r;
  });
  const int kQuestions = 20;
  const std::string card = MmluCard(server.base_url(), kQuestions);
  int pid = SpawnBinary(Argv(card, "c"), dir_ + "/out1.txt", dir_ + "/err1.txt");
  ASSERT_GT(pid, 0);
  bool enough = WaitFor([&] { return CountLines(ReadFile(dir_ + "/runs/c/mmlupro/answers.jsonl")) >= 3; }, 60);
  kill(pid, SIGINT);
  BinaryResult r = WaitBinary(pid, 60);
  ASSERT_TRUE(enough) << ReadFile(dir_ + "/err1.txt");
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 130);
  const std::string err = ReadFile(dir_ + "/err1.txt");
  EXPECT_NE(err.find("interrupted; answers are kept. Resume with the same command and --job c"), std::string::npos)
      << err;

  auto samples = Samples("c", "mmlupro");
  ASSERT_LT(samples.size(), static_cast<size_t>(kQuestions)) << "the run was not interrupted";
  // Every request the server saw was answered and kept.
  EXPECT_EQ(static_cast<size_t>(server.chat_requests()), samples.size());
  EXPECT_EQ(ReadFile(dir_ + "/runs/c/mmlupro/failed.jsonl"), "");
  auto results = Results("c");
  EXPECT_EQ(results["parts"]["mmlupro"]["n"], samples.size());
  EXPECT_EQ(results["parts"]["mmlupro"]["complete"], false);

  const std::string before = ReadFile(SamplesPath("c"));
  BinaryResult again = RunBinary(Argv(card, "c"), 120);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("resuming job c: answered before: mmlupro " + std::to_string(samples.size()) + " of 20"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(ReadFile(SamplesPath("c")).substr(0, before.size()), before);
  EXPECT_EQ(AnsweredOnce("c"), PlannedIds("c"));
  EXPECT_EQ(server.chat_requests(), kQuestions) << "a question was asked twice";
  EXPECT_EQ(Results("c")["parts"]["mmlupro"]["complete"], true);
}

// A second Ctrl-C quits at once, even with requests hanging in the server;
// what was written is kept and the job resumes.
TEST_F(E2eResume, SecondCtrlCQuitsAtOnce) {
  FakeServerOptions o;
  o.slots = 4;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  std::atomic<int> n{0};
  server.SetResponder([&](const nlohmann::json&) {
    FakeReply r{"Answer: A", "", "stop"};
    if (++n > 3) {  // the first three answer; then the server hangs
      r.fault = Fault::kHang;
      r.hang_ms = 120000;
    }
    return r;
  });
  const std::string card = MmluCard(server.base_url(), 10);
  int pid = SpawnBinary(Argv(card, "s"), dir_ + "/out1.txt", dir_ + "/err1.txt");
  ASSERT_GT(pid, 0);
  // Three answers written and two requests hanging in flight.
  bool hanging = WaitFor([&] { return CountLines(ReadFile(SamplesPath("s"))) >= 3 && server.chat_requests() >= 5; }, 60);
  kill(pid, SIGINT);
  bool stopping = WaitFor([&] { return ReadFile(dir_ + "/err1.txt").find("stopping") != std::string::npos; }, 20);
  kill(pid, SIGINT);
  BinaryResult r = WaitBinary(pid, 20);
  ASSERT_TRUE(hanging) << ReadFile(dir_ + "/err1.txt");
  ASSERT_TRUE(stopping) << ReadFile(dir_ + "/err1.txt");
  ASSERT_FALSE(r.timed_out) << "a second Ctrl-C did not quit";
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_NE(ReadFile(dir_ + "/err1.txt").find("quit; answers written so far are kept"), std::string::npos);
  EXPECT_EQ(Lines(SamplesPath("s")).size(), 3u);

  server.SetResponder([](const nlohmann::json&) { return FakeReply{"Answer: A", "", "stop"}; });
  const std::string before = ReadFile(SamplesPath("s"));
  BinaryResult again = RunBinary(Argv(card, "s"), 120);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(SamplesPath("s")).substr(0, before.size()), before);
  std::set<std::string> ids = AnsweredOnce("s");
  EXPECT_EQ(ids.size(), 10u);
  EXPECT_EQ(ids, PlannedIds("s"));
}

// The run key: resuming with another card (here max_tokens) is refused,
// touching nothing, unless --force-resume is given.
TEST_F(E2eResume, ChangedCardIsRefusedUnlessForced) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_EQ(RunBinary(Argv(MmluCard(server.base_url(), 3, 64), "j"), 120).exit_code, 0);
  const auto before = Snapshot(dir_ + "/runs/j");
  const int asked = server.chat_requests();

  const std::string changed = MmluCard(server.base_url(), 5, 32);
  BinaryResult refused = RunBinary(Argv(changed, "j"), 120);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("run key differs"), std::string::npos) << refused.err;
  // Which fields changed, old -> new (the counts are not part of the key).
  EXPECT_NE(refused.err.find("\n  card.parts.mmlupro.max_tokens: 64 -> 32\n"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("questions"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force-resume"), std::string::npos) << refused.err;
  EXPECT_EQ(server.chat_requests(), asked);
  EXPECT_EQ(Snapshot(dir_ + "/runs/j"), before);

  BinaryResult forced = RunBinary(Argv(changed, "j", {"--force-resume"}), 120);
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(server.chat_requests(), asked + 2);  // the two questions added
  auto samples = Samples("j", "mmlupro");
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(samples[0]["max_tokens"], 64);
  EXPECT_EQ(samples[4]["max_tokens"], 32);
  EXPECT_EQ(AnsweredOnce("j"), PlannedIds("j"));
}

// A job extended by another --parts: the part added has no dataset to
// disagree with (resumed, not refused), the parts answered before are kept,
// and run.json's run key and part_requests then hold both parts, so that a
// later resume checks the added part's dataset too.
TEST_F(E2eResume, AJobExtendedByAnotherPartIsResumedAndRecordsBothParts) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  const std::string card =
      WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 3}, "ifeval": {"prompts": 2}})");
  ASSERT_EQ(RunBinary(Argv(card, "x", {"--parts", "mmlupro"}), 120).exit_code, 0);
  const std::string mmlu = ReadFile(SamplesPath("x"));
  nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/x/run.json"));
  EXPECT_FALSE(run["run_key"]["datasets"].contains("ifeval")) << run["run_key"];

  BinaryResult more = RunBinary(Argv(card, "x", {"--parts", "ifeval"}), 120);
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_EQ(more.err.find("run key differs"), std::string::npos) << more.err;
  EXPECT_EQ(ReadFile(SamplesPath("x")), mmlu);
  EXPECT_EQ(Samples("x", "ifeval").size(), 2u);
  const nlohmann::json results = Results("x");
  EXPECT_TRUE(results["parts"].contains("mmlupro") && results["parts"].contains("ifeval")) << results["parts"];
  run = nlohmann::json::parse(ReadFile(dir_ + "/runs/x/run.json"));
  EXPECT_TRUE(run["run_key"]["datasets"].contains("mmlupro")) << run["run_key"];
  EXPECT_TRUE(run["run_key"]["datasets"].contains("ifeval")) << run["run_key"];
  EXPECT_TRUE(run["part_requests"].contains("mmlupro") && run["part_requests"].contains("ifeval"));

  // Both again: nothing left to ask, nothing refused.
  const int asked = server.chat_requests();
  BinaryResult again = RunBinary(Argv(card, "x"), 120);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.chat_requests(), asked);
}

// The server now serves another model: refused, then accepted when forced.
TEST_F(E2eResume, ChangedServerModelIsRefusedUnlessForced) {
  FakeServerOptions o;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  const std::string card = MmluCard(server.base_url(), 3);
  ASSERT_EQ(RunBinary(Argv(card, "m"), 120).exit_code, 0);
  const auto before = Snapshot(dir_ + "/runs/m");
  o.model_path = "models/another.gguf";
  server.SetOptions(o);
  BinaryResult refused = RunBinary(Argv(card, "m"), 120);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("run key differs"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("model_path: \"models/fake.gguf\" -> \"models/another.gguf\""), std::string::npos)
      << refused.err;
  EXPECT_EQ(Snapshot(dir_ + "/runs/m"), before);
  BinaryResult forced = RunBinary(Argv(card, "m", {"--force-resume"}), 120);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(server.chat_requests(), 3);
}

// A damaged line before the last one is not a crash's doing (an append
// tears only the last line): exit 1 naming the file and line, nothing asked,
// the file left as it was. A torn last line is still dropped and asked again.
TEST_F(E2eResume, ADamagedLineInTheMiddleIsRefusedNamingFileAndLine) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_EQ(RunBinary(Argv(MmluCard(server.base_url(), 4), "t"), 120).exit_code, 0);
  const std::string path = SamplesPath("t");
  const std::string good = ReadFile(path);
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < good.size();) {
    size_t nl = good.find('\n', pos);
    lines.push_back(good.substr(pos, nl - pos + 1));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 4u);
  const int asked = server.chat_requests();
  for (const std::string& damage : {lines[1].substr(0, lines[1].size() / 2) + "\n", std::string("42\n")}) {
    const std::string damaged = lines[0] + damage + lines[2] + lines[3];
    WriteFile(path, damaged);
    BinaryResult r = RunBinary(Argv(MmluCard(server.base_url(), 6), "t"), 60);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(path + ":2: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("repair or delete that line, or start another --job"), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(path), damaged);
    EXPECT_EQ(server.chat_requests(), asked);
  }
  // The same bytes as the last line: a crash's torn tail, dropped and asked again.
  WriteFile(path, lines[0] + lines[2] + lines[3] + lines[1].substr(0, lines[1].size() / 2));
  BinaryResult r = RunBinary(Argv(MmluCard(server.base_url(), 4), "t"), 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("dropped a torn last line"), std::string::npos) << r.err;
  EXPECT_EQ(server.chat_requests(), asked + 1);
  EXPECT_EQ(AnsweredOnce("t").size(), 4u);
}

// A line that parses as JSON but that its part's codec rejects (here an
// IFEval line without its instruction_id_list) is refused on resume with
// exit 1 naming the file, the line and the field, before anything is
// asked; the file is left as it was (never an uncaught json type_error,
// exit 134).
TEST_F(E2eResume, ALineTheCodecRejectsIsRefusedNamingFileLineAndField) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  auto card = [&](int prompts) {
    return WriteCard(server.base_url(), "2",
                     R"({"ifeval": {"prompts": )" + std::to_string(prompts) + R"(, "max_tokens": 64}})");
  };
  ASSERT_EQ(RunBinary(Argv(card(3), "i"), 120).exit_code, 0);
  const std::string path = dir_ + "/runs/i/ifeval/samples.jsonl";
  std::vector<nlohmann::json> lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u);
  lines[1].erase("instruction_id_list");
  std::string damaged;
  for (const auto& l : lines) damaged += l.dump() + "\n";
  WriteFile(path, damaged);
  const int asked = server.chat_requests();
  BinaryResult r = RunBinary(Argv(card(5), "i"), 120);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(path + ":2: instruction_id_list: expected an array of strings"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("repair or delete that line, or start another --job"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("type_error"), std::string::npos) << r.err;
  EXPECT_EQ(server.chat_requests(), asked);
  EXPECT_EQ(ReadFile(path), damaged);

  // A verdict field of the wrong type is named the same way.
  ASSERT_EQ(RunBinary(Argv(MmluCard(server.base_url(), 2), "m"), 120).exit_code, 0);
  lines = Lines(SamplesPath("m"));
  ASSERT_EQ(lines.size(), 2u);
  lines[0]["correct"] = "yes";
  damaged = lines[0].dump() + "\n" + lines[1].dump() + "\n";
  WriteFile(SamplesPath("m"), damaged);
  r = RunBinary(Argv(MmluCard(server.base_url(), 2), "m"), 120);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(SamplesPath("m") + ":1: correct: expected true or false, got \"yes\""), std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(SamplesPath("m")), damaged);
}

// The question counts are not part of the run key: asking for more
// questions continues the job with the new ones only.
TEST_F(E2eResume, MoreQuestionsContinueTheJob) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_EQ(RunBinary(Argv(MmluCard(server.base_url(), 3), "q"), 120).exit_code, 0);
  const std::string before = ReadFile(SamplesPath("q"));
  BinaryResult r = RunBinary(Argv(MmluCard(server.base_url(), 6), "q"), 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.chat_requests(), 6);
  EXPECT_EQ(ReadFile(SamplesPath("q")).substr(0, before.size()), before);
  EXPECT_EQ(AnsweredOnce("q"), PlannedIds("q"));
}

}  // namespace
}  // namespace evalrun::testing
