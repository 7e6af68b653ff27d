// `evalrun compare A B --noise A A2`: the noise floor per part, its labels in
// Markdown and --json, and the pairs it refuses (evals/publish/compare_noise.h).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "evals/base/exit_codes.h"
#include "evals/publish/compare.h"
#include "tests/engine/compare_runs_fixture.h"
#include "tests/support/capture_output.h"
#include "tests/support/run_binary.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {
using testing::Captured;
using testing::TempDir;
using testing::AllRight;
using testing::MakeRun;
using testing::Wrong;

CompareOptions Opts(const TempDir& t, const std::string& b, bool json, bool noise = true) {
  CompareOptions o;
  o.run_a = t.path() + "/a";
  o.run_b = t.path() + "/" + b;
  o.json = json;
  if (noise) {
    o.noise_a = t.path() + "/a";
    o.noise_a2 = t.path() + "/a2";
  }
  return o;
}

Captured Compare(const CompareOptions& o) {
  return testing::Capture([&](FILE* out, FILE* err) { return CompareRuns(o, out, err); });
}

// A: 400 right; A2: 6 of them flipped (d = 6/400); B10: 10 wrong (-2.5 pp);
// B4: 4 wrong (-1 pp). MDE = 2.801585 * sqrt(0.015 / 400) = 1.7156 pp.
class CompareNoise : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeRun(t_.path() + "/a", "a", {{"mmlupro", AllRight(400)}});
    MakeRun(t_.path() + "/a2", "a2", {{"mmlupro", Wrong(AllRight(400), {100, 101, 102, 103, 104, 105})}});
    MakeRun(t_.path() + "/b10", "b10", {{"mmlupro", Wrong(AllRight(400), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}});
    MakeRun(t_.path() + "/b4", "b4", {{"mmlupro", Wrong(AllRight(400), {0, 1, 2, 3})}});
  }
  TempDir t_{"evalrun_compare_noise"};
};

TEST_F(CompareNoise, JsonStatesTheFloorAndLabelsPerPart) {
  Captured c = Compare(Opts(t_, "b10", true));
  ASSERT_EQ(c.code, kExitRegression) << c.err;
  nlohmann::json doc = nlohmann::json::parse(c.out);
  const auto& nf = doc["noise_floor"];
  EXPECT_EQ(nf["measured"], true);
  EXPECT_EQ(nf["a2"], t_.path() + "/a2");
  EXPECT_EQ(nf["power"], 0.8);
  EXPECT_NE(nf["formula"].get<std::string>().find("MDE = (z_{1-alpha/2} + z_{power}) * sqrt(d / n)"), std::string::npos);
  const auto& n = doc["parts"][0]["noise"];
  EXPECT_EQ(n["pairs"], 400);
  EXPECT_EQ(n["flips"], 6);
  EXPECT_EQ(n["flip_rate"], 0.015);
  EXPECT_EQ(n["n"], 400);
  EXPECT_EQ(n["mde"], 0.017156);
  EXPECT_EQ(n["delta"], -0.025);
  EXPECT_EQ(n["within_noise"], false);
  EXPECT_EQ(n["label"], "beyond noise");
  EXPECT_EQ(doc["parts"][0]["within_noise"], false);

  c = Compare(Opts(t_, "b4", true));
  ASSERT_EQ(c.code, kExitOk) << c.err;  // McNemar 4 vs 0: p = 0.125
  doc = nlohmann::json::parse(c.out);
  EXPECT_EQ(doc["parts"][0]["noise"]["within_noise"], true);
  EXPECT_EQ(doc["parts"][0]["noise"]["label"], "within noise");
}

TEST_F(CompareNoise, MarkdownShowsTheFormulaTheFloorAndTheLabel) {
  Captured c = Compare(Opts(t_, "b4", false));
  ASSERT_EQ(c.code, kExitOk) << c.err;
  EXPECT_NE(c.out.find("## Noise floor (A/A)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("MDE = (z_{1-alpha/2} + z_{power}) * sqrt(d / n)"), std::string::npos);
  EXPECT_NE(c.out.find("| mmlupro | 6/400 | 1.50 % | 400 | 1.72 | -1.00 | within noise |"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("- mmlupro: flip rate 6/400 = 1.50 %; MDE = (1.960 + 0.842) * sqrt(0.0150 / 400) = 1.72 pp"),
            std::string::npos);
  EXPECT_NE(c.out.find("| no significant change (within noise) |"), std::string::npos) << c.out;

  c = Compare(Opts(t_, "b10", false));
  ASSERT_EQ(c.code, kExitRegression) << c.err;
  EXPECT_NE(c.out.find("| mmlupro | 6/400 | 1.50 % | 400 | 1.72 | -2.50 | beyond noise |"), std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("| **regression** |"), std::string::npos) << c.out;
}

TEST_F(CompareNoise, WithoutNoiseSaysNoFloorWasMeasured) {
  Captured c = Compare(Opts(t_, "b4", false, false));
  ASSERT_EQ(c.code, kExitOk) << c.err;
  EXPECT_NE(c.out.find("## Noise floor (A/A)\n\nNot measured: no noise floor was measured: give --noise A A2"),
            std::string::npos)
      << c.out;
  EXPECT_EQ(c.out.find("within noise"), std::string::npos);
  c = Compare(Opts(t_, "b4", true, false));
  nlohmann::json doc = nlohmann::json::parse(c.out);
  EXPECT_EQ(doc["noise_floor"]["measured"], false);
  EXPECT_NE(doc["noise_floor"]["text"].get<std::string>().find("no noise floor was measured"), std::string::npos);
  EXPECT_TRUE(doc["parts"][0]["noise"].is_null());
  EXPECT_TRUE(doc["parts"][0]["within_noise"].is_null());
}

TEST_F(CompareNoise, NoFlipsSaysTheFloorIsBelowOneOverN) {
  CompareOptions o = Opts(t_, "b4", true);
  o.noise_a2 = t_.path() + "/a";  // A against itself: no flips
  Captured c = Compare(o);
  ASSERT_EQ(c.code, kExitOk) << c.err;
  const auto n = nlohmann::json::parse(c.out)["parts"][0]["noise"];
  EXPECT_EQ(n["flips"], 0);
  EXPECT_TRUE(n["mde"].is_null());
  EXPECT_EQ(n["mde_below"], 0.0025);
  EXPECT_EQ(n["within_noise"], false);  // -1 pp is not below 1/400
  EXPECT_EQ(n["text"], "flip rate 0/400: no flips in the A/A pair: the floor is below 1/n = 0.25 pp (n = 400)");
  o.json = false;
  c = Compare(o);
  EXPECT_NE(c.out.find("| mmlupro | 0/400 | 0.00 % | 400 | < 0.25 (no flips) | -1.00 | beyond noise |"),
            std::string::npos)
      << c.out;
}

TEST_F(CompareNoise, RefusesAPairThatDoesNotCoverTheSameItems) {
  // Fewer items in the noise pair.
  auto short_run = AllRight(400);
  short_run.resize(390);
  MakeRun(t_.path() + "/short", "short", {{"mmlupro", short_run}});
  CompareOptions o = Opts(t_, "b4", false);
  o.noise_a2 = t_.path() + "/short";
  Captured c = Compare(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_EQ(c.out, "");
  EXPECT_NE(c.err.find("--noise: part mmlupro: A/B pairs 400 items, the noise pair"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("10 compared in A/B are not answered in both noise runs (e.g. q390)"), std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("the noise pair must cover the same parts and items as A/B"), std::string::npos);

  // A part compared but missing in the noise pair.
  MakeRun(t_.path() + "/a_two", "a_two", {{"mmlupro", AllRight(400)}, {"gpqa", AllRight(20)}});
  MakeRun(t_.path() + "/b_two", "b_two", {{"mmlupro", AllRight(400)}, {"gpqa", AllRight(20)}});
  o = Opts(t_, "b_two", false);
  o.run_a = t_.path() + "/a_two";
  c = Compare(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("--noise: part gpqa is compared but not in " + t_.path() +
                       "/a/results.json (it has: mmlupro): the noise pair must cover the same parts and items as A/B"),
            std::string::npos)
      << c.err;

  // A noise folder that is not a run.
  o = Opts(t_, "b4", false);
  o.noise_a2 = t_.path() + "/nothing";
  c = Compare(o);
  EXPECT_EQ(c.code, kExitBadInput);
  EXPECT_NE(c.err.find("--noise: "), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("nothing"), std::string::npos) << c.err;
}

TEST_F(CompareNoise, TheBinaryTakesTwoFoldersAfterNoise) {
  const std::string a = t_.path() + "/a", a2 = t_.path() + "/a2", b = t_.path() + "/b4";
  auto r = testing::RunBinary({testing::EvalrunBinary(), "compare", a, b, "--noise", a, a2, "--json"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["parts"][0]["noise"]["label"], "within noise");
  r = testing::RunBinary({testing::EvalrunBinary(), "compare", a, b, "--noise", a});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_NE(r.err.find("--noise"), std::string::npos) << r.err;
}

TEST(CompareNoiseFractions, RulerUsesTheMeanSquaredDifference) {
  TempDir t("evalrun_compare_noise");
  // 40 RULER samples; A2 differs from A by 0.5 on 4 of them (s2 = 4 * 0.25 / 40 = 0.025);
  // B is A with one sample 1 -> 0.
  std::vector<nlohmann::json> a, a2, b;
  for (int i = 0; i < 40; ++i) {
    nlohmann::json s = {{"id", "niah_single_1-4096-" + std::to_string(i)}, {"task", "niah_single_1"},
                        {"length", 4096}, {"score", 1.0}, {"cut_off", false}};
    a.push_back(s);
    b.push_back(s);
    if (i < 4) s["score"] = 0.5;
    a2.push_back(s);
  }
  b[10]["score"] = 0.0;
  MakeRun(t.path() + "/a", "a", {{"ruler", a}});
  MakeRun(t.path() + "/a2", "a2", {{"ruler", a2}});
  MakeRun(t.path() + "/b", "b", {{"ruler", b}});
  Captured c = Compare(Opts(t, "b", true));
  ASSERT_EQ(c.code, kExitOk) << c.err;
  const auto n = nlohmann::json::parse(c.out)["parts"][0]["noise"];
  EXPECT_EQ(n["flips"], 4);
  EXPECT_EQ(n["flip_rate"], 0.1);
  EXPECT_EQ(n["mean_sq_diff"], 0.025);
  // 2.801585218 * sqrt(0.025 / 40) = 0.070039630
  EXPECT_EQ(n["mde"], 0.07004);
  EXPECT_EQ(n["delta"], -0.025);
  EXPECT_EQ(n["label"], "within noise");
  EXPECT_NE(n["text"].get<std::string>().find("sqrt(s2 0.0250 / 40) = 7.00 pp"), std::string::npos) << n["text"];
}

}  // namespace
}  // namespace evalrun
