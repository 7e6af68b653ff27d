// The noise floor against a real llama-server: one MMLU-Pro card (60
// questions, max_tokens 32) run twice with 4 slots on the tiny model
// (`--repeat 2`), the flip rate between the repeats and the detectable
// difference it gives; then -np 4 against -np 1 as the pair. With greedy
// decoding the tiny model may flip few or no items: the test checks that the
// figures are measured and stated consistently, never how many flips there
// are, and prints them (the lane's log keeps them).
#include <cmath>
#include <cstdio>
#include <map>

#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealNoiseFloor : public RealLaneTest {
 protected:
  nlohmann::json Parts() { return {{"mmlupro", {{"questions", 60}, {"max_tokens", 32}}}}; }
  // Items whose response text differs between two samples files (a finer
  // view than the flips of right/wrong).
  int TextDiffers(const std::string& a, const std::string& b) {
    std::map<std::string, std::string> ra;
    for (const auto& s : Lines(a)) ra[s["id"].get<std::string>()] = s["response"].get<std::string>();
    int n = 0;
    for (const auto& s : Lines(b)) {
      const std::string id = s["id"];
      n += ra.count(id) && ra[id] != s["response"].get<std::string>();
    }
    return n;
  }
  // The floor is stated as the formula says, whatever the flips.
  void CheckFloor(const nlohmann::json& f, int n) {
    ASSERT_TRUE(f.is_object()) << f.dump();
    EXPECT_EQ(f["n"], n);
    const double d = f["mean_sq_diff"].get<double>();
    if (f["flips"].get<int>() > 0) {
      EXPECT_NEAR(f["mde"].get<double>(), 2.801585218112968 * std::sqrt(d / n), 2e-6) << f.dump();
    } else {
      EXPECT_TRUE(f["mde"].is_null());
      EXPECT_NEAR(f["mde_below"].get<double>(), 1.0 / n, 1e-6);
      EXPECT_NE(f["text"].get<std::string>().find("no flips in the A/A pair: the floor is below 1/n"),
                std::string::npos);
    }
  }
};

TEST_F(RealNoiseFloor, RepeatTwoWithFourSlotsAndFourSlotsAgainstOne) {
  LlamaServer* s4 = StartServer({.parallel = 4, .ctx = 32768});
  LlamaServer* s1 = StartServer({.parallel = 1, .ctx = 8192});
  const std::string card4 = WriteCardJson(Card(Server(s4), Parts()), "np4.json");
  const std::string card1 = WriteCardJson(Card(Server(s1), Parts()), "np1.json");

  BinaryResult r = Run({"--card", card4, "--job", "np4", "--repeat", "2"}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = Results("np4")["parts"]["mmlupro"];
  EXPECT_EQ(p["complete"], true);
  const auto& rep = p["repeat"];
  EXPECT_EQ(rep["pairs"], 60);
  CheckFloor(rep, 60);
  EXPECT_NE(r.out.find("repeat 2 of mmlupro"), std::string::npos) << r.out;
  const int text4 = TextDiffers(JobDir("np4") + "/mmlupro/samples.jsonl",
                                JobDir("np4") + "/repeat-2/mmlupro/samples.jsonl");
  std::printf("[figures] -np 4 twice (--repeat 2): %s; score %.4f / %.4f; responses differing in text: %d of 60\n",
              rep["text"].get<std::string>().c_str(), p["score"].get<double>(), rep["score_repeat_2"].get<double>(),
              text4);

  r = Run({"--card", card1, "--job", "np1"}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // -np 4 against -np 1 as the A/A-style pair: how much do slots alone move?
  BinaryResult c = RunBinary({EvalrunBinary(), "compare", JobDir("np4"), JobDir("np1"), "--noise", JobDir("np4"),
                              JobDir("np1"), "--json"});
  ASSERT_LE(c.exit_code, 4) << c.err;
  ASSERT_NE(c.exit_code, 1) << c.err;
  const auto doc = nlohmann::json::parse(c.out);
  const auto& n41 = doc["parts"][0]["noise"];
  CheckFloor(n41, 60);
  const int text41 = TextDiffers(JobDir("np4") + "/mmlupro/samples.jsonl", JobDir("np1") + "/mmlupro/samples.jsonl");
  std::printf("[figures] -np 4 vs -np 1: %s; responses differing in text: %d of 60\n",
              n41["text"].get<std::string>().c_str(), text41);

  // The comparison np4 -> np1 against the floor of np4's two repeats.
  c = RunBinary({EvalrunBinary(), "compare", JobDir("np4"), JobDir("np1"), "--noise", JobDir("np4"),
                 JobDir("np4") + "/repeat-2"});
  ASSERT_LE(c.exit_code, 4) << c.err;
  ASSERT_NE(c.exit_code, 1) << c.err;
  EXPECT_NE(c.out.find("## Noise floor (A/A)"), std::string::npos) << c.out;
  EXPECT_TRUE(c.out.find("within noise |") != std::string::npos || c.out.find("beyond noise |") != std::string::npos)
      << c.out;
  const size_t at = c.out.find("| part | A/A flips |");
  std::printf("[figures] compare np4 np1 --noise np4 np4/repeat-2:\n%s\n",
              at == std::string::npos ? c.out.c_str() : c.out.substr(at, 400).c_str());
}

}  // namespace
}  // namespace evalrun::testing
