// The example benchmark (capitals.cc in this
// folder: a part and one row of the benchmark table) is in `evalrun --list`,
// runs, is re-scored by `score`, compared by `compare` and shown on the page,
// with no other file naming it (benchmark_names_test.cc checks that). The
// binary is evalrun-test-parts: evals/main.cc with the test tree's
// benchmarks, driven as a process against the in-process fake server.
//
// The scripted model knows the capitals itself (kCapitalOf) and finds the
// option in the prompt, so the test shares no code with the benchmark.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

const std::map<std::string, std::string> kCapitalOf = {
    {"France", "Paris"},     {"Italy", "Rome"},        {"Spain", "Madrid"},  {"Norway", "Oslo"},
    {"Poland", "Warsaw"},    {"Japan", "Tokyo"},       {"India", "New Delhi"}, {"Vietnam", "Hanoi"},
    {"Thailand", "Bangkok"}, {"Nepal", "Kathmandu"},
};

// "Question c01: what is the capital of France?\nA) Lyon\nB) Paris\n..." ->
// {"c01", letter of the right option, letter of a wrong one}.
struct Asked {
  std::string id;
  char right = 0, wrong = 0;
};

Asked Parse(const std::string& text) {
  Asked q;
  const size_t at = text.find("Question ");
  const size_t colon = text.find(':', at);
  q.id = text.substr(at + 9, colon - at - 9);
  const size_t of = text.find("capital of ", colon) + 11;
  const std::string country = text.substr(of, text.find('?', of) - of);
  for (char letter = 'A'; letter <= 'D'; ++letter) {
    const size_t opt = text.find(std::string("\n") + letter + ") ");
    const std::string city = text.substr(opt + 4, text.find('\n', opt + 1) - opt - 4);
    if (city == kCapitalOf.at(country)) q.right = letter;
    else if (q.wrong == 0) q.wrong = letter;
  }
  return q;
}

// Right, except the ids in `wrong` (a wrong letter) and in `cut` (cut off).
Responder Model(std::vector<std::string> wrong, std::vector<std::string> cut) {
  return [wrong, cut](const nlohmann::json& req) {
    const Asked q = Parse(req["messages"][0]["content"].get<std::string>());
    auto in = [&](const std::vector<std::string>& v) {
      for (const auto& x : v)
        if (x == q.id) return true;
      return false;
    };
    FakeReply r;
    if (in(cut)) {
      r.content = "Let me think about " + q.id;
      r.finish_reason = "length";
    } else {
      r.content = std::string(1, in(wrong) ? q.wrong : q.right) + ") is the answer.";
    }
    return r;
  };
}

class CapitalsTest : public E2eTest {
 protected:
  static std::string Binary() { return evalrun::testing::TestPartsBinary(); }
  BinaryResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), Binary());
    return RunBinary(args, 120);
  }
  BinaryResult RunJob(const std::string& card, const std::string& job) {
    return Cli({"--card", card, "--job", job, "--out", dir_ + "/runs", "--data-dir", DatasetsDir()});
  }
  std::string Job(const std::string& job) const { return dir_ + "/runs/" + job; }
};

TEST_F(CapitalsTest, ListedFromItsRowOfTheTable) {
  BinaryResult list = Cli({"--list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const size_t row = list.out.find("\ncapitals: World Capitals\n");
  ASSERT_NE(row, std::string::npos) << list.out;
  const std::string mine = list.out.substr(row, list.out.find("\n\n", row + 1) - row);
  EXPECT_NE(mine.find("part     capitals (choice; card keys: questions, max_tokens, prompt, seed)"), std::string::npos)
      << mine;
  EXPECT_NE(mine.find("data     nothing to fetch"), std::string::npos) << mine;
  EXPECT_NE(mine.find("scorer   the first letter"), std::string::npos) << mine;
  // The product's own binary has no such row.
  BinaryResult product = RunBinary({EvalrunBinary(), "--list"}, 60);
  ASSERT_EQ(product.exit_code, 0) << product.err;
  EXPECT_EQ(product.out.find("capitals"), std::string::npos) << product.out;
}

TEST_F(CapitalsTest, RunsScoresComparesAndIsOnThePage) {
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  const std::string parts = R"({"capitals": {"questions": 10, "max_tokens": 12, "prompt": "plain"}})";
  std::string card = WriteCard(server.base_url(), "\"auto\"", parts);

  // Run A: all right but one cut off.
  server.SetResponder(Model({}, {"c04"}));
  BinaryResult a_run = RunJob(card, "a");
  ASSERT_EQ(a_run.exit_code, 0) << a_run.err;
  EXPECT_LE(server.max_running(), 2);
  ASSERT_EQ(Samples("a", "capitals").size(), 10u);
  const nlohmann::json a = Results("a")["parts"]["capitals"];
  EXPECT_EQ(a["kind"], "choice");
  EXPECT_EQ(a["n"], 10);
  EXPECT_EQ(a["correct"], 9);
  EXPECT_EQ(a["cut_off"], 1);
  EXPECT_EQ(a["regions"]["asia"]["n"], 5) << a.dump();

  // The card's keys come from its row: a near miss is named.
  const std::string bad = WriteCard(server.base_url(), "\"auto\"", R"({"capitals": {"question": 3}})");
  BinaryResult refused = RunJob(bad, "bad");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("parts.capitals.question"), std::string::npos) << refused.err;
  card = WriteCard(server.base_url(), "\"auto\"", parts);  // the same path: the good card again

  // `score` re-scores A's recorded answers without a server: A's figures.
  BinaryResult sc = Cli({"score", "--card", card, "--part", "capitals", "--responses", Job("a") + "/capitals/samples.jsonl",
                         "--out", dir_ + "/runs", "--job", "rescored", "--data-dir", DatasetsDir()});
  ASSERT_EQ(sc.exit_code, 0) << sc.err;
  const nlohmann::json s = Results("rescored")["parts"]["capitals"];
  EXPECT_EQ(s["correct"], a["correct"]);
  EXPECT_EQ(s["cut_off"], a["cut_off"]);
  EXPECT_EQ(s["score"], a["score"]);

  // Run B: six answers wrong now.
  server.SetResponder(Model({"c01", "c02", "c03", "c06", "c07", "c08"}, {"c04"}));
  ASSERT_EQ(RunJob(card, "b").exit_code, 0);
  EXPECT_EQ(Results("b")["parts"]["capitals"]["correct"], 3);

  // The page: its row, by its title, with its score, and its samples.
  BinaryResult rep = Cli({"report", Job("a")});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const std::string md = ReadFile(Job("a") + "/report.md");
  EXPECT_NE(md.find("World Capitals"), std::string::npos) << md;
  EXPECT_NE(md.find("90.0"), std::string::npos) << md;
  const std::string html = ReadFile(Job("a") + "/report.html");
  EXPECT_NE(html.find("World Capitals"), std::string::npos);
  EXPECT_NE(html.find("<option value=\"capitals\">"), std::string::npos);

  // compare pairs the questions: 6 flipped right -> wrong, McNemar's exact
  // p = 2 * 0.5^6 = 0.03125 < 0.05: a regression, exit 4.
  BinaryResult c = Cli({"compare", Job("a"), Job("b"), "--json"});
  EXPECT_EQ(c.exit_code, 4) << c.err;
  const nlohmann::json doc = nlohmann::json::parse(c.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << c.out;
  ASSERT_EQ(doc["parts"].size(), 1u) << c.out;
  EXPECT_EQ(doc["parts"][0]["part"], "capitals");
  EXPECT_EQ(doc["parts"][0]["verdict"], "regression") << c.out;
  EXPECT_NE(c.out.find("0.03125"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace evalrun::testing
