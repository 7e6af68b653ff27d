// The ruler part's Prepare: the profile key, and tasks that NVIDIA's script
// cannot prepare at a length skipped (with a note and info.skipped) while the
// others run.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "evals/run/card.h"
#include "evals/run/part.h"
#include "evals/run/part_registry.h"
#include "tests/support/counting_tokenizer.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

// One token per 3 bytes (+9 for the chat template): 500 essay words, the
// smallest essay haystack NVIDIA's niah.py draws, are then ~1,000 tokens.
int Thirds(std::string_view t) { return static_cast<int>(t.size() / 3); }
class ThirdsTokenizer : public testing::CountingTokenizer {
 public:
  ThirdsTokenizer() : CountingTokenizer(Thirds, [](std::string_view c) { return Thirds(c) + 9; }) {}
};

struct Prepared {
  Status status;
  PreparedPart part;
};

Prepared PrepareRuler(const std::string& ruler_json) {
  const std::string text = R"({"name": "t", "server": {"base_url": "http://127.0.0.1:1/v1"},
      "parts": {"ruler": )" + ruler_json + "}}";
  Card card;
  Prepared out;
  out.status = ParseCard(text, "cards/t.json", &card);
  if (!out.status.ok()) return out;
  ThirdsTokenizer tok;
  PartContext ctx;
  ctx.card = &card;
  ctx.settings = &card.FindPart("ruler")->settings;
  ctx.data_dir = testing::DatasetsDir();
  ctx.tokenizer = &tok;
  out.status = FindPartDefinition("ruler")->make_part()->Prepare(ctx, &out.part);
  return out;
}

TEST(RulerPart, SkipsWhatNvidiasScriptCannotPrepareAndRunsTheRest) {
  const Prepared p = PrepareRuler(
      R"({"lengths": [1024], "tasks": ["niah_single_1", "niah_single_2"], "samples_per_task": 2})");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  ASSERT_EQ(p.part.items.size(), 2u);
  for (const Item& it : p.part.items) EXPECT_EQ(it.category, "niah_single_1");
  EXPECT_EQ(p.part.info["profile"], "nvidia");
  const nlohmann::json& skipped = p.part.info["skipped"];
  ASSERT_EQ(skipped.size(), 1u) << skipped.dump();
  EXPECT_EQ(skipped[0]["task"], "niah_single_2");
  EXPECT_EQ(skipped[0]["length"], 1024);
  const std::string reason = skipped[0]["reason"];
  EXPECT_NE(reason.find("niah_single_2 at 1024: NVIDIA's niah.py never finishes here"), std::string::npos)
      << reason;
  EXPECT_NE(reason.find("(500 words, sample 0)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("> 1024"), std::string::npos) << reason;
  bool noted = false;
  for (const std::string& n : p.part.notes) noted |= n.rfind("task niah_single_2 at 1024 skipped: ", 0) == 0;
  EXPECT_TRUE(noted);
}

TEST(RulerPart, FailsBeforeAnyRequestOnlyWhenNoTaskFitsAnywhere) {
  const Prepared p = PrepareRuler(R"({"lengths": [1024], "tasks": ["niah_single_2", "niah_multikey_1"]})");
  EXPECT_EQ(p.status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(p.status.message().find("no task can run at any length"), std::string::npos) << p.status.message();
  EXPECT_NE(p.status.message().find("niah_multikey_1 at 1024"), std::string::npos) << p.status.message();
}

TEST(RulerPart, FitProfileFitsEverySample) {
  const Prepared p = PrepareRuler(
      R"({"profile": "fit", "lengths": [1024], "tasks": ["niah_single_2"], "samples_per_task": 2})");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(p.part.items.size(), 2u);
  EXPECT_EQ(p.part.info["profile"], "fit");
  EXPECT_TRUE(p.part.info["skipped"].empty());
}

TEST(RulerPart, UnknownProfileIsACardError) {
  const Prepared p = PrepareRuler(R"({"profile": "nvida"})");
  EXPECT_EQ(p.status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(p.status.message().find("parts.ruler.profile"), std::string::npos) << p.status.message();
  EXPECT_NE(p.status.message().find("did you mean \"nvidia\""), std::string::npos) << p.status.message();
}

}  // namespace
}  // namespace evalrun
