// End to end: `evalrun run --repeat 2` asks every question part twice into
// one job, the second repeat in <job>/repeat-2, and reports the flip rate
// between the repeats (evals/run/run_steps.h RunRepeat).
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/markdown_tables.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

std::string PromptOf(const nlohmann::json& request) {
  const auto& m = request["messages"];
  return m.empty() ? std::string() : m.back().value("content", std::string());
}

// Answers "B" the first time a prompt is asked; the second time, "C" for
// every prompt whose length is odd (a fixed, arbitrary subset), "B" for the
// others: the flips of a batching-sensitive engine, made deterministic.
class SecondTimeDiffers {
 public:
  FakeReply operator()(const nlohmann::json& req) {
    const std::string p = PromptOf(req);
    int seen;
    {
      std::lock_guard<std::mutex> l(mu_);
      seen = ++count_[p];
    }
    FakeReply r{seen >= 2 && p.size() % 2 == 1 ? "C" : "B", "", "stop"};
    r.delay_ms = delay_ms;
    return r;
  }
  int delay_ms = 0;

 private:
  std::mutex mu_;
  std::map<std::string, int> count_;
};

size_t CountLines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

class E2eRepeat : public E2eTest {
 protected:
  std::string Card(const std::string& base_url, int questions, const std::string& extra_top = "") {
    return WriteCard(base_url, "4", R"({"mmlupro": {"questions": )" + std::to_string(questions) +
                                        R"(, "max_tokens": 16}})",
                     extra_top);
  }
  std::string JobDir(const std::string& job) { return dir_ + "/runs/" + job; }
  // id -> correct of a samples.jsonl.
  std::map<std::string, bool> Correct(const std::string& path) {
    std::map<std::string, bool> m;
    for (const auto& s : Lines(path)) m[s["id"].get<std::string>()] = s["correct"].get<bool>();
    return m;
  }
};

TEST_F(E2eRepeat, RepeatTwoKeepsTheJobAsOneRunAndReportsTheFlipRate) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  SecondTimeDiffers responder;
  server.SetResponder([&](const nlohmann::json& r) { return responder(r); });
  const std::string card = Card(server.base_url(), 40);
  BinaryResult r = Run({"--card", card, "--job", "r", "--repeat", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.chat_requests(), 80);

  // The job's own files are a single run's: 40 samples, results of those.
  const auto first = Correct(JobDir("r") + "/mmlupro/samples.jsonl");
  const auto second = Correct(JobDir("r") + "/repeat-2/mmlupro/samples.jsonl");
  ASSERT_EQ(first.size(), 40u);
  ASSERT_EQ(second.size(), 40u);
  EXPECT_EQ(CountLines(ReadFile(JobDir("r") + "/mmlupro/samples.jsonl")), 40u);
  int flips = 0, correct1 = 0, correct2 = 0;
  for (const auto& [id, c] : first) {
    ASSERT_TRUE(second.count(id)) << id;
    flips += c != second.at(id);
    correct1 += c;
    correct2 += second.at(id);
  }
  ASSERT_GT(flips, 0) << "the fixture should make some answers flip";
  std::set<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(JobDir("r"))) entries.insert(e.path().filename());
  EXPECT_EQ(entries, (std::set<std::string>{"evalrun.lock", "load.jsonl", "mmlupro", "repeat-2", "results.json",
                                            "run.json"}));
  const nlohmann::json res = Results("r");
  const auto& p = res["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 40);
  EXPECT_EQ(p["correct"], correct1);
  EXPECT_EQ(p["planned"], 40);

  // The flip rate and the floor, per part.
  const auto& rep = p["repeat"];
  EXPECT_EQ(rep["repeats"], 2);
  EXPECT_EQ(rep["dir"], "repeat-2");
  EXPECT_EQ(rep["pairs"], 40);
  EXPECT_EQ(rep["flips"], flips);
  EXPECT_NEAR(rep["flip_rate"].get<double>(), flips / 40.0, 1e-6);
  EXPECT_EQ(rep["n"], 40);
  EXPECT_EQ(rep["alpha"], 0.05);
  EXPECT_EQ(rep["power"], 0.8);
  // (1.959964 + 0.841621) * sqrt(d / 40)
  EXPECT_NEAR(rep["mde"].get<double>(), 2.801585218112968 * std::sqrt(flips / 40.0 / 40.0), 1e-6);
  EXPECT_NEAR(rep["score_repeat_2"].get<double>(), correct2 / 40.0, 1e-6);
  EXPECT_NE(r.out.find("repeat 2 of mmlupro (" + JobDir("r") + "/repeat-2): flip rate " + std::to_string(flips) +
                       "/40"),
            std::string::npos)
      << r.out;

  // repeat-2 is a run folder of its own: the A2 of a noise pair.
  const nlohmann::json res2 = nlohmann::json::parse(ReadFile(JobDir("r") + "/repeat-2/results.json"));
  EXPECT_EQ(res2["job"], "r/repeat-2");
  EXPECT_EQ(res2["parts"]["mmlupro"]["n"], 40);
  EXPECT_EQ(res2["parts"]["mmlupro"]["correct"], correct2);
  EXPECT_FALSE(res2["parts"]["mmlupro"].contains("repeat"));
  BinaryResult cmp = RunBinary({EvalrunBinary(), "compare", JobDir("r"), JobDir("r") + "/repeat-2", "--noise",
                                JobDir("r"), JobDir("r") + "/repeat-2", "--json"});
  ASSERT_LE(cmp.exit_code, 4) << cmp.err;
  const nlohmann::json doc = nlohmann::json::parse(cmp.out);
  EXPECT_EQ(doc["parts"][0]["noise"]["flips"], flips);
  EXPECT_EQ(doc["parts"][0]["noise"]["mde"], rep["mde"]);

  // `evalrun report` of the job shows the flip rate and the detectable difference.
  BinaryResult report = RunBinary({EvalrunBinary(), "report", JobDir("r")});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string md = UnpadTables(ReadFile(JobDir("r") + "/report.md"));
  char row[160];
  std::snprintf(row, sizeof row, "| mmlupro | %d / 40 | %.2f | %.2f |", flips, 100.0 * flips / 40,
                100 * rep["mde"].get<double>());
  EXPECT_NE(md.find("## Run-to-run noise (--repeat 2)"), std::string::npos) << md;
  EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md;
  EXPECT_NE(md.find("- mmlupro: " + rep["text"].get<std::string>()), std::string::npos) << md;
  // No probe in the run: its clause (the logprobs kind's) is not in the sentence.
  EXPECT_NE(md.find("below the detectable difference is within noise.\n"), std::string::npos) << md;
  const std::string html = ReadFile(JobDir("r") + "/report.html");
  EXPECT_NE(html.find("<section id=\"repeat\"><h2>Run-to-run noise (--repeat 2)</h2>"), std::string::npos);
  std::snprintf(row, sizeof row, "<tr><td>mmlupro</td><td>%d / 40</td><td>%.2f</td><td>%.2f</td></tr>", flips,
                100.0 * flips / 40, 100 * rep["mde"].get<double>());
  EXPECT_NE(html.find(row), std::string::npos) << row;
}

TEST_F(E2eRepeat, AProbeRepeatsItsPositionsAndReportsTheKldBetweenThem) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  const std::string card =
      WriteCard(server.base_url(), "4", R"({"probe": {"positions": 30, "top_logprobs": 4, "context_words": 10}})");
  BinaryResult r = Run({"--card", card, "--job", "p", "--repeat", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(ReadFile(JobDir("p") + "/repeat-2/probe/samples.jsonl")), 30u);
  const nlohmann::json res = Results("p");
  const auto& rep = res["parts"]["probe"]["repeat"];
  EXPECT_EQ(rep["kind"], "logprobs");
  EXPECT_EQ(rep["pairs"], 30);
  EXPECT_EQ(rep["flips"], 0) << "the fake server's distributions do not move";
  EXPECT_EQ(rep["kld"]["max"].get<double>(), 0.0);
  EXPECT_TRUE(rep["mde"].is_null());
  const std::string text = rep["text"];
  EXPECT_EQ(text, "KLD(repeat 1 || repeat 2) over 30 positions: mean 0, p99 0, max 0; the top token changed at 0");
  EXPECT_NE(r.out.find("repeat 2 of probe (" + JobDir("p") + "/repeat-2): " + text), std::string::npos) << r.out;
  // The repeats are the A/A pair of a probe comparison.
  BinaryResult cmp = RunBinary({EvalrunBinary(), "compare", JobDir("p"), JobDir("p") + "/repeat-2", "--noise",
                                JobDir("p"), JobDir("p") + "/repeat-2", "--json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_EQ(nlohmann::json::parse(cmp.out)["parts"][0]["noise"]["label"], "within noise");
  // The report's row: top-token changes and the KLD.
  BinaryResult report = RunBinary({EvalrunBinary(), "report", JobDir("p")});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string md = UnpadTables(ReadFile(JobDir("p") + "/report.md"));
  EXPECT_NE(md.find("| probe | 0 / 30 | 0.00 | KLD mean 0, max 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("for a probe, flips are the positions whose top token changed"), std::string::npos);
  EXPECT_NE(ReadFile(JobDir("p") + "/report.html").find("<tr><td>probe</td><td>0 / 30</td><td>0.00</td><td>KLD mean 0, max 0"),
            std::string::npos);
}

TEST_F(E2eRepeat, ResumeOfARunKilledDuringRepeatTwo) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  SecondTimeDiffers responder;
  responder.delay_ms = 100;
  server.SetResponder([&](const nlohmann::json& r) { return responder(r); });
  const std::string card = Card(server.base_url(), 30);
  std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "k", "--out", dir_ + "/runs",
                                   "--data-dir", DatasetsDir(), "--repeat", "2"};
  const std::string second_path = JobDir("k") + "/repeat-2/mmlupro/samples.jsonl";
  int pid = SpawnBinary(argv, dir_ + "/out1.txt", dir_ + "/err1.txt");
  ASSERT_GT(pid, 0);
  bool enough = false;
  for (int i = 0; i < 6000 && !enough; ++i) {
    // The journal: each answer is there as soon as it arrives (samples.jsonl
    // follows as the scoring stage gets to it).
    enough = CountLines(ReadFile(JobDir("k") + "/repeat-2/mmlupro/answers.jsonl")) >= 6;
    if (!enough) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  WaitBinary(pid, 20);
  ASSERT_TRUE(enough) << ReadFile(dir_ + "/err1.txt");
  const size_t done2 = CountLines(ReadFile(second_path));
  ASSERT_LT(done2, 30u);
  // Answers journaled (repeat-2's answers.jsonl) but not yet scored are
  // scored on resume, not asked again.
  std::set<std::string> answered2;
  for (const std::string f : {"samples.jsonl", "answers.jsonl"}) {
    const std::string path = JobDir("k") + "/repeat-2/mmlupro/" + f;
    if (!std::filesystem::exists(path)) continue;
    for (const auto& l : Lines(path)) answered2.insert(l["id"].get<std::string>());
  }
  const int asked_before = server.chat_requests();
  // results.json was written when the first repeat finished: a single run's.
  const nlohmann::json killed = Results("k")["parts"]["mmlupro"];
  EXPECT_EQ(killed["n"], 30);
  EXPECT_FALSE(killed.contains("repeat"));

  // The same command without --repeat goes on with the second repeat.
  argv.resize(argv.size() - 2);
  BinaryResult r = RunBinary(argv, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("repeat-2 exists: the job runs every part twice"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mmlupro 30 of 30 (repeat 2: " + std::to_string(done2) + " of 30)"), std::string::npos)
      << r.err;
  // Only the questions repeat 2 had not recorded (scored or journaled) were
  // asked (those in flight at the kill were seen by the server but never
  // recorded: asked again).
  EXPECT_EQ(server.chat_requests() - asked_before, static_cast<int>(30 - answered2.size()));
  std::set<std::string> ids1, ids2;
  for (const auto& s : Samples("k", "mmlupro")) EXPECT_TRUE(ids1.insert(s["id"].get<std::string>()).second) << s["id"];
  for (const auto& s : Lines(second_path)) EXPECT_TRUE(ids2.insert(s["id"].get<std::string>()).second) << s["id"];
  EXPECT_EQ(ids1.size(), 30u);
  EXPECT_EQ(ids1, ids2);
  const nlohmann::json rep = Results("k")["parts"]["mmlupro"]["repeat"];
  EXPECT_EQ(rep["pairs"], 30);
  EXPECT_EQ(rep["complete_repeat_2"], true);
}

TEST_F(E2eRepeat, CardFieldAndItsRange) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  SecondTimeDiffers responder;
  server.SetResponder([&](const nlohmann::json& r) { return responder(r); });
  std::string card = Card(server.base_url(), 8, R"("repeat": 2,)");
  BinaryResult r = Run({"--card", card, "--job", "c"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.chat_requests(), 16);
  EXPECT_EQ(Results("c")["parts"]["mmlupro"]["repeat"]["pairs"], 8);
  // --repeat 1 overrides the card.
  r = Run({"--card", card, "--job", "c1", "--repeat", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Results("c1")["parts"]["mmlupro"].contains("repeat"));
  EXPECT_FALSE(std::filesystem::exists(JobDir("c1") + "/repeat-2"));

  card = Card(server.base_url(), 8, R"("repeat": 3,)");
  r = Run({"--card", card, "--job", "bad"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("repeat"), std::string::npos) << r.err;
  r = Run({"--card", Card(server.base_url(), 8), "--job", "bad", "--repeat", "3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--repeat"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace evalrun::testing
