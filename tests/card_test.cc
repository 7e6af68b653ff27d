#include "evals/card.h"

#include <gtest/gtest.h>

#include "tests/support/run_binary.h"

namespace evalrun {
namespace {

const char* kGood = R"({
  "name": "t", "model": {"name": "m"}, "engine": {}, "hardware": {"gpu_index": 1},
  "server": {"base_url": "http://127.0.0.1:8080/v1/", "slots": "auto", "api_key_env": "TOK"},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 7},
  "thinking": true,
  "parts": {"mmlupro": {"questions": 400, "max_tokens": 1024, "prompt": "cot-5shot", "extract": "official"},
            "ruler": {"lengths": [8192], "samples_per_task": {"vt": 5}}}
})";

std::string Err(const std::string& text) {
  Card c;
  Status st = ParseCard(text, "cards/x.json", &c);
  EXPECT_FALSE(st.ok());
  return st.message();
}

TEST(CardTest, ParsesEveryField) {
  Card c;
  ASSERT_TRUE(ParseCard(kGood, "cards/x.json", &c).ok());
  EXPECT_EQ(c.name, "t");
  EXPECT_EQ(c.server.base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(c.server.Origin(), "http://127.0.0.1:8080");
  EXPECT_EQ(c.server.PathPrefix(), "/v1");
  EXPECT_EQ(c.server.slots, 0);
  EXPECT_EQ(c.server.api_key_env, "TOK");
  EXPECT_EQ(c.sampling.seed, 7);
  EXPECT_TRUE(c.thinking);
  EXPECT_EQ(*c.hardware.gpu_index, 1);
  const PartConfig* p = c.FindPart("mmlupro");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->questions, 400);
  EXPECT_EQ(p->max_tokens, 1024);
  EXPECT_EQ(p->prompt, "cot-5shot");
  EXPECT_EQ(p->extract, "official");
  EXPECT_EQ(c.FindPart("ruler")->task_samples.at("vt"), 5);
  EXPECT_EQ(c.sha256.size(), 64u);
}

TEST(CardTest, WrongTypeNamesFileAndPath) {
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"mmlupro": {"max_tokens": "1k"}}})"),
            "cards/x.json: parts.mmlupro.max_tokens: expected an integer, got \"1k\"");
}

TEST(CardTest, UnknownFieldWithNearMiss) {
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"mmlupro": {"max_token": 5}}})"),
            "cards/x.json: parts.mmlupro.max_token: unknown field (did you mean \"max_tokens\"?)");
  EXPECT_EQ(Err(R"({"name": "t", "sever": {}, "server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: sever: unknown field (did you mean \"server\"?)");
}

TEST(CardTest, UnknownPartWithNearMiss) {
  std::string m = Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"mmlu-pro": {}}})");
  EXPECT_NE(m.find("parts.mmlu-pro: unknown part (did you mean \"mmlupro\"?)"), std::string::npos) << m;
}

TEST(CardTest, MissingRequiredFields) {
  EXPECT_EQ(Err(R"({"server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: name: required field is missing");
  EXPECT_EQ(Err(R"({"name": "t", "parts": {"gpqa": {}}})"), "cards/x.json: server: required field is missing");
  EXPECT_EQ(Err(R"({"name": "t", "server": {}, "parts": {"gpqa": {}}})"),
            "cards/x.json: server.base_url: required field is missing");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}})"),
            "cards/x.json: parts: required field is missing");
}

TEST(CardTest, BadValues) {
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "h:80"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: server.base_url: expected an http:// or https:// URL, got \"h:80\"");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1", "slots": 0}, "parts": {"gpqa": {}}})"),
            "cards/x.json: server.slots: expected a positive integer or \"auto\", got 0");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {"extract": "firstletter"}}})"),
            "cards/x.json: parts.gpqa.extract: unknown value \"firstletter\" (did you mean \"first-letter\"?); "
            "expected one of \"first-letter\", \"simple-evals\"");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "thinking": "no", "parts": {"gpqa": {}}})"),
            "cards/x.json: thinking: expected true or false, got \"no\"");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"ruler": {"lengths": [8192, "32k"]}}})"),
            "cards/x.json: parts.ruler.lengths[1]: expected an integer, got \"32k\"");
}

TEST(CardTest, MalformedJsonGivesLineAndColumn) {
  std::string m = Err("{\n  \"name\": \"t\",\n  \"server\": {\"base_url\": \"http://h/v1\",}\n}");
  EXPECT_EQ(m.rfind("cards/x.json:3:", 0), 0u) << m;
  EXPECT_NE(m.find("malformed JSON"), std::string::npos) << m;
}

TEST(CardTest, ExampleCardsParse) {
  for (const char* name : {"local.json", "clover-q4_0.json"}) {
    Card c;
    Status st = LoadCard(std::string(EVALRUN_SOURCE_DIR) + "/cards/" + name, &c);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  Card c;
  ASSERT_TRUE(LoadCard(std::string(EVALRUN_SOURCE_DIR) + "/cards/clover-q4_0.json", &c).ok());
  EXPECT_EQ(c.server.slots, 4);
  int ruler = 0;
  for (const auto& [t, n] : c.FindPart("ruler")->task_samples) ruler += n;
  EXPECT_EQ(ruler, 40) << "the published card runs 40 RULER samples per length";
  EXPECT_EQ(c.FindPart("mmlupro")->questions, 400);
  EXPECT_EQ(c.FindPart("gpqa")->questions, 198);
  EXPECT_EQ(c.FindPart("ifeval")->questions, 200);
  EXPECT_EQ(c.FindPart("ifeval")->max_tokens, 4096);
}

}  // namespace
}  // namespace evalrun
