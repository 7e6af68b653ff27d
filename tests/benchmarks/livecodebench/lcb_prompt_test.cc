// scorers/livecodebench/lcb_prompt.h against the official prompt and extraction:
// tests/fixtures/livecodebench/official_prompts.json holds what
// format_prompt_generation(problem, LMStyle.OpenAIChat) and
// extract_code(text, LMStyle.OpenAIChat) return (README.md there says how it
// was made).
#include "scorers/livecodebench/lcb_prompt.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/jsonl_file.h"
#include "tests/support/run_binary.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun {
namespace {

const std::string kDir = testing::LcbFixtureDir();

TEST(LcbPromptTest, BothFormsAsTheOfficial) {
  nlohmann::json official = nlohmann::json::parse(testing::ReadFile(kDir + "official_prompts.json"));
  const std::vector<nlohmann::json> rows = testing::ReadJsonLines(kDir + "test.jsonl");
  ASSERT_GE(rows.size(), 3u);
  for (int index : {0, 2}) {  // abc900_a (stdin form), 3900 (LeetCode form)
    const nlohmann::json& row = rows[index];
    const nlohmann::json& msgs = official[row.at("question_id").get<std::string>()];
    ASSERT_EQ(msgs.size(), 2u);
    EXPECT_EQ(msgs[0]["role"], "system");
    EXPECT_EQ(msgs[0]["content"].get<std::string>(), LcbSystemMessage());
    EXPECT_EQ(msgs[1]["content"].get<std::string>(),
              LcbUserPrompt(row.at("question_content").get<std::string>(), row.at("starter_code").get<std::string>()));
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
