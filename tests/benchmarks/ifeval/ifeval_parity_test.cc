// Verdict-for-verdict parity of our IFEval checkers (scorers/ifeval/ifeval_eval.h)
// with Google's official checker (google-research instruction_following_eval)
// on real responses.
//
// Fixtures (tests/fixtures/ifeval/, provenance and the reference run in its
// README.md):
//  - gpt4_responses.jsonl: the official GPT-4 responses shipped upstream
//    (data/input_response_data_gpt4_20231107_145030.jsonl, byte for byte),
//    {"prompt", "response"}, 541 rows;
//  - adversarial_rows.jsonl: 71 hand-written rows {"key", "prompt",
//    "instruction_id_list", "kwargs", "response"} aimed at the corners
//    (short all-caps text, German/Russian/Hindi, JSON with NaN / fences,
//    *** paragraphs, P.P.S, loose-only passes, empty responses, ...);
//  - official_verdicts.jsonl: {"key", "instruction_id_list", "strict",
//    "loose"} per prompt, produced by running the official Python checker.
//
// The GPT-4 responses are joined to ../shared/datasets/ifeval/input_data.jsonl
// by exact prompt text, as evaluation_lib.py does. Every prompt and every
// instruction must match, strict and loose; the test prints the counts and the
// scoring time (no timing assertion).
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scorers/ifeval/ifeval_eval.h"
#include "scorers/ifeval/langdetect.h"
#include "scorers/punkt.h"
#include "tests/support/jsonl_file.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

std::string FixtureDir() { return testing::FixturePath("ifeval"); }

struct OfficialVerdict {
  std::vector<std::string> ids;
  std::vector<bool> strict;
  std::vector<bool> loose;
};

std::map<int64_t, OfficialVerdict> ReadOfficialVerdicts() {
  std::map<int64_t, OfficialVerdict> out;
  for (const nlohmann::json& j : testing::ReadJsonLines(FixtureDir() + "/official_verdicts.jsonl")) {
    OfficialVerdict v;
    v.ids = j.at("instruction_id_list").get<std::vector<std::string>>();
    v.strict = j.at("strict").get<std::vector<bool>>();
    v.loose = j.at("loose").get<std::vector<bool>>();
    const int64_t key = j.at("key").get<int64_t>();
    EXPECT_TRUE(out.emplace(key, std::move(v)).second) << "duplicate key " << key;
  }
  return out;
}

class Resources {
 public:
  Resources() {
    status_ = PunktModel::Load(testing::DatasetsDir() + "/punkt-english", &punkt_);
    if (status_.ok()) status_ = LangDetector::Load(testing::DatasetsDir() + "/langdetect", &lang_);
    res_.punkt = punkt_.get();
    res_.lang = lang_.get();
  }
  const Status& status() const { return status_; }
  const IfevalResources& get() const { return res_; }

 private:
  Status status_;
  std::unique_ptr<PunktModel> punkt_;
  std::unique_ptr<LangDetector> lang_;
  IfevalResources res_;
};

struct Scored {
  IfevalPromptSpec spec;
  std::string response;
};

struct ParityTotals {
  int prompts = 0;
  int instructions = 0;
  int verdicts = 0;
  int mismatches = 0;
  double seconds = 0;  // strict + loose scoring only
  IfevalAccuracy strict_acc, loose_acc;
};

// Scores every row strict and loose and compares with the official verdicts;
// each mismatch is reported with its key, instruction, kwargs and response.
ParityTotals CheckParity(const IfevalResources& res, const std::vector<Scored>& rows,
                         const std::map<int64_t, OfficialVerdict>& official) {
  ParityTotals t;
  std::vector<std::unique_ptr<const IfevalPrompt>> compiled;
  for (const Scored& row : rows) {
    std::unique_ptr<const IfevalPrompt> p;
    const Status st = IfevalPrompt::Compile(row.spec, &p);
    EXPECT_TRUE(st.ok()) << st.ToString();
    compiled.push_back(std::move(p));
  }
  std::vector<IfevalVerdict> strict(rows.size()), loose(rows.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!compiled[i]) continue;
    strict[i] = compiled[i]->EvaluateStrict(res, rows[i].response);
    loose[i] = compiled[i]->EvaluateLoose(res, rows[i].response);
  }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  for (size_t i = 0; i < rows.size(); ++i) {
    const Scored& row = rows[i];
    if (!compiled[i]) continue;
    auto it = official.find(row.spec.key);
    if (it == official.end()) {
      ADD_FAILURE() << "no official verdict for key " << row.spec.key;
      continue;
    }
    const OfficialVerdict& want = it->second;
    EXPECT_EQ(want.ids, row.spec.instruction_ids) << "key " << row.spec.key;
    if (want.ids != row.spec.instruction_ids) continue;
    ++t.prompts;
    t.instructions += static_cast<int>(want.ids.size());
    t.strict_acc.Add(row.spec.instruction_ids, strict[i]);
    t.loose_acc.Add(row.spec.instruction_ids, loose[i]);
    auto compare = [&](const char* mode, const std::vector<bool>& got,
                       const std::vector<bool>& expected) {
      EXPECT_EQ(got.size(), expected.size()) << "key " << row.spec.key << " " << mode;
      for (size_t k = 0; k < got.size() && k < expected.size(); ++k) {
        ++t.verdicts;
        if (got[k] == expected[k]) continue;
        ++t.mismatches;
        ADD_FAILURE() << "key " << row.spec.key << " " << mode << " instruction " << k << " "
                      << want.ids[k] << " kwargs " << row.spec.kwargs[k].dump() << ": ours "
                      << got[k] << ", official " << expected[k] << "\nresponse: "
                      << nlohmann::json(row.response).dump();
      }
    };
    compare("strict", strict[i].follow_list, want.strict);
    compare("loose", loose[i].follow_list, want.loose);
  }
  return t;
}

void Report(const char* what, const ParityTotals& t) {
  std::cout << "[ifeval parity] " << what << ": " << t.prompts << " prompts, " << t.instructions
            << " instructions, " << t.verdicts << " verdicts (strict+loose), " << t.mismatches
            << " mismatches; scoring strict+loose took " << t.seconds * 1000.0 << " ms\n"
            << "[ifeval parity] " << what << ": prompt-level strict "
            << t.strict_acc.prompt_correct << "/" << t.strict_acc.prompt_total << ", loose "
            << t.loose_acc.prompt_correct << "/" << t.loose_acc.prompt_total
            << "; instruction-level strict " << t.strict_acc.instruction_correct << "/"
            << t.strict_acc.instruction_total << ", loose " << t.loose_acc.instruction_correct
            << "/" << t.loose_acc.instruction_total << "\n";
}

TEST(IfevalParity, OfficialGpt4ResponsesMatchEveryVerdict) {
  Resources res;
  ASSERT_TRUE(res.status().ok()) << res.status().ToString();
  const std::map<int64_t, OfficialVerdict> official = ReadOfficialVerdicts();

  // evaluation_lib.read_prompt_to_response_dict: prompt -> response.
  std::map<std::string, std::string> responses;
  const std::vector<nlohmann::json> resp_rows = testing::ReadJsonLines(FixtureDir() + "/gpt4_responses.jsonl");
  ASSERT_EQ(resp_rows.size(), 541u);
  for (const nlohmann::json& j : resp_rows) {
    responses[j.at("prompt").get<std::string>()] = j.at("response").get<std::string>();
  }
  ASSERT_EQ(responses.size(), 541u);

  const std::string input = testing::DatasetsDir() + "/ifeval/input_data.jsonl";
  const std::vector<nlohmann::json> input_rows = testing::ReadJsonLines(input);
  ASSERT_EQ(input_rows.size(), 541u) << input;
  std::vector<Scored> rows;
  for (size_t i = 0; i < input_rows.size(); ++i) {
    Scored s;
    const Status st = ParseIfevalPromptSpec(input_rows[i], input + ":" + std::to_string(i + 1), &s.spec);
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto it = responses.find(s.spec.prompt);
    ASSERT_NE(it, responses.end()) << "no GPT-4 response for prompt of key " << s.spec.key;
    s.response = it->second;
    rows.push_back(std::move(s));
  }

  const ParityTotals t = CheckParity(res.get(), rows, official);
  Report("official GPT-4 responses", t);
  EXPECT_EQ(t.prompts, 541);
  EXPECT_EQ(t.instructions, 834);
  EXPECT_EQ(t.verdicts, 2 * 834);
  EXPECT_EQ(t.mismatches, 0);
  // The official report's numbers for these verdicts (print_report).
  EXPECT_EQ(t.strict_acc.prompt_correct, 417);
  EXPECT_EQ(t.loose_acc.prompt_correct, 431);
  EXPECT_EQ(t.strict_acc.instruction_correct, 698);
  EXPECT_EQ(t.loose_acc.instruction_correct, 714);
}

TEST(IfevalParity, AdversarialRowsMatchEveryVerdict) {
  Resources res;
  ASSERT_TRUE(res.status().ok()) << res.status().ToString();
  const std::map<int64_t, OfficialVerdict> official = ReadOfficialVerdicts();

  const std::string path = FixtureDir() + "/adversarial_rows.jsonl";
  const std::vector<nlohmann::json> adv = testing::ReadJsonLines(path);
  ASSERT_EQ(adv.size(), 71u);
  std::vector<Scored> rows;
  for (size_t i = 0; i < adv.size(); ++i) {
    Scored s;
    const Status st = ParseIfevalPromptSpec(adv[i], path + ":" + std::to_string(i + 1), &s.spec);
    ASSERT_TRUE(st.ok()) << st.ToString();
    s.response = adv[i].at("response").get<std::string>();
    rows.push_back(std::move(s));
  }

  const ParityTotals t = CheckParity(res.get(), rows, official);
  Report("adversarial rows", t);
  EXPECT_EQ(t.prompts, 71);
  EXPECT_EQ(t.instructions, 76);
  EXPECT_EQ(t.mismatches, 0);
  EXPECT_EQ(t.strict_acc.prompt_correct, 34);
  EXPECT_EQ(t.loose_acc.prompt_correct, 44);
  EXPECT_EQ(t.strict_acc.instruction_correct, 36);
  EXPECT_EQ(t.loose_acc.instruction_correct, 47);
}

TEST(IfevalParity, VerdictFixtureCoversExactlyTheScoredKeys) {
  const std::map<int64_t, OfficialVerdict> official = ReadOfficialVerdicts();
  ASSERT_EQ(official.size(), 541u + 71u);
  int dataset = 0, adversarial = 0;
  for (const auto& [key, v] : official) {
    (key >= 900001 ? adversarial : dataset)++;
    EXPECT_EQ(v.strict.size(), v.ids.size()) << key;
    EXPECT_EQ(v.loose.size(), v.ids.size()) << key;
    // Loose never fails what strict passes: the unchanged response is its
    // first variant.
    for (size_t k = 0; k < v.ids.size() && k < v.strict.size() && k < v.loose.size(); ++k) {
      EXPECT_TRUE(!v.strict[k] || v.loose[k]) << key << " " << v.ids[k];
    }
  }
  EXPECT_EQ(dataset, 541);
  EXPECT_EQ(adversarial, 71);
}

}  // namespace
}  // namespace evalrun
