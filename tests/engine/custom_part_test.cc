// A benchmark added from this one file, as docs/architecture.md ("How to add
// a benchmark") says: a multiple-choice part "capitals" with its own card
// keys, items, prompt and scorer registers itself here, and nothing else in
// the project names it. The test then drives the command line (RunCli, the
// code the `evalrun` binary's main calls) through run, score, report and
// compare against the in-process fake llama-server, so that the card
// parser, the runner, the sample codec, the run-folder reader and the
// publishers are seen to need no change for a new part.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "evals/cli.h"
#include "evals/run/prepare_steps.h"
#include "evals/run/part.h"
#include "evals/run/part_registry.h"
#include "evals/run/results.h"
#include "scorers/choice_extract.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

// ---- The part: everything a new benchmark needs, in one place ----

struct Capital {
  const char* id;
  const char* region;
  const char* country;
  std::array<const char*, 4> options;
  char gold;
};

constexpr std::array<Capital, 10> kCapitals = {{
    {"c01", "europe", "France", {"Lyon", "Paris", "Nice", "Lille"}, 'B'},
    {"c02", "europe", "Italy", {"Rome", "Milan", "Turin", "Naples"}, 'A'},
    {"c03", "europe", "Spain", {"Seville", "Valencia", "Madrid", "Bilbao"}, 'C'},
    {"c04", "europe", "Norway", {"Bergen", "Oslo", "Tromso", "Stavanger"}, 'B'},
    {"c05", "europe", "Poland", {"Krakow", "Gdansk", "Lodz", "Warsaw"}, 'D'},
    {"c06", "asia", "Japan", {"Osaka", "Kyoto", "Tokyo", "Nagoya"}, 'C'},
    {"c07", "asia", "India", {"New Delhi", "Mumbai", "Chennai", "Kolkata"}, 'A'},
    {"c08", "asia", "Vietnam", {"Hue", "Hanoi", "Da Nang", "Hai Phong"}, 'B'},
    {"c09", "asia", "Thailand", {"Chiang Mai", "Phuket", "Pattaya", "Bangkok"}, 'D'},
    {"c10", "asia", "Nepal", {"Kathmandu", "Pokhara", "Lalitpur", "Biratnagar"}, 'A'},
}};

class CapitalsPart : public Part {
 public:
  Status Prepare(const PartContext& ctx, PreparedPart* out) override {
    const PartSettings& cfg = *ctx.settings;
    std::vector<std::string> ids, regions;
    for (const Capital& c : kCapitals) {
      ids.push_back(c.id);
      regions.push_back(c.region);
    }
    const int64_t seed = cfg.Int("seed", ctx.card->request.sampling.seed);
    const int max_tokens = static_cast<int>(cfg.Int("max_tokens", 16));
    const bool terse = cfg.String("prompt") == "terse";
    for (size_t i : SelectQuestions(ctx, ids, regions, seed, cfg.Int("questions", -1))) {
      const Capital& c = kCapitals[i];
      std::string text = terse ? "" : "Answer with the letter of the right option.\n";
      text += "Question " + std::string(c.id) + ": what is the capital of " + c.country + "?\n";
      for (int k = 0; k < 4; ++k) text += std::string(1, static_cast<char>('A' + k)) + ") " + c.options[k] + "\n";
      Item it;
      it.id = c.id;
      it.category = c.region;
      it.prompt.messages.push_back({"user", text});
      it.prompt.params.max_tokens = max_tokens;
      it.prompt_sha256 = Sha256Hex(text);
      it.fields = {{"gold", std::string(1, c.gold)}};
      it.scorer_index = static_cast<int>(i);
      out->items.push_back(std::move(it));
    }
    out->info["dataset"] = {{"rows", kCapitals.size()}};
    RecordSelection(seed, max_tokens, out);
    return Status::Ok();
  }

  Verdict Score(const Item& item, const Completion& a) const override {
    const char letter = a.unclosed_think ? 0 : ExtractFirstLetter(a.content, 4);
    return ScoreChoice(letter, std::string(1, kCapitals[item.scorer_index].gold), a.finish_reason);
  }

  nlohmann::json Aggregate(const std::vector<SampleRecord>& records, int failed,
                           const PreparedPart&) const override {
    nlohmann::json r = AggregateChoice(records, failed);
    r["regions"] = r["categories"];
    return r;
  }
};

PartDefinition CapitalsDefinition() {
  PartDefinition d;
  d.name = "capitals";
  d.display_name = "World Capitals";
  d.run_order = 90;
  d.verdict = VerdictKind::kChoice;
  d.keys = {
      QuestionCountKey("questions", "all 10 by default, stratified by region"),
      MaxTokensKey("the answer limit (default 16)"),
      CardKey::Enum("prompt", {"plain", "terse"}, "`plain` (with an instruction line) or `terse`")
          .Default(std::string("plain")),
      SeedKey("selection seed (default sampling.seed)"),
  };
  d.make_part = [] { return std::make_unique<CapitalsPart>(); };
  return d;
}

EVALRUN_REGISTER_PART(CapitalsDefinition());

// ---- The test: the command line end to end ----

// The scripted model: the right letter, except for the questions in `wrong`
// (answered "A" or "B", whichever is wrong) and in `cut` (cut off).
Responder Model(std::vector<std::string> wrong, std::vector<std::string> cut) {
  return [wrong, cut](const nlohmann::json& req) {
    const std::string text = req["messages"][0]["content"].get<std::string>();
    FakeReply r;
    for (const Capital& c : kCapitals) {
      if (text.find("Question " + std::string(c.id) + ":") == std::string::npos) continue;
      auto in = [&](const std::vector<std::string>& v) {
        for (const auto& x : v)
          if (x == c.id) return true;
        return false;
      };
      if (in(cut)) {
        r.content = "Let me think about " + std::string(c.country);
        r.finish_reason = "length";
      } else {
        r.content = std::string(1, in(wrong) ? (c.gold == 'A' ? 'B' : 'A') : c.gold) + ") is the answer.";
      }
    }
    return r;
  };
}

class CustomPartTest : public E2eTest {
 protected:
  // evalrun's command line in this process (the binary does not hold the
  // test's part), what it prints kept in *out. The signals RunCli blocks
  // for its watcher thread are unblocked again after it.
  int Cli(std::vector<std::string> args, std::string* out = nullptr) {
    args.insert(args.begin(), "evalrun");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    sigset_t saved;
    pthread_sigmask(SIG_SETMASK, nullptr, &saved);
    // Its stdout and stderr go to one file for the call (fds 1 and 2).
    const std::string log_path = dir_ + "/cli.log";
    std::fflush(stdout);
    std::fflush(stderr);
    const int keep_out = dup(1), keep_err = dup(2);
    FILE* log = std::fopen(log_path.c_str(), "w");
    dup2(fileno(log), 1);
    dup2(fileno(log), 2);
    const int code = RunCli(static_cast<int>(argv.size()), argv.data());
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(keep_out, 1);
    dup2(keep_err, 2);
    close(keep_out);
    close(keep_err);
    std::fclose(log);
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    if (out) *out = ReadFile(log_path);
    return code;
  }
};

TEST_F(CustomPartTest, RunsScoresReportsAndComparesWithNoOtherFileChanged) {
  ASSERT_NE(FindPartDefinition("capitals"), nullptr);
  FakeServer server({.slots = 2});
  ASSERT_TRUE(server.Start());
  const std::string parts = R"({"capitals": {"questions": 10, "max_tokens": 12, "prompt": "plain"}})";
  std::string card = WriteCard(server.base_url(), "\"auto\"", parts);
  const std::string runs = dir_ + "/runs";

  // Run A: all right but one cut off.
  server.SetResponder(Model({}, {"c04"}));
  std::string log;
  ASSERT_EQ(Cli({"--card", card, "--out", runs, "--job", "a", "--data-dir", DatasetsDir()}, &log), 0) << log;
  EXPECT_LE(server.max_running(), 2);
  auto samples = Samples("a", "capitals");
  ASSERT_EQ(samples.size(), 10u);
  int cut = 0;
  for (const auto& s : samples) {
    EXPECT_EQ(s["gold"].get<std::string>().size(), 1u) << s.dump();
    cut += s["cut_off"].get<bool>();
  }
  EXPECT_EQ(cut, 1);
  nlohmann::json a = Results("a")["parts"]["capitals"];
  EXPECT_EQ(a["kind"], "choice");
  EXPECT_EQ(a["n"], 10);
  EXPECT_EQ(a["correct"], 9);
  EXPECT_EQ(a["cut_off"], 1);
  EXPECT_EQ(a["complete"], true);
  EXPECT_EQ(a["regions"]["asia"]["n"], 5) << a.dump();

  // The card's keys come from the definition: a near miss is named.
  const std::string bad = WriteCard(server.base_url(), "\"auto\"", R"({"capitals": {"question": 3}})");
  ASSERT_EQ(Cli({"--card", bad, "--out", runs, "--job", "bad", "--data-dir", DatasetsDir()}, &log), 1);
  EXPECT_NE(log.find("parts.capitals.question"), std::string::npos) << log;
  EXPECT_NE(log.find("questions"), std::string::npos) << log;
  card = WriteCard(server.base_url(), "\"auto\"", parts);  // the same path: the good card again

  // Re-scoring A's recorded answers without a server gives A's figures.
  ASSERT_EQ(Cli({"score", "--card", card, "--part", "capitals", "--responses", runs + "/a/capitals/samples.jsonl",
                 "--out", runs, "--job", "rescored", "--data-dir", DatasetsDir()},
                &log),
            0)
      << log;
  nlohmann::json s = Results("rescored")["parts"]["capitals"];
  EXPECT_EQ(s["correct"], a["correct"]);
  EXPECT_EQ(s["cut_off"], a["cut_off"]);
  EXPECT_EQ(s["score"], a["score"]);

  // Run B: six answers wrong now.
  server.SetResponder(Model({"c01", "c02", "c03", "c06", "c07", "c08"}, {"c04"}));
  ASSERT_EQ(Cli({"--card", card, "--out", runs, "--job", "b", "--data-dir", DatasetsDir()}, &log), 0) << log;
  EXPECT_EQ(Results("b")["parts"]["capitals"]["correct"], 3);

  // The report names the part by its display name, with its score.
  ASSERT_EQ(Cli({"report", runs + "/a"}, &log), 0) << log;
  const std::string md = ReadFile(runs + "/a/report.md");
  EXPECT_NE(md.find("World Capitals"), std::string::npos) << md;
  EXPECT_NE(md.find("90.0"), std::string::npos) << md;

  // compare pairs the questions: 6 flipped right -> wrong, McNemar's exact
  // p = 2 * 0.5^6 = 0.03125 < 0.05: a regression, exit 4.
  std::string cmp;
  EXPECT_EQ(Cli({"compare", runs + "/a", runs + "/b", "--json"}, &cmp), 4) << cmp;
  const size_t brace = cmp.find('{');
  ASSERT_NE(brace, std::string::npos) << cmp;
  nlohmann::json c = nlohmann::json::parse(cmp.substr(brace), nullptr, false);
  ASSERT_FALSE(c.is_discarded()) << cmp;
  ASSERT_TRUE(c.contains("parts")) << cmp;
  const std::string dump = c.dump();
  EXPECT_NE(dump.find("capitals"), std::string::npos) << dump;
  EXPECT_NE(dump.find("0.03125"), std::string::npos) << dump;
}

}  // namespace
}  // namespace evalrun::testing
