// scorers/livecodebench/lcb_prompt.h against the official prompt and extraction:
// tests/fixtures/livecodebench/official_prompts.json holds what
// format_prompt_generation(problem, LMStyle.OpenAIChat) and
// extract_code(text, LMStyle.OpenAIChat) return (README.md there says how it
// was made).
#include "scorers/livecodebench/lcb_prompt.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_binary.h"

namespace evalrun {
namespace {

const std::string kDir = std::string(EVALRUN_SOURCE_DIR) + "/tests/fixtures/livecodebench/";

nlohmann::json Row(const std::string& file, int index) {
  std::string text = testing::ReadFile(kDir + file);
  size_t pos = 0;
  for (int i = 0; i < index; ++i) pos = text.find('\n', pos) + 1;
  return nlohmann::json::parse(text.substr(pos, text.find('\n', pos) - pos));
}

TEST(LcbPromptTest, BothFormsAsTheOfficial) {
  nlohmann::json official = nlohmann::json::parse(testing::ReadFile(kDir + "official_prompts.json"));
  for (int index : {0, 2}) {  // abc900_a (stdin form), 3900 (LeetCode form)
    nlohmann::json row = Row("test.jsonl", index);
    const nlohmann::json& msgs = official[row["question_id"].get<std::string>()];
    ASSERT_EQ(msgs.size(), 2u);
    EXPECT_EQ(msgs[0]["role"], "system");
    EXPECT_EQ(msgs[0]["content"].get<std::string>(), LcbSystemMessage());
    EXPECT_EQ(msgs[1]["content"].get<std::string>(),
              LcbUserPrompt(row["question_content"].get<std::string>(), row["starter_code"].get<std::string>()));
  }
}

TEST(LcbPromptTest, ExtractionAsTheOfficial) {
  nlohmann::json official = nlohmann::json::parse(testing::ReadFile(kDir + "official_prompts.json"));
  ASSERT_GE(official["extract"].size(), 7u);
  for (const auto& c : official["extract"])
    EXPECT_EQ(ExtractLcbCode(c[0].get<std::string>()), c[1].get<std::string>()) << c[0];
}

}  // namespace
}  // namespace evalrun
