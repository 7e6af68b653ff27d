#include "evals/publish/compare.h"
#include "evals/publish/compare_setup.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "evals/base/exit_codes.h"
#include "scorers/statistics.h"
#include "tests/support/capture_output.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {
namespace fs = std::filesystem;
using testing::Captured;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteText;

// ---- Building run folders in a temp dir ----

nlohmann::json Card(double temperature = 0.0) {
  return {{"name", "local"},
          {"model", {{"name", "Qwen3-8B"}, {"quant", "Q4_K_M"}}},
          {"engine", {{"name", "llama.cpp"}}},
          {"server", {{"base_url", "http://127.0.0.1:8080/v1"}, {"slots", 4}}},
          {"sampling", {{"temperature", temperature}, {"top_k", 1}}},
          {"parts", {{"mmlupro", {{"questions", 400}}}}}};
}

// A run folder with one part; `lines` are the sample lines.
void MakeRun(const std::string& dir, const std::string& job, const std::string& part,
             const std::vector<nlohmann::json>& lines, const std::string& build = "b5000-abc",
             const nlohmann::json& card = Card()) {
  nlohmann::json results = {
      {"schema", "evalrun.results/1"},
      {"job", job},
      {"card", {{"name", "local"}, {"path", "cards/local.json"}, {"sha256", build == "b5000-abc" ? "aa11" : "bb22"}}},
      {"model", card["model"]},
      {"engine", card["engine"]},
      {"hardware", nlohmann::json::object()},
      {"sampling", card["sampling"]},
      {"thinking", false},
      {"finished_utc", "2026-01-02T03:04:05Z"},
      {"parts", {{part, {{"n", lines.size()}}}}}};
  WriteText(dir + "/results.json", results.dump(2));
  nlohmann::json run = {{"card", card},
                        {"card_sha256", "aa11"},
                        {"server", {{"build_info", build}, {"model_path", "/models/q.gguf"}, {"n_ctx", 8192}}},
                        {"slots", 4},
                        {"evalrun", {{"version", "0.1"}, {"git_sha", "abc"}}}};
  WriteText(dir + "/run.json", run.dump(2));
  std::string body;
  for (const auto& l : lines) body += l.dump() + "\n";
  WriteText(dir + "/" + part + "/samples.jsonl", body);
}

const char* kCategories[] = {"math", "law", "biology", "other"};

// 400 questions; A right on every id with i % 5 != 0 (320 of 400).
std::vector<nlohmann::json> ChoiceSamples(int n, int first_id = 0) {
  std::vector<nlohmann::json> v;
  for (int i = first_id; i < first_id + n; ++i) {
    v.push_back({{"id", "q" + std::to_string(i)},
                 {"category", kCategories[i % 4]},
                 {"prompt_sha256", "p" + std::to_string(i)},
                 {"response", "The answer is (A)"},
                 {"finish_reason", "stop"},
                 {"gold", "A"},
                 {"extracted", "A"},
                 {"correct", i % 5 != 0},
                 {"cut_off", false},
                 {"no_answer", false}});
  }
  return v;
}

// B = A with the first 60 right answers made wrong.
std::vector<nlohmann::json> Planted(std::vector<nlohmann::json> v, int count, std::vector<std::string>* ids) {
  int done = 0;
  for (auto& s : v) {
    if (done == count) break;
    if (s["correct"].get<bool>()) {
      s["correct"] = false;
      s["extracted"] = "B";
      ids->push_back(s["id"]);
      ++done;
    }
  }
  return v;
}

Captured RunCompare(const CompareOptions& o) {
  return testing::Capture([&](FILE* out, FILE* err) { return CompareRuns(o, out, err); });
}

CompareOptions Opts(const std::string& a, const std::string& b, bool json = false) {
  CompareOptions o;
  o.run_a = a;
  o.run_b = b;
  o.json = json;
  return o;
}

// ---- Tests ----

TEST(CompareRuns, PlantedRegressionExitsFourWithMcNemarP) {
  TempDir t("evalrun_compare");
  std::vector<std::string> planted;
  auto a = ChoiceSamples(400);
  auto b = Planted(a, 60, &planted);
  ASSERT_EQ(planted.size(), 60u);
  MakeRun(t.path() + "/a", "old", "mmlupro", a);
  MakeRun(t.path() + "/b", "new", "mmlupro", b);

  Captured md = RunCompare(Opts(t.path() + "/a", t.path() + "/b"));
  EXPECT_EQ(md.code, kExitRegression) << md.err;
  EXPECT_EQ(md.err, "");
  // Exact p for b = 60, c = 0: 2 / 2^60 (Python: 1.734723475976807e-18).
  EXPECT_NE(md.out.find("McNemar p = 1.73e-18"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("**Verdict: significant regression**"), std::string::npos);
  EXPECT_NE(md.out.find("| mmlupro | accuracy | 400 | 80.00 | 65.00 | -15.00 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("60 A✓ B✗, 0 A✗ B✓."), std::string::npos);
  EXPECT_NE(md.out.find("| `q1` | law | ✓ | ✗ |"), std::string::npos);  // the first flipped id
  EXPECT_NE(md.out.find("... and 10 more"), std::string::npos);           // 50 shown of 60

  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  EXPECT_EQ(js.code, kExitRegression);
  nlohmann::json doc = nlohmann::json::parse(js.out);
  EXPECT_EQ(doc["schema"], "evalrun.compare/1");
  EXPECT_EQ(doc["exit_code"], 4);
  EXPECT_EQ(doc["regressions"], nlohmann::json::array({"mmlupro"}));
  const auto& part = doc["parts"][0];
  EXPECT_EQ(part["part"], "mmlupro");
  EXPECT_EQ(part["paired"], 400);
  EXPECT_EQ(part["only_in_a"], 0);
  EXPECT_EQ(part["flipped_a_better"], 60);
  EXPECT_EQ(part["flipped_b_better"], 0);
  ASSERT_EQ(part["flipped"].size(), 60u);
  for (size_t i = 0; i < planted.size(); ++i) {
    EXPECT_EQ(part["flipped"][i]["id"], planted[i]);
    EXPECT_EQ(part["flipped"][i]["a"], 1.0);
    EXPECT_EQ(part["flipped"][i]["b"], 0.0);
  }
  const auto& st = part["metrics"][0]["overall"];
  EXPECT_EQ(st["n"], 400);
  EXPECT_EQ(st["score_a"], 0.8);
  EXPECT_EQ(st["score_b"], 0.65);
  EXPECT_EQ(st["delta"], -0.15);
  EXPECT_EQ(st["a_better"], 60);
  EXPECT_EQ(st["b_better"], 0);
  EXPECT_NEAR(st["p_value"].get<double>() / 1.734723475976807e-18, 1.0, 1e-12);
  // The same bootstrap in CPython 3.11 (random.Random(12345), _randbelow(400)
  // per draw, 2000 resamples, linear percentiles) gives
  // (-0.18506249999999988, -0.1175).
  EXPECT_EQ(st["ci_low"], -0.185062);
  EXPECT_EQ(st["ci_high"], -0.1175);
  EXPECT_EQ(st["verdict"], "regression");
  // Per category: the 60 planted ids are q1..q74 without multiples of 5.
  const auto& rows = part["metrics"][0]["groups"][0]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["name"], "biology");  // natural order
  int64_t flipped = 0;
  for (const auto& r : rows) flipped += r["a_better"].get<int64_t>();
  EXPECT_EQ(flipped, 60);
}

TEST(CompareRuns, IdenticalRunsExitZero) {
  TempDir t("evalrun_compare");
  auto a = ChoiceSamples(400);
  MakeRun(t.path() + "/a", "one", "mmlupro", a);
  MakeRun(t.path() + "/b", "two", "mmlupro", a);
  Captured md = RunCompare(Opts(t.path() + "/a", t.path() + "/b"));
  EXPECT_EQ(md.code, kExitOk) << md.err;
  EXPECT_NE(md.out.find("**Verdict: no significant regression**"), std::string::npos);
  EXPECT_NE(md.out.find("| mmlupro | accuracy | 400 | 80.00 | 80.00 | +0.00 | [+0.00, +0.00] | 0 | 0 | 1 |"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("Nothing differs in what both runs recorded."), std::string::npos);
  EXPECT_NE(md.out.find("Same in both: engine build, model file, model (card), engine (card), slots, sampling, "
                        "thinking, card sha256,"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("Recorded in neither run: chat template sha256, host."), std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("0 A✓ B✗, 0 A✗ B✓."), std::string::npos);
}

TEST(CompareRuns, ImprovementAndMinDeltaDoNotFail) {
  TempDir t("evalrun_compare");
  std::vector<std::string> planted;
  auto good = ChoiceSamples(400);
  auto worse = Planted(good, 60, &planted);
  MakeRun(t.path() + "/a", "worse", "mmlupro", worse);
  MakeRun(t.path() + "/b", "better", "mmlupro", good);
  Captured up = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  EXPECT_EQ(up.code, kExitOk);
  nlohmann::json doc = nlohmann::json::parse(up.out);
  EXPECT_EQ(doc["improvements"], nlohmann::json::array({"mmlupro"}));
  EXPECT_EQ(doc["parts"][0]["verdict"], "improvement");

  // A regression of 15 points is not one when at least 20 are asked for.
  CompareOptions o = Opts(t.path() + "/b", t.path() + "/a", true);
  o.min_delta = 20;
  Captured small = RunCompare(o);
  EXPECT_EQ(small.code, kExitOk);
  EXPECT_EQ(nlohmann::json::parse(small.out)["parts"][0]["verdict"], "significant, below min-delta");
  o.min_delta = 15;
  EXPECT_EQ(RunCompare(o).code, kExitRegression);
  // alpha below the p-value: not significant.
  o.min_delta = 0;
  o.alpha = 1e-19;
  EXPECT_EQ(RunCompare(o).code, kExitOk);
}

TEST(CompareRuns, DifferentQuestionSetsUseTheIntersection) {
  TempDir t("evalrun_compare");
  MakeRun(t.path() + "/a", "a", "mmlupro", ChoiceSamples(400, 0));
  MakeRun(t.path() + "/b", "b", "mmlupro", ChoiceSamples(400, 10));  // q10..q409
  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  EXPECT_EQ(js.code, kExitOk) << js.err;
  nlohmann::json doc = nlohmann::json::parse(js.out);
  const auto& part = doc["parts"][0];
  EXPECT_EQ(part["paired"], 390);
  EXPECT_EQ(part["only_in_a"], 10);
  EXPECT_EQ(part["only_in_b"], 10);
  EXPECT_EQ(part["metrics"][0]["only_in_a_ids"][0], "q0");
  EXPECT_EQ(part["metrics"][0]["only_in_b_ids"][9], "q409");
  bool noted = false;
  for (const auto& n : doc["notes"])
    noted = noted || n == "part mmlupro: compared on the 390 ids both runs answered (10 only in A, 10 only in B)";
  EXPECT_TRUE(noted) << doc["notes"].dump();

  Captured md = RunCompare(Opts(t.path() + "/a", t.path() + "/b"));
  EXPECT_NE(md.out.find("Paired on 390 question ids; 10 only in A (q0, q1,"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("10 only in B (q400,"), std::string::npos);
}

TEST(CompareRuns, ShowsWhatDiffers) {
  TempDir t("evalrun_compare");
  auto a = ChoiceSamples(40);
  MakeRun(t.path() + "/a", "a", "mmlupro", a, "b5000-abc", Card(0.0));
  MakeRun(t.path() + "/b", "b", "mmlupro", a, "b5100-def", Card(0.7));
  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  ASSERT_EQ(js.code, kExitOk) << js.err;
  nlohmann::json doc = nlohmann::json::parse(js.out);
  std::map<std::string, nlohmann::json> setup;
  for (const auto& r : doc["setup"]) setup[r["field"]] = r;
  EXPECT_TRUE(setup["engine build"]["differs"].get<bool>());
  EXPECT_EQ(setup["engine build"]["a"], "b5000-abc");
  EXPECT_EQ(setup["engine build"]["b"], "b5100-def");
  EXPECT_TRUE(setup["sampling"]["differs"].get<bool>());
  EXPECT_TRUE(setup["card sha256"]["differs"].get<bool>());
  EXPECT_FALSE(setup["model file"]["differs"].get<bool>());
  EXPECT_FALSE(setup["slots"]["differs"].get<bool>());
  EXPECT_FALSE(setup["thinking"]["differs"].get<bool>());
  ASSERT_EQ(doc["card_diff"].size(), 1u);
  EXPECT_EQ(doc["card_diff"][0]["path"], "sampling.temperature");
  EXPECT_EQ(doc["card_diff"][0]["a"], 0.0);
  EXPECT_EQ(doc["card_diff"][0]["b"], 0.7);

  Captured md = RunCompare(Opts(t.path() + "/a", t.path() + "/b"));
  EXPECT_NE(md.out.find("| engine build | `b5000-abc` | `b5100-def` |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `sampling.temperature` | `0.0` | `0.7` |"), std::string::npos) << md.out;
}

TEST(JsonDiff, PathsForObjectsArraysAndAbsentKeys) {
  nlohmann::json a = {{"x", 1}, {"cmd", {"a", "b"}}, {"only_a", true}, {"o", {{"k", "v"}}}};
  nlohmann::json b = {{"x", 1}, {"cmd", {"a", "c", "d"}}, {"only_b", 2}, {"o", {{"k", "w"}}}};
  nlohmann::json d = JsonDiff(a, b);
  ASSERT_EQ(d.size(), 5u) << d.dump();
  EXPECT_EQ(d[0], (nlohmann::json{{"path", "cmd[1]"}, {"a", "b"}, {"b", "c"}}));
  EXPECT_EQ(d[1], (nlohmann::json{{"path", "cmd[2]"}, {"b", "d"}}));
  EXPECT_EQ(d[2], (nlohmann::json{{"path", "o.k"}, {"a", "v"}, {"b", "w"}}));
  EXPECT_EQ(d[3], (nlohmann::json{{"path", "only_a"}, {"a", true}}));
  EXPECT_EQ(d[4], (nlohmann::json{{"path", "only_b"}, {"b", 2}}));
  EXPECT_TRUE(JsonDiff(a, a).empty());
}

TEST(CompareRuns, BadInputExitsOneNamingTheFile) {
  TempDir t("evalrun_compare");
  auto a = ChoiceSamples(20);
  MakeRun(t.path() + "/a", "a", "mmlupro", a);

  Captured missing = RunCompare(Opts(t.path() + "/a", t.path() + "/nope"));
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find(t.path() + "/nope: no such folder"), std::string::npos) << missing.err;
  EXPECT_EQ(missing.out, "");

  fs::create_directories(t.path() + "/empty");
  Captured not_run = RunCompare(Opts(t.path() + "/a", t.path() + "/empty"));
  EXPECT_EQ(not_run.code, kExitBadInput);
  EXPECT_NE(not_run.err.find("not an evalrun run folder: " + t.path() + "/empty/results.json not found"),
            std::string::npos)
      << not_run.err;

  WriteText(t.path() + "/broken/results.json", "{\"schema\": \"evalrun.results/1\",\n  \"parts\": {,}}");
  Captured broken = RunCompare(Opts(t.path() + "/a", t.path() + "/broken"));
  EXPECT_EQ(broken.code, kExitBadInput);
  EXPECT_NE(broken.err.find(t.path() + "/broken/results.json:2:"), std::string::npos) << broken.err;

  WriteText(t.path() + "/other/results.json", R"({"schema": "something/2", "parts": {}})");
  Captured other = RunCompare(Opts(t.path() + "/a", t.path() + "/other"));
  EXPECT_EQ(other.code, kExitBadInput);
  EXPECT_NE(other.err.find("results.json: schema: expected \"evalrun.results/1\", got \"something/2\""),
            std::string::npos)
      << other.err;

  MakeRun(t.path() + "/badline", "b", "mmlupro", a);
  WriteText(t.path() + "/badline/mmlupro/samples.jsonl", a[0].dump() + "\nnot json\n" + a[1].dump() + "\n");
  Captured badline = RunCompare(Opts(t.path() + "/a", t.path() + "/badline"));
  EXPECT_EQ(badline.code, kExitBadInput);
  EXPECT_NE(badline.err.find(t.path() + "/badline/mmlupro/samples.jsonl:2: not a JSON line"), std::string::npos)
      << badline.err;

  MakeRun(t.path() + "/nosamples", "b", "mmlupro", a);
  fs::remove(t.path() + "/nosamples/mmlupro/samples.jsonl");
  Captured nosamples = RunCompare(Opts(t.path() + "/a", t.path() + "/nosamples"));
  EXPECT_EQ(nosamples.code, kExitBadInput);
  EXPECT_NE(nosamples.err.find(t.path() + "/nosamples/mmlupro/samples.jsonl: not found"), std::string::npos)
      << nosamples.err;

  auto bad_field = a;
  bad_field[3]["correct"] = "yes";
  MakeRun(t.path() + "/badfield", "b", "mmlupro", bad_field);
  Captured field = RunCompare(Opts(t.path() + "/a", t.path() + "/badfield"));
  EXPECT_EQ(field.code, kExitBadInput);
  EXPECT_NE(field.err.find("/badfield/mmlupro/samples.jsonl:4: correct: expected true or false, got \"yes\""),
            std::string::npos)
      << field.err;

  CompareOptions o = Opts(t.path() + "/a", t.path() + "/a");
  o.parts = {"mmlupr"};
  Captured typo = RunCompare(o);
  EXPECT_EQ(typo.code, kExitBadInput);
  EXPECT_NE(typo.err.find("--parts: part \"mmlupr\" is not in"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("did you mean \"mmlupro\""), std::string::npos) << typo.err;

  o.parts = {};
  o.alpha = 1.5;
  EXPECT_EQ(RunCompare(o).code, kExitBadInput);
}

TEST(CompareRuns, TornLastLineIsSkippedAndTheFileLeftAlone) {
  TempDir t("evalrun_compare");
  auto a = ChoiceSamples(20);
  MakeRun(t.path() + "/a", "a", "mmlupro", a);
  MakeRun(t.path() + "/b", "b", "mmlupro", a);
  const std::string path = t.path() + "/b/mmlupro/samples.jsonl";
  std::string text = ReadFile(path) + "{\"id\": \"q20\", \"corr";
  WriteText(path, text);
  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  EXPECT_EQ(js.code, kExitOk) << js.err;
  nlohmann::json doc = nlohmann::json::parse(js.out);
  EXPECT_EQ(doc["parts"][0]["paired"], 20);
  EXPECT_EQ(doc["notes"][0], path + ": a torn last line (crash mid-write) was skipped");
  EXPECT_EQ(ReadFile(path), text);  // read-only
}

TEST(CompareRuns, IfevalPairsPromptsAndInstructions) {
  TempDir t("evalrun_compare");
  auto sample = [](int i, bool first_ok, bool second_ok) {
    bool all = first_ok && second_ok;
    return nlohmann::json{
        {"id", std::to_string(1000 + i)},
        {"category", ""},
        {"instruction_id_list", {"punctuation:no_comma", "length_constraints:number_words"}},
        {"strict", {{"follow_all_instructions", all}, {"follow_instruction_list", {first_ok, second_ok}}}},
        {"loose", {{"follow_all_instructions", all}, {"follow_instruction_list", {first_ok, second_ok}}}},
        {"cut_off", false}};
  };
  std::vector<nlohmann::json> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(sample(i, true, true));
    b.push_back(sample(i, i >= 12, true));  // 12 prompts lose no_comma
  }
  MakeRun(t.path() + "/a", "a", "ifeval", a);
  MakeRun(t.path() + "/b", "b", "ifeval", b);
  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  EXPECT_EQ(js.code, kExitRegression) << js.err;
  nlohmann::json doc = nlohmann::json::parse(js.out);
  const auto& part = doc["parts"][0];
  EXPECT_EQ(part["kind"], "ifeval");
  EXPECT_EQ(part["headline"], "prompt_strict");
  ASSERT_EQ(part["metrics"].size(), 4u);
  const auto& ps = part["metrics"][0]["overall"];
  EXPECT_EQ(ps["n"], 30);
  EXPECT_EQ(ps["a_better"], 12);
  EXPECT_EQ(ps["b_better"], 0);
  EXPECT_NEAR(ps["p_value"].get<double>(), 2.0 / 4096.0, 1e-18);  // 2 * 2^-12
  const auto& inst = part["metrics"][1];
  EXPECT_EQ(inst["name"], "inst_strict");
  EXPECT_EQ(inst["overall"]["n"], 60);
  EXPECT_EQ(inst["overall"]["a_better"], 12);
  const auto& rows = inst["groups"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["name"], "length_constraints:number_words");
  EXPECT_EQ(rows[0]["a_better"], 0);
  EXPECT_EQ(rows[1]["name"], "punctuation:no_comma");
  EXPECT_EQ(rows[1]["n"], 30);
  EXPECT_EQ(rows[1]["a_better"], 12);
  EXPECT_EQ(rows[1]["score_b"], 0.6);
  EXPECT_EQ(part["flipped"][0]["label"], "punctuation:no_comma, length_constraints:number_words");
}

TEST(CompareRuns, RulerFractionsUseTheSignTestAndCountPartials) {
  TempDir t("evalrun_compare");
  std::vector<nlohmann::json> a, b;
  // Two tasks at two lengths, 10 samples each. B is lower on 8 samples of
  // niah_multikey_1 @ 16384 (4 by a whole answer, 4 partially: 1 -> 0.5).
  for (int length : {8192, 16384}) {
    for (const char* task : {"niah_multikey_1", "vt"}) {
      for (int i = 0; i < 10; ++i) {
        nlohmann::json s = {{"id", std::string(task) + "-" + std::to_string(length) + "-" + std::to_string(i)},
                            {"task", task},
                            {"length", length},
                            {"score", 1.0},
                            {"cut_off", false}};
        a.push_back(s);
        if (length == 16384 && std::string(task) == "niah_multikey_1" && i < 8) s["score"] = i < 4 ? 0.0 : 0.5;
        b.push_back(s);
      }
    }
  }
  MakeRun(t.path() + "/a", "a", "ruler", a);
  MakeRun(t.path() + "/b", "b", "ruler", b);
  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  nlohmann::json doc = nlohmann::json::parse(js.out);
  const auto& part = doc["parts"][0];
  EXPECT_EQ(part["kind"], "fraction");
  const auto& st = part["metrics"][0]["overall"];
  EXPECT_EQ(st["n"], 40);
  EXPECT_EQ(st["a_better"], 8);
  EXPECT_EQ(st["b_better"], 0);
  EXPECT_EQ(st["partial"], 4);
  EXPECT_EQ(st["delta"], -0.15);  // (4 * 1 + 4 * 0.5) / 40
  EXPECT_DOUBLE_EQ(st["p_value"].get<double>(), 2.0 / 256.0);
  EXPECT_EQ(js.code, kExitRegression);
  const auto& groups = part["metrics"][0]["groups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["dimension"], "length");
  EXPECT_EQ(groups[0]["rows"][0]["name"], "8192");  // numeric order
  EXPECT_EQ(groups[0]["rows"][1]["name"], "16384");
  EXPECT_EQ(groups[0]["rows"][1]["score_b"], 0.7);
  EXPECT_EQ(groups[1]["dimension"], "task @ length");
  EXPECT_EQ(groups[1]["rows"][0]["name"], "niah_multikey_1 @ 8192");
  EXPECT_EQ(groups[1]["rows"][1]["name"], "niah_multikey_1 @ 16384");
  EXPECT_EQ(groups[1]["rows"][1]["score_b"], 0.4);

  Captured md = RunCompare(Opts(t.path() + "/a", t.path() + "/b"));
  EXPECT_NE(md.out.find("| `niah_multikey_1-16384-4` | niah_multikey_1 @ 16384 | 1.00 | 0.50 |"),
            std::string::npos)
      << md.out;
}

TEST(CompareRuns, GpqaSubdomainsAreASecondDimension) {
  TempDir t("evalrun_compare");
  auto a = ChoiceSamples(40);
  for (size_t i = 0; i < a.size(); ++i) a[i]["subdomain"] = i % 2 ? "Organic Chemistry" : "Quantum Mechanics";
  MakeRun(t.path() + "/a", "a", "gpqa", a);
  MakeRun(t.path() + "/b", "b", "gpqa", a);
  Captured js = RunCompare(Opts(t.path() + "/a", t.path() + "/b", true));
  ASSERT_EQ(js.code, kExitOk) << js.err;
  const nlohmann::json doc = nlohmann::json::parse(js.out);
  const auto& groups = doc["parts"][0]["metrics"][0]["groups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1]["dimension"], "subdomain");
  EXPECT_EQ(groups[1]["rows"][0]["name"], "Organic Chemistry");
  EXPECT_EQ(groups[1]["rows"][0]["n"], 20);
}

TEST(CompareRuns, PartsOnlyInOneRunAreNotedAndPartsFlagSelects) {
  TempDir t("evalrun_compare");
  auto a = ChoiceSamples(20);
  MakeRun(t.path() + "/a", "a", "mmlupro", a);
  MakeRun(t.path() + "/b", "b", "gpqa", a);
  Captured none = RunCompare(Opts(t.path() + "/a", t.path() + "/b"));
  EXPECT_EQ(none.code, kExitBadInput);
  EXPECT_NE(none.err.find("no part in common"), std::string::npos) << none.err;

  CompareOptions o = Opts(t.path() + "/a", t.path() + "/b");
  o.parts = {"gpqa"};
  Captured c = RunCompare(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("part \"gpqa\" is not in " + t.path() + "/a/results.json"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace evalrun
