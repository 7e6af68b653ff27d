// The managed engine and the fit ladder with a real llama-server, and the
// noise sampler naming the engine.
#include <fstream>

#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealManaged : public RealLaneTest {};

TEST_F(RealManaged, FitLadderRestartsTheEngineAndRecordsTheCappedStep) {
  // stories260K.gguf: training context 2048, so a slot asked for 4096 gets 2048.
  const int port = FreeLoopbackPort();
  LlamaServerArgs a{.model = "stories260K.gguf", .parallel = 1, .ctx = 0, .extra = {"-c", "{context}"}};
  const std::vector<std::string> cmd = LlamaServerArgv(a, port, "{port}");
  nlohmann::json server = {{"base_url", "http://127.0.0.1:" + std::to_string(port) + "/v1"},
                           {"slots", 1}, {"command", cmd}, {"stop_grace_s", 10}};
  const std::string card = WriteCardJson(
      Card(server, {{"fit", {{"contexts", {1024, 2048, 4096}}, {"fill", 0.9}, {"max_tokens", 16}}}}));
  BinaryResult r = Run({"--card", card, "--job", "fit"}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fit = Results("fit")["parts"]["fit"];
  ASSERT_EQ(fit["steps"].size(), 3u) << fit.dump();
  for (const auto& step : fit["steps"]) {
    EXPECT_EQ(step["loaded"], true) << step.dump();
    EXPECT_EQ(step["answered"], true) << step.dump();
    EXPECT_LE(step["prompt_tokens"].get<int>() + 16, step["effective_context"].get<int>()) << step.dump();
  }
  EXPECT_EQ(fit["steps"][0]["capped"], false);
  EXPECT_EQ(fit["steps"][2]["capped"], true);
  EXPECT_EQ(fit["steps"][2]["context"], 4096);
  EXPECT_EQ(fit["steps"][2]["n_ctx_slot"], 2048);
  EXPECT_EQ(fit["largest"], 2048);
  // Every engine it started was stopped: nothing listens on the port now.
  EXPECT_NE(ReadFile(JobDir("fit") + "/server.log").find("=== evalrun"), std::string::npos);
}

TEST_F(RealManaged, TheNoiseSamplerNamesTheEnginesPid) {
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 8192});
  nlohmann::json c = Card(Server(s), {{"mmlupro", {{"questions", 16}, {"max_tokens", 256}}}});
  c["load_sampling"] = {{"interval_s", 0.2}};
  const std::string card = WriteCardJson(c);
  BinaryResult r = Run({"--card", card, "--job", "noise"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto noise = Results("noise")["load"];
  bool named = false;
  for (const auto& pid : noise["engine_pids"]) named |= pid.get<int>() == s->pid();
  EXPECT_TRUE(named) << "engine pid " << s->pid() << " not in " << noise.dump();
  EXPECT_NE(r.err.find("pid " + std::to_string(s->pid())), std::string::npos) << r.err;
  // Its CPU is the engine's, never foreign.
  for (const auto& l : Lines(JobDir("noise") + "/load.jsonl"))
    for (const auto& t : l["top"]) EXPECT_NE(t["pid"].get<int>(), s->pid()) << l.dump();
}

}  // namespace
}  // namespace evalrun::testing
