// Streamed chat completions (evals/server/stream.h) against a real
// llama-server with Qwen3's tokenizer and template (tiny-qwen3-vocab.gguf,
// --jinja): usage, timings and the prompt count agree with the server's own
// /apply-template + /tokenize.
#include <nlohmann/json.hpp>

#include "evals/server/http.h"
#include "evals/server/stream.h"
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

using nlohmann::json;

class StreamReal : public RealLaneTest {};

TEST_F(StreamReal, IgnoreEosGivesExactlyMaxTokensWithTimingsAndTheCountedPrompt) {
  LlamaServer* s = StartServer({.model = "tiny-qwen3-vocab.gguf", .parallel = 2, .ctx = 4096, .metrics = false,
                                .extra = {"--jinja"}, .chat_template = ""});
  ASSERT_TRUE(s->running());
  Prompt p;
  p.messages = {{"user", "salt 7f3a: Write a long story about a lighthouse keeper and a storm."}};
  p.params.max_tokens = 64;
  p.params.temperature = 0.0;
  p.params.cache_prompt = false;
  p.params.enable_thinking = false;

  // The server's own count: the template, then its tokenizer with the
  // special tokens.
  auto t = MakeHttpTransport(s->origin(), "");
  const json messages = json::array({{{"role", "user"}, {"content", p.messages[0].content}}});
  HttpResponse tpl = t->Post("/apply-template",
                             json({{"messages", messages}, {"chat_template_kwargs", {{"enable_thinking", false}}}}).dump(),
                             30);
  ASSERT_EQ(tpl.status, 200) << tpl.body;
  const std::string prompt_text = json::parse(tpl.body)["prompt"].get<std::string>();
  HttpResponse tok = t->Post(
      "/tokenize", json({{"content", prompt_text}, {"add_special", true}, {"parse_special", true}}).dump(), 30);
  ASSERT_EQ(tok.status, 200) << tok.body;
  const int counted = static_cast<int>(json::parse(tok.body)["tokens"].size());

  ServerConfig cfg;
  cfg.base_url = s->base_url();
  StreamingChat chat(MakeHttpTransport(s->origin(), ""), cfg);
  const json extra = {{"ignore_eos", true}};
  StreamedReply r = chat.Send(p, &extra, 120, nullptr);
  ASSERT_EQ(r.status, CallStatus::kOk) << r.error;
  EXPECT_TRUE(r.saw_done);
  const Completion& c = r.completion;
  EXPECT_EQ(c.completion_tokens, 64);
  EXPECT_EQ(c.finish_reason, "length");
  EXPECT_EQ(c.prompt_tokens, counted) << prompt_text;
  ASSERT_TRUE(c.timings.present);
  EXPECT_EQ(c.timings.predicted_n, 64);
  EXPECT_EQ(c.timings.prompt_n + c.timings.cache_n, counted);
  EXPECT_EQ(c.timings.cache_n, 0);  // cache_prompt: false
  EXPECT_GT(c.timings.prompt_ms, 0);
  EXPECT_GT(c.timings.predicted_ms, 0);
  EXPECT_GT(r.timing.first_byte_s, 0);
  EXPECT_LE(r.timing.first_byte_s, r.timing.first_token_s);
  EXPECT_LT(r.timing.first_token_s, r.timing.last_token_s);
  EXPECT_LE(r.timing.last_token_s, r.timing.done_s);
  EXPECT_GE(r.timing.text_chunk_s.size(), 2u);
  EXPECT_LE(r.timing.text_chunk_s.size(), 64u);  // a chunk holds one token or more
  EXPECT_FALSE(c.reply_id.empty());
}

}  // namespace
}  // namespace evalrun::testing
