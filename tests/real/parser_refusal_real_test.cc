// No answer lost to llama-server's output parser, against the
// real server: a random-weight Qwen3-shaped model with the real Qwen3
// tokenizer and chat template, made at test time in the temp folder
// (../shared/gpu/make_qwen3_model.py, ~160 MB, needs Debian's python3-numpy
// for /usr/bin/python3), served with --jinja. Its greedy chat answers are
// mostly refused (HTTP 500 "... does not match the expected peg-native
// format"); evalrun must score every question: recovered as raw text
// (raw_fallback) or, where nothing recovers it, counted wrong
// (server_parse_error), and end with exit 0.
#include <map>
#include <string>
#include <vector>

#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class ParserRefusalReal : public RealLaneTest {
 protected:
  // The model's path, or "" with *why set (the test then skips).
  std::string MakeModel(std::string* why) {
    const BinaryResult numpy = RunBinary({"/usr/bin/python3", "-c", "import numpy"}, 60);
    if (numpy.exit_code != 0) {
      *why = "/usr/bin/python3 lacks numpy (Debian's python3-numpy): cannot make the random Qwen3 model";
      return "";
    }
    const std::string gpu = SharedDir() + "/gpu";
    const std::string out = dir_ + "/q3rand.gguf";
    const BinaryResult r = RunBinary({"/usr/bin/python3", gpu + "/make_qwen3_model.py",
                                      SharedDir() + "/models/tiny-qwen3-vocab.gguf", out, "256", "2", "4", "2",
                                      "64", "512"},
                                     300, {"PYTHONPATH=" + gpu + "/gguf-py"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? out : "";
  }
};

TEST_F(ParserRefusalReal, EveryRefusedAnswerIsScoredAndTheRunCompletes) {
  std::string why;
  const std::string model = MakeModel(&why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_FALSE(model.empty());
  LlamaServer* s = StartServer({.model = model, .parallel = 4, .ctx = 8192, .metrics = false,
                                .extra = {"--jinja"}, .chat_template = ""});
  ASSERT_TRUE(s->running());
  nlohmann::json server = Server(s);
  server["retries"] = 2;
  const std::string card = WriteCardJson(Card(server, {{"mmlupro", {{"questions", 20}, {"max_tokens", 48}}}}));
  BinaryResult r = Run({"--card", card, "--job", "q3"}, 600);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json p = Results("q3")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 20) << p.dump(2);
  EXPECT_EQ(p["failed"], 0);
  const int raw = p.value("raw_fallback", 0), lost = p.value("server_parse_error", 0);
  EXPECT_GT(raw + lost, 0) << "the random model's answers should trip the parser (docs/measurements.md, \"The raw route\")";
  const auto samples = Samples("q3", "mmlupro");
  ASSERT_EQ(samples.size(), 20u);
  int refused = 0, marked_raw = 0;
  for (const auto& x : samples) {
    bool parser_500 = false;
    if (x.contains("attempt_causes"))
      for (const auto& a : x["attempt_causes"]) parser_500 |= a["cause"] == "server_parse_error";
    refused += parser_500;
    marked_raw += x.value("raw_fallback", false);
    if (parser_500) {
      EXPECT_TRUE(x.value("raw_fallback", false) || x.value("server_parse_error", false)) << x.dump();
    }
    if (x.value("raw_fallback", false)) {
      EXPECT_GT(x["completion_tokens"].get<int>(), 0) << x.dump();
    }
  }
  EXPECT_EQ(refused, raw + lost);
  EXPECT_EQ(marked_raw, raw);
  // The epsilon parser recovers every one of them on b10470.
  EXPECT_EQ(lost, 0) << r.err;
  std::fprintf(stderr, "parser refusals: %d of 20 greedy chat answers; raw fallback recovered %d\n", refused, raw);
}

// The speed part against the same refusing server: a chat stream the parser
// ends with an error event is sent again over /completion (raw text, the
// accept-anything chat_parser), so every step is measured, no request is
// failed, and requests.jsonl holds the route each request took.
TEST_F(ParserRefusalReal, TheSpeedPartMeasuresEveryStepOverTheRawRouteWhereTheChatStreamIsRefused) {
  std::string why;
  const std::string model = MakeModel(&why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_FALSE(model.empty());
  LlamaServer* s = StartServer({.model = model, .parallel = 2, .ctx = 4096, .metrics = true,
                                .extra = {"--jinja"}, .chat_template = ""});
  ASSERT_TRUE(s->running());
  const nlohmann::json speed = {{"steps", {"decode", "conc"}}, {"prompt_ids", {"prose"}},
                                {"decode_prompt_tokens", 256}, {"runs", 4}, {"warmups", 1}, {"max_tokens", 160},
                                {"conc_levels", {1, 2, 4}}, {"conc_rounds", 1}, {"guard_threshold_pct", 99999}};
  const std::string card = WriteCardJson(Card(Server(s, 2), {{"speed", speed}}));
  BinaryResult r = Run({"--card", card, "--job", "sp", "--parts", "speed"}, 600);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json res = Results("sp")["parts"]["speed"];
  ASSERT_TRUE(res["complete"].get<bool>()) << res.dump(2);
  const auto samples = Lines(JobDir("sp") + "/speed/samples.jsonl");
  ASSERT_FALSE(samples.empty());
  int raw = 0;
  for (const auto& x : samples) {
    EXPECT_EQ(x["status"], "ok") << x.dump();
    EXPECT_EQ(x["completion_tokens"], 160) << x.dump();
    raw += x["route"] == "completion";
    if (x["route"] == "completion") {
      EXPECT_NE(x.value("refused_chat", std::string()).find("peg-native"), std::string::npos) << x.dump();
    }
  }
  EXPECT_GT(raw, 0) << "the random model's chat streams should trip the parser";
  // requests.jsonl: each raw-route request after what was sent before it for
  // the same answer (the refused chat stream, /apply-template), untimed.
  int raw_bodies = 0;
  std::map<uint64_t, std::vector<std::string>> chains;
  for (const auto& b : Lines(JobDir("sp") + "/speed/requests.jsonl")) {
    raw_bodies += b["path"] == "/completion";
    chains[b["seq"].get<uint64_t>()].push_back(b["path"].get<std::string>() + (b["timed"] == true ? "" : " (untimed)"));
  }
  EXPECT_EQ(raw_bodies, raw);
  for (const auto& x : samples) {
    const auto& chain = chains[x["seq"].get<uint64_t>()];
    if (x["route"] == "completion")
      EXPECT_EQ(chain, (std::vector<std::string>{"/v1/chat/completions (untimed)", "/apply-template (untimed)",
                                                 "/completion"}))
          << x["seq"];
    else
      EXPECT_EQ(chain, std::vector<std::string>{"/v1/chat/completions"}) << x["seq"];
  }
  std::fprintf(stderr, "speed: %d of %zu requests over the raw route\n", raw, samples.size());
}

}  // namespace
}  // namespace evalrun::testing
