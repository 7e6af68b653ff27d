// Parity of our MMLU-Pro `official` extraction with TIGER-AI-Lab's own
// predictions on their published model outputs.
//
// Fixture: tests/fixtures/mmlu-pro/official_preds.jsonl (316 real records
// copied from TIGER-AI-Lab/MMLU-Pro eval_results/, see the README beside it).
// Each record carries the `pred` the producing script stored; the extractor
// that matches that script must return exactly `pred` (JSON null <-> 0).
//
// Which script produced which directory (read from the repository):
//   eval_results/gpt4o/, eval_results/deepseek/  (commit ff991b5b / eeeb46ca)
//       run_gpt4o.py / run_deepseek.py extract_answer: only
//       re.search(r"answer is \(?([ABCDEFGHIJ])\)?", text) on the raw
//       response, no '**' clean-up, no fallback (None when it fails).
//   eval_results/merged/  (commit 4885ba7d, Gemini 3.1 Pro)
//       evaluate_gemini_3-1_pro.py: response.replace("**", "") before storing,
//       then answer is -> [aA]nswer:\s*([A-J]) -> last standalone [A-J].
//   eval_results/business_result.json  (commit 8f97a487)
//       evaluate_from_api.py of that commit: no clean-up, answer is ->
//       .*[aA]nswer: -> last [A-J] character ([A-J](?=[^A-J]*$)).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "scorers/choice_extract.h"
#include "scorers/mmlupro/mmlupro_extract.h"
#include "tests/support/jsonl_file.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

struct Record {
  std::string source;  // "eval_results/gpt4o", ...
  std::string category;
  long long question_id = 0;
  char pred = 0;  // 0 for JSON null
  std::string response;
};

std::string PredsPath() { return testing::FixturePath("mmlu-pro/official_preds.jsonl"); }

// Loads the fixture once. On failure returns an empty vector and sets *error.
const std::vector<Record>& Records(std::string* error) {
  static std::string load_error;
  static const std::vector<Record> records = [] {
    std::vector<Record> out;
    const testing::JsonLines file = testing::LoadJsonLines(PredsPath());
    if (!file.error.empty()) {
      load_error = file.error + " (the fixture is part of the source tree)";
      return out;
    }
    for (const testing::JsonLine& line : file.lines) {
      const std::string where = PredsPath() + ":" + std::to_string(line.number);
      try {
        const nlohmann::json& j = line.value;
        Record r;
        r.source = j.at("source").get<std::string>();
        r.category = j.at("category").get<std::string>();
        r.question_id = j.at("question_id").get<long long>();
        r.response = j.at("response").get<std::string>();
        const nlohmann::json& p = j.at("pred");
        if (!p.is_null()) {
          const std::string s = p.get<std::string>();
          if (s.size() != 1 || s[0] < 'A' || s[0] > 'J') {
            load_error = where + ": pred: expected null or one letter A-J";
            return std::vector<Record>();
          }
          r.pred = s[0];
        }
        out.push_back(std::move(r));
      } catch (const nlohmann::json::exception& e) {
        load_error = where + ": " + e.what();
        return std::vector<Record>();
      }
    }
    return out;
  }();
  *error = load_error;
  return records;
}

std::string Show(char c) { return c == 0 ? std::string("null") : std::string(1, c); }

// Runs `extract` over every record of `source`; every one must give `pred`.
template <typename Extract>
void ExpectParity(const std::string& source, Extract extract, int expected_min_records) {
  std::string error;
  const std::vector<Record>& records = Records(&error);
  ASSERT_TRUE(error.empty()) << error;
  int checked = 0;
  int mismatched = 0;
  std::ostringstream report;
  for (const Record& r : records) {
    if (r.source != source) continue;
    ++checked;
    const char got = extract(r.response);
    if (got != r.pred) {
      ++mismatched;
      report << "  " << r.source << " " << r.category << " question_id " << r.question_id
             << ": published pred " << Show(r.pred) << ", ours " << Show(got) << "\n";
    }
  }
  EXPECT_GE(checked, expected_min_records) << source << ": too few fixture records";
  EXPECT_EQ(mismatched, 0) << mismatched << " of " << checked << " records of " << source
                           << " differ:\n"
                           << report.str();
}

TEST(MmluProOfficialParityTest, FixtureCoversAllSources) {
  std::string error;
  const std::vector<Record>& records = Records(&error);
  ASSERT_TRUE(error.empty()) << error;
  std::map<std::string, int> per_source;
  for (const Record& r : records) ++per_source[r.source];
  EXPECT_EQ(records.size(), 316u);
  EXPECT_EQ(per_source["eval_results/gpt4o"], 70);
  EXPECT_EQ(per_source["eval_results/deepseek"], 119);
  EXPECT_EQ(per_source["eval_results/merged"], 124);
  EXPECT_EQ(per_source["eval_results"], 3);
}

// evaluate_gemini_3-1_pro.py: clean-up + chain. Its step 2 has no leading
// `.*` (first "answer:" instead of the last on the first matching line);
// no record of the sample reaches step 2, so the newest
// evaluate_from_api.py chain reproduces every stored pred.
TEST(MmluProOfficialParityTest, MergedGeminiMatchesOfficial) {
  ExpectParity(
      "eval_results/merged", [](const std::string& s) { return ExtractOfficialMmluPro(s); }, 124);
}

// evaluate_from_api.py at 8f97a487 (no clean-up). Its step 3 is the last
// [A-J] character, not the last standalone one; all 3 records stop at step 1.
TEST(MmluProOfficialParityTest, TopLevelBusinessMatchesOfficialNoCleanup) {
  ExpectParity(
      "eval_results", [](const std::string& s) { return ExtractOfficialMmluProNoCleanup(s); }, 3);
}

// run_gpt4o.py / run_deepseek.py stop after step 1 ("answer is"), with no
// clean-up and no fallback: ExtractMmluProAnswerIsOnly. Their records whose
// published pred is null (e.g. gpt4o biology 2807 "The answer is **A**.")
// are exactly the ones where a fallback would have found a letter.
TEST(MmluProOfficialParityTest, RunGpt4oMatchesItsExtraction) {
  ExpectParity(
      "eval_results/gpt4o", [](const std::string& s) { return ExtractMmluProAnswerIsOnly(s); },
      70);
}

TEST(MmluProOfficialParityTest, RunDeepseekMatchesItsExtraction) {
  ExpectParity(
      "eval_results/deepseek",
      [](const std::string& s) { return ExtractMmluProAnswerIsOnly(s); }, 119);
}

// What already holds for run_gpt4o.py / run_deepseek.py: wherever their
// step 1 succeeded (pred not null), our step 1 gives the same letter, with
// and without the clean-up.
TEST(MmluProOfficialParityTest, RunGpt4oAndDeepseekStepOneAgreesWherePredIsSet) {
  std::string error;
  const std::vector<Record>& records = Records(&error);
  ASSERT_TRUE(error.empty()) << error;
  int checked = 0;
  for (const Record& r : records) {
    if (r.source != "eval_results/gpt4o" && r.source != "eval_results/deepseek") continue;
    if (r.pred == 0) continue;
    ++checked;
    EXPECT_EQ(ExtractMmluProAnswerIsOnly(r.response), r.pred)
        << r.source << " " << r.question_id;
    EXPECT_EQ(ExtractOfficialMmluPro(r.response), r.pred) << r.source << " " << r.question_id;
  }
  EXPECT_EQ(checked, 175);
}

}  // namespace
}  // namespace evalrun
