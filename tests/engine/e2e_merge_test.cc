// End to end: `evalrun merge` refuses what is not one whole run (a shard not
// given, a shard given twice, a duplicate id, another run key, a folder that
// is not a shard, an output folder in use), naming the shard numbers, part
// and ids, and writes nothing then; `--partial` merges what is there and
// says in results.json which items are absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "tests/support/deterministic_replies.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

namespace fs = std::filesystem;

class E2eMerge : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    ASSERT_TRUE(server_.Start());
    server_.SetResponder(DeterministicReply);
    // 30 + 24 items: each shard holds some of each part (a shard without
    // any, (2/3)^24 for IFEval, is as good as never).
    card_ = WriteCard(server_.base_url(), "2",
                      R"({"mmlupro": {"questions": 30, "max_tokens": 16}, "ifeval": {"prompts": 24, "max_tokens": 32}})");
    for (int i = 1; i <= 3; ++i) {
      BinaryResult r = Run({"--card", card_, "--job", "s" + std::to_string(i), "--shard", std::to_string(i) + "/3"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  std::string Shard(int i) const { return dir_ + "/runs/s" + std::to_string(i); }
  BinaryResult Merge(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {EvalrunBinary(), "merge"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunBinary(argv);
  }
  std::set<std::string> Ids(const std::string& job, const std::string& part) {
    std::set<std::string> ids;
    for (const auto& s : Samples(job, part)) ids.insert(s["id"]);
    return ids;
  }
  // A copy of shard `i` to change.
  std::string CopyOf(int i, const std::string& name) {
    const std::string to = dir_ + "/runs/" + name;
    fs::copy(Shard(i), to, fs::copy_options::recursive);
    return to;
  }

  FakeServer server_;
  std::string card_;
};

TEST_F(E2eMerge, AMissingShardIsNamedWithItsIdsAndNothingIsWritten) {
  const std::string out = dir_ + "/runs/m";
  BinaryResult r = Merge({out, Shard(1), Shard(3)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("incomplete: shard 2 of 3 not given"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--partial"), std::string::npos) << r.err;
  for (const char* part : {"mmlupro", "ifeval"}) {
    const std::set<std::string> two = Ids("s2", part);
    ASSERT_FALSE(two.empty()) << part;
    EXPECT_NE(r.err.find(std::string(part) + ": " + std::to_string(two.size()) + " of "), std::string::npos) << r.err;
    // The first of them in selection order is named (at most 10 are).
    const nlohmann::json shard = nlohmann::json::parse(ReadFile(Shard(2) + "/shard.json"));
    std::string first;
    for (const auto& id : shard["parts"][part]["selected"])
      if (first.empty() && two.count(id.get<std::string>())) first = id;
    EXPECT_NE(r.err.find(": " + first), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(E2eMerge, PartialMergesWhatIsThereAndListsWhatIsAbsent) {
  const std::string out = dir_ + "/runs/p";
  BinaryResult r = Merge({out, Shard(1), Shard(3), "--partial"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: partial merge: shard 2 of 3 not given"), std::string::npos) << r.err;
  const nlohmann::json res = Results("p");
  EXPECT_EQ(res["merged"]["partial"], true);
  EXPECT_EQ(res["merged"]["missing_shards"], nlohmann::json({2}));
  for (const char* part : {"mmlupro", "ifeval"}) {
    const nlohmann::json& p = res["parts"][part];
    const std::set<std::string> two = Ids("s2", part);
    EXPECT_EQ(p["complete"], false);
    EXPECT_EQ(p["merged"]["absent_n"], two.size());
    std::set<std::string> absent;
    for (const auto& id : p["merged"]["absent"]) absent.insert(id);
    EXPECT_EQ(absent, two) << part;
    EXPECT_EQ(p["n"].get<size_t>() + two.size(), p["planned"].get<size_t>()) << part;
    std::set<std::string> merged = Ids("p", part), expect = Ids("s1", part);
    for (const auto& id : Ids("s3", part)) expect.insert(id);
    EXPECT_EQ(merged, expect) << part;
  }
  BinaryResult rep = RunBinary({EvalrunBinary(), "report", out});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
}

TEST_F(E2eMerge, AnIdInTwoShardsIsADuplicate) {
  const std::string two = CopyOf(2, "s2dup");
  const std::vector<nlohmann::json> one = Samples("s1", "mmlupro");
  ASSERT_FALSE(one.empty());
  const std::string id = one.front()["id"];
  {
    const std::string path = two + "/mmlupro/samples.jsonl";
    WriteFile(path, ReadFile(path) + one.front().dump() + "\n");
  }
  BinaryResult r = Merge({dir_ + "/runs/m", Shard(1), two, Shard(3)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("mmlupro: duplicate ids, answered by two shards: " + id + " (shards 1, 2)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/runs/m"));
}

TEST_F(E2eMerge, ALineMovedToAnotherShardIsNamed) {
  const std::string two = CopyOf(2, "s2moved");
  const std::string one = CopyOf(1, "s1moved");
  // The first line of shard 1's file moved into shard 2's.
  const std::string from = one + "/mmlupro/samples.jsonl", to = two + "/mmlupro/samples.jsonl";
  std::string text = ReadFile(from);
  const std::string line = text.substr(0, text.find('\n') + 1);
  WriteFile(from, text.substr(line.size()));
  WriteFile(to, ReadFile(to) + line);
  const std::string id = nlohmann::json::parse(line)["id"];
  BinaryResult r = Merge({dir_ + "/runs/m", one, two, Shard(3)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(id + " (in shard 2, belongs to shard 1)"), std::string::npos) << r.err;
}

TEST_F(E2eMerge, AShardGivenTwiceIsNamed) {
  const std::string again = CopyOf(2, "s2again");
  BinaryResult r = Merge({dir_ + "/runs/m", Shard(1), Shard(2), again, Shard(3)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("shard 2 of 3 given 2 times: " + Shard(2) + ", " + again), std::string::npos) << r.err;
}

TEST_F(E2eMerge, AnotherRunKeyIsRefusedWithTheDifference) {
  const std::string other = WriteCard(
      server_.base_url(), "2",
      R"({"mmlupro": {"questions": 30, "max_tokens": 17}, "ifeval": {"prompts": 24, "max_tokens": 32}})");
  BinaryResult s = Run({"--card", other, "--job", "x3", "--shard", "3/3"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  BinaryResult r = Merge({dir_ + "/runs/m", Shard(1), Shard(2), dir_ + "/runs/x3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("run key of shard 3 (" + dir_ + "/runs/x3) differs from shard 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_tokens"), std::string::npos) << r.err;
}

TEST_F(E2eMerge, OnlyShardsMergeAndOnlyIntoANewFolder) {
  ASSERT_EQ(Run({"--card", card_, "--job", "whole"}).exit_code, 0);
  BinaryResult r = Merge({dir_ + "/runs/m", Shard(1), dir_ + "/runs/whole"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir_ + "/runs/whole: not a shard: no shard.json"), std::string::npos) << r.err;
  r = Merge({Shard(1), Shard(1), Shard(2), Shard(3)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("must not be one of the shards"), std::string::npos) << r.err;
  r = Merge({dir_ + "/runs/whole", Shard(1), Shard(2), Shard(3)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("exists and is not empty"), std::string::npos) << r.err;
  fs::create_directories(dir_ + "/empty");
  r = Merge({dir_ + "/empty", Shard(1), Shard(2), Shard(3)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ + "/empty/results.json"));
}

// Shards run with --repeat 2: their repeat-2/ folders merge into one, and
// each part's `repeat` is recomputed over all of it, equal to what one
// unsharded --repeat 2 run of the same answers gives.
class E2eMergeRepeat : public E2eTest {
 protected:
  // "B" the first time a prompt is asked; the second time "C" for prompts
  // of odd length (flips between the repeats, where the gold is B or C).
  FakeReply Reply(const nlohmann::json& req) {
    const auto& m = req["messages"];
    const std::string key = m.empty() ? std::string() : m.back().value("content", std::string());
    int seen;
    {
      std::lock_guard<std::mutex> l(mu_);
      seen = ++asked_[key];
    }
    return FakeReply{seen >= 2 && key.size() % 2 == 1 ? "C" : "B", "", "stop"};
  }
  std::mutex mu_;
  std::map<std::string, int> asked_;
};

TEST_F(E2eMergeRepeat, TheRepeatsMergeAndTheFlipRateIsTheWholeRunsAgain) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([&](const nlohmann::json& r) { return Reply(r); });
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 30, "max_tokens": 16}})");
  for (int i = 1; i <= 2; ++i)
    ASSERT_EQ(Run({"--card", card, "--job", "s" + std::to_string(i), "--shard", std::to_string(i) + "/2", "--repeat",
                   "2"})
                  .exit_code,
              0);
  asked_.clear();  // the whole run is asked afresh, with the same replies
  ASSERT_EQ(Run({"--card", card, "--job", "whole", "--repeat", "2"}).exit_code, 0);
  const std::string out = dir_ + "/runs/m";
  BinaryResult r = RunBinary({EvalrunBinary(), "merge", out, dir_ + "/runs/s1", dir_ + "/runs/s2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("repeat 2 of mmlupro (" + out + "/repeat-2): flip rate "), std::string::npos) << r.out;

  const nlohmann::json merged = Results("m"), whole = Results("whole");
  const auto& rep = merged["parts"]["mmlupro"]["repeat"];
  const auto& want = whole["parts"]["mmlupro"]["repeat"];
  ASSERT_TRUE(rep.is_object()) << merged.dump(2).substr(0, 2000);
  ASSERT_GT(want["flips"].get<int>(), 0) << "the fixture should make some answers flip";
  for (const char* k : {"pairs", "flips", "flip_rate", "mde", "text", "score_repeat_2", "n_repeat_2"})
    EXPECT_EQ(rep[k], want[k]) << k;
  // repeat-2 is a run folder of the merged job, as the runner's is.
  const auto res2 = nlohmann::json::parse(ReadFile(out + "/repeat-2/results.json"));
  EXPECT_EQ(res2["job"], "m/repeat-2");
  EXPECT_EQ(res2["repeat_of"], "m");
  EXPECT_EQ(res2["parts"]["mmlupro"]["n"], 30);
  EXPECT_EQ(res2["parts"]["mmlupro"]["complete"], true);
  EXPECT_EQ(Samples("m/repeat-2", "mmlupro").size(), 30u);
  BinaryResult cmp = RunBinary(
      {EvalrunBinary(), "compare", out, dir_ + "/runs/whole", "--noise", out, out + "/repeat-2", "--json"});
  ASSERT_LE(cmp.exit_code, 4) << cmp.err;
  EXPECT_EQ(nlohmann::json::parse(cmp.out)["parts"][0]["noise"]["flips"], want["flips"]);
}

TEST_F(E2eMergeRepeat, ARepeatInSomeShardsOnlyIsNotMergedAndSaidSo) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder(DeterministicReply);
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 20, "max_tokens": 16}})");
  ASSERT_EQ(Run({"--card", card, "--job", "s1", "--shard", "1/2", "--repeat", "2"}).exit_code, 0);
  ASSERT_EQ(Run({"--card", card, "--job", "s2", "--shard", "2/2"}).exit_code, 0);
  const std::string out = dir_ + "/runs/m";
  BinaryResult r = RunBinary({EvalrunBinary(), "merge", out, dir_ + "/runs/s1", dir_ + "/runs/s2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the second repeat (repeat-2/, --repeat 2) is in shard(s) 1 only"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out + "/repeat-2"));
  EXPECT_FALSE(Results("m")["parts"]["mmlupro"].contains("repeat"));
}

TEST_F(E2eMergeRepeat, AMergeThatFailsHalfWayLeavesNothingBehind) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder(DeterministicReply);
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 20, "max_tokens": 16}})");
  for (int i = 1; i <= 2; ++i)
    ASSERT_EQ(Run({"--card", card, "--job", "s" + std::to_string(i), "--shard", std::to_string(i) + "/2", "--repeat",
                   "2"})
                  .exit_code,
              0);
  // A bad line in a second repeat is found only while the merge writes.
  const std::string bad = dir_ + "/runs/s2/repeat-2/mmlupro/samples.jsonl";
  WriteFile(bad, "{\"id\": 7, \"oops\": true}\n" + ReadFile(bad));
  const std::string out = dir_ + "/runs/m";
  fs::create_directories(out);  // an empty folder given as OUT stays as it was
  BinaryResult r = RunBinary({EvalrunBinary(), "merge", out, dir_ + "/runs/s1", dir_ + "/runs/s2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(nothing was written to " + out + ")"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_directory(out));
  EXPECT_TRUE(fs::is_empty(out));
  size_t beside = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/runs")) beside += e.path().filename().string().rfind("m.", 0) == 0;
  EXPECT_EQ(beside, 0u) << "no staging folder is left";
}

}  // namespace
}  // namespace evalrun::testing
