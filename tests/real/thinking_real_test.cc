// The thinking part's switch check against real llama-server templates
//: tiny-qwen3-vocab.gguf with --jinja has Qwen3's template (the
// off prompt ends with an empty think block); stories260K with chatml has
// no switch; the Qwen3 model behind a gateway that strips
// chat_template_kwargs has the switch dropped on the way.
#include "tests/real/counting_proxy.h"
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class ThinkingReal : public RealLaneTest {
 protected:
  LlamaServer* StartQwen3() {
    return StartServer({.model = "tiny-qwen3-vocab.gguf", .parallel = 2, .ctx = 4096, .metrics = false,
                        .extra = {"--jinja"}, .chat_template = ""});
  }
  // Runs the thinking part on two GPQA questions through `base_url`; its
  // results object.
  nlohmann::json RunThinking(const std::string& base_url, const std::string& job) {
    nlohmann::json parts = {{"thinking", {{"benchmarks", {{"gpqa", 2}}}, {"budget", 16}, {"answer_tokens", 8}}}};
    const std::string card = WriteCardJson(Card({{"base_url", base_url}, {"slots", "auto"}}, parts), job + ".json");
    BinaryResult r = Run({"--card", card, "--job", job}, 300);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("thinking switch: "), std::string::npos) << r.err;
    return Results(job)["parts"]["thinking"];
  }
};

TEST_F(ThinkingReal, Qwen3TemplateWithJinjaReachesTheSwitch) {
  LlamaServer* s = StartQwen3();
  const nlohmann::json res = RunThinking(s->base_url(), "qwen3");
  const nlohmann::json& sw = res["switch"];
  EXPECT_EQ(sw["verdict"], "reaches") << sw.dump(2);
  EXPECT_EQ(sw["text"], "the switch reaches the template");
  // Qwen3: the off prompt ends with an empty think block, 4 tokens.
  EXPECT_EQ(sw["chat_prompt_tokens"]["off"].get<int>() - sw["chat_prompt_tokens"]["on"].get<int>(), 4) << sw.dump(2);
  EXPECT_EQ(sw["rendered"]["differ"], true);
  EXPECT_EQ(sw["rendered"]["off_tail"], "<think>\n\n</think>\n\n") << sw.dump(2);
  EXPECT_EQ(sw["template_names_switch"], true);
  EXPECT_EQ(res["arms"]["on"]["n"], 2);
  EXPECT_EQ(res["arms"]["off"]["n"], 2);
}

TEST_F(ThinkingReal, ChatmlTemplateHasNoSwitch) {
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 16384, .metrics = false});
  const nlohmann::json sw = RunThinking(s->base_url(), "chatml")["switch"];
  EXPECT_EQ(sw["verdict"], "no_switch") << sw.dump(2);
  EXPECT_EQ(sw["text"], "the template has no thinking switch");
  EXPECT_EQ(sw["chat_prompt_tokens"]["off"], sw["chat_prompt_tokens"]["on"]);
  EXPECT_EQ(sw["rendered"]["differ"], false);
}

TEST_F(ThinkingReal, GatewayThatStripsTheKwargsDropsTheSwitch) {
  LlamaServer* s = StartQwen3();
  CountingProxy proxy(s->origin());
  proxy.StripChatTemplateKwargs();
  ASSERT_TRUE(proxy.Start());
  const nlohmann::json sw = RunThinking(proxy.base_url(), "dropped")["switch"];
  proxy.Stop();
  EXPECT_EQ(sw["verdict"], "dropped") << sw.dump(2);
  EXPECT_EQ(sw["text"], "the switch is dropped on the way");
  EXPECT_EQ(sw["chat_prompt_tokens"]["off"], sw["chat_prompt_tokens"]["on"]);
  EXPECT_GT(proxy.Count("POST /v1/chat/completions"), 4);
}

}  // namespace
}  // namespace evalrun::testing
