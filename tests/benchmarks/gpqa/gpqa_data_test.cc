// GPQA data layer tests. The GPQA authors ask that questions never appear in
// plain text online: nothing here holds or prints question text. Assertions
// on the real data use counts, record ids and SHA-256 digests computed at run
// time; the prompt tests use a made-up question.
#include "evals/benchmarks/gpqa/gpqa_data.h"

#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "evals/base/sha256.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

std::string GpqaZip() { return testing::DatasetsDir() + "/gpqa/dataset.zip"; }

bool IsPermutation(const std::array<int, 4>& order) {
  std::array<int, 4> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  return sorted == std::array<int, 4>{0, 1, 2, 3};
}

// Loads GPQA Diamond once for the whole suite.
class GpqaDiamondTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    questions_ = new std::vector<GpqaQuestion>();
    load_status_ =
        new Status(LoadGpqa(GpqaZip(), kGpqaDiamondMember, GpqaZipPassword(), questions_));
  }
  static void TearDownTestSuite() {
    delete questions_;
    delete load_status_;
  }
  void SetUp() override { ASSERT_TRUE(load_status_->ok()) << load_status_->ToString(); }

  static std::vector<GpqaQuestion>* questions_;
  static Status* load_status_;
};
std::vector<GpqaQuestion>* GpqaDiamondTest::questions_ = nullptr;
Status* GpqaDiamondTest::load_status_ = nullptr;

TEST_F(GpqaDiamondTest, CountsIdsAndDomains) {
  const std::vector<GpqaQuestion>& qs = *questions_;
  ASSERT_EQ(qs.size(), 198u);
  std::set<std::string> ids;
  std::map<std::string, int> domains;
  std::set<std::string> subdomains;
  int ambiguous = 0;
  for (const GpqaQuestion& q : qs) {
    ids.insert(q.record_id);
    ++domains[q.domain];
    subdomains.insert(q.subdomain);
    EXPECT_EQ(q.record_id.size(), 17u);
    EXPECT_EQ(q.record_id.compare(0, 3, "rec"), 0);
    EXPECT_FALSE(q.question.empty());
    EXPECT_FALSE(q.subdomain.empty());
    for (const std::string& wrong : q.incorrect) {
      EXPECT_FALSE(wrong.empty());
      if (wrong == q.correct) ++ambiguous;
    }
  }
  EXPECT_EQ(ids.size(), 198u);
  EXPECT_EQ(domains,
            (std::map<std::string, int>{{"Biology", 19}, {"Chemistry", 93}, {"Physics", 86}}));
  EXPECT_EQ(subdomains.size(), 13u);
  EXPECT_EQ(ambiguous, 0);  // the correct answer never repeats as a distractor
}

TEST_F(GpqaDiamondTest, FieldsMatchPythonCsvDigest) {
  // SHA-256 of the eight fields of every record (joined by U+001F, records by
  // U+001E, file order) as Python's csv module reads the same member.
  std::string joined;
  for (size_t i = 0; i < questions_->size(); ++i) {
    const GpqaQuestion& q = (*questions_)[i];
    if (i > 0) joined += '\x1e';
    for (const std::string* field : {&q.record_id, &q.question, &q.correct, &q.incorrect[0],
                                     &q.incorrect[1], &q.incorrect[2], &q.domain, &q.subdomain}) {
      if (field != &q.record_id) joined += '\x1f';
      joined += *field;
    }
  }
  EXPECT_EQ(Sha256Hex(joined), "47fd5f297d32c4fdb5970abf9caae9d4bb82f0efd1bf78dd75fd257f307055ca");
}

TEST_F(GpqaDiamondTest, ChoiceOrderIsDeterministicAndBalanced) {
  const std::vector<GpqaQuestion>& qs = *questions_;
  std::vector<std::array<int, 4>> forward, backward(qs.size());
  for (const GpqaQuestion& q : qs) forward.push_back(GpqaChoiceOrder(42, q.record_id));
  for (size_t i = qs.size(); i-- > 0;) backward[i] = GpqaChoiceOrder(42, qs[i].record_id);
  EXPECT_EQ(forward, backward);

  std::set<std::array<int, 4>> distinct;
  int changed_by_seed = 0;
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}}) {
    std::map<char, int> letters;
    for (size_t i = 0; i < qs.size(); ++i) {
      std::array<int, 4> order = GpqaChoiceOrder(seed, qs[i].record_id);
      EXPECT_TRUE(IsPermutation(order));
      EXPECT_EQ(order, GpqaChoiceOrder(seed, qs[i].record_id));
      ++letters[GpqaCorrectLetter(order)];
      if (seed == 42) {
        distinct.insert(order);
        if (order != GpqaChoiceOrder(43, qs[i].record_id)) ++changed_by_seed;
      }
    }
    ASSERT_EQ(letters.size(), 4u) << "seed " << seed;
    for (const auto& [letter, count] : letters) {
      EXPECT_GE(letter, 'A');
      EXPECT_LE(letter, 'D');
      EXPECT_GE(count, 30) << "seed " << seed << " letter " << letter;
      EXPECT_LE(count, 70) << "seed " << seed << " letter " << letter;
    }
  }
  EXPECT_EQ(distinct.size(), 24u);  // every permutation occurs
  EXPECT_GT(changed_by_seed, 150);  // another seed reshuffles most questions
}

TEST_F(GpqaDiamondTest, PromptsOnRealQuestions) {
  const std::string suffix =
      "\n\nAnswer with only the letter (A, B, C or D) of the correct option.";
  const std::string preamble =
      "Answer the following multiple choice question. The last line of your response should be "
      "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. "
      "Think step by step before answering.\n\n";
  std::set<std::string> digests;
  for (const GpqaQuestion& q : *questions_) {
    std::array<int, 4> order = GpqaChoiceOrder(42, q.record_id);
    std::string letter = GpqaPrompt(q, order, "letter");
    std::string simple = GpqaPrompt(q, order, "simple-evals");
    ASSERT_GT(letter.size(), suffix.size());
    EXPECT_TRUE(letter.compare(letter.size() - suffix.size(), suffix.size(), suffix) == 0);
    // simple-evals = its preamble + the same question and options.
    std::string rebuilt = preamble + letter.substr(0, letter.size() - suffix.size());
    EXPECT_EQ(Sha256Hex(simple), Sha256Hex(rebuilt)) << q.record_id;
    // The correct answer sits on the correct letter's line.
    std::string line = std::string("\n") + GpqaCorrectLetter(order) + ") " + q.correct;
    EXPECT_TRUE(simple.find(line) != std::string::npos) << q.record_id;
    digests.insert(Sha256Hex(simple));
  }
  EXPECT_EQ(digests.size(), 198u);
}

TEST(GpqaDataTest, LoadErrors) {
  std::vector<GpqaQuestion> qs;
  Status st = LoadGpqa(GpqaZip(), "dataset/gpqa_nope.csv", GpqaZipPassword(), &qs);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("'dataset/gpqa_nope.csv' not found"), std::string::npos);
  st = LoadGpqa(GpqaZip(), kGpqaDiamondMember, "wrong-password", &qs);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  st = LoadGpqa(GpqaZip(), "dataset/license.txt", GpqaZipPassword(), &qs);  // not the CSV we want
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message().rfind(
                GpqaZip() + ":dataset/license.txt: header: missing column(s) 'Record ID'", 0),
            0u)
      << st.message();
}

// Made-up CSVs in a made-up zip, in a temporary directory removed afterwards.
class GpqaSyntheticTest : public ::testing::Test {
 protected:
  Status Load(const std::string& csv, std::vector<GpqaQuestion>* out) {
    zip_path_ = (dir_ / "made_up.zip").string();
    int error = 0;
    zip_t* archive = zip_open(zip_path_.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    EXPECT_NE(archive, nullptr);
    zip_source_t* source = zip_source_buffer(archive, csv.data(), csv.size(), 0);
    zip_int64_t index = zip_file_add(archive, "d/made_up.csv", source, 0);
    EXPECT_EQ(zip_file_set_encryption(archive, index, ZIP_EM_TRAD_PKWARE, "pw"), 0);
    EXPECT_EQ(zip_close(archive), 0);
    return LoadGpqa(zip_path_, "d/made_up.csv", "pw", out);
  }
  testing::TempDir tmp_{"gpqa_data_test"};
  std::filesystem::path dir_ = tmp_.path();
  std::string zip_path_;
};

constexpr char kHeader[] =
    "Extra,Record ID,Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,"
    "Incorrect Answer 3,High-level domain,Subdomain\n";

TEST_F(GpqaSyntheticTest, LoadsMadeUpRows) {
  std::vector<GpqaQuestion> qs;
  Status st = Load(std::string(kHeader) +
                       "x,recMadeUp0000001,\"How many legs, on a made-up\nzorblax?\",six,"
                       "two,\" four \",\"\"\"eight\"\"\",Biology,Made-up Zoology\r\n"
                       "y,recMadeUp0000002,Q2,c,i1,i2,i3,Physics,Made-up Optics",
                   &qs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(qs.size(), 2u);
  EXPECT_EQ(qs[0].record_id, "recMadeUp0000001");
  EXPECT_EQ(qs[0].question, "How many legs, on a made-up\nzorblax?");
  EXPECT_EQ(qs[0].correct, "six");
  EXPECT_EQ(qs[0].incorrect, (std::array<std::string, 3>{"two", " four ", "\"eight\""}));
  EXPECT_EQ(qs[0].domain, "Biology");
  EXPECT_EQ(qs[0].subdomain, "Made-up Zoology");
  EXPECT_EQ(qs[1].record_id, "recMadeUp0000002");
  EXPECT_EQ(qs[1].subdomain, "Made-up Optics");
}

TEST_F(GpqaSyntheticTest, RejectsBadRows) {
  std::vector<GpqaQuestion> qs;
  Status st = Load(
      std::string(kHeader) + "x,r1,q,c,i1,i2,i3,Physics,Sub\ny,r2,q,c,i1,i2,i3,Physics\n", &qs);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            zip_path_ + ":d/made_up.csv: line 3: record has 8 fields, the header has 9");

  st = Load(std::string(kHeader) +
                "x,r1,\"multi\nline\",c,i1,i2,i3,Physics,Sub\ny,r2,q,c,,i2,i3,Physics,Sub\n",
            &qs);
  EXPECT_EQ(
      st.message(),
      zip_path_ + ":d/made_up.csv: line 4: column 'Incorrect Answer 1' is empty (expected text)");

  st = Load(std::string(kHeader) + "x,r1,q,c,i1,i2,i3,Physics,Sub\ny,r1,q,c,i1,i2,i3,Physics,Sub\n",
            &qs);
  EXPECT_EQ(
      st.message(),
      zip_path_ + ":d/made_up.csv: Record ID 'r1' appears more than once (expected unique ids)");

  st = Load("Record ID,Question\nr1,q\n", &qs);
  EXPECT_EQ(st.message(), zip_path_ +
                              ":d/made_up.csv: header: missing column(s) 'Correct Answer', "
                              "'Incorrect Answer 1', 'Incorrect Answer 2', 'Incorrect Answer 3', "
                              "'High-level domain', 'Subdomain' (the header has 2 columns)");

  st = Load(std::string(kHeader) + "x,r1,\"unterminated,c\n", &qs);
  EXPECT_EQ(st.message(), zip_path_ +
                              ":d/made_up.csv: line 2: quoted field is never closed (no matching "
                              "'\"' before the end of the text)");

  st = Load("", &qs);
  EXPECT_EQ(st.message(), zip_path_ + ":d/made_up.csv: empty CSV (expected a header row)");
}

TEST(GpqaDataTest, GoldenOrders) {
  // Pinned: a change to the key, the hash, the generator or the shuffle
  // changes every letter of every published run, and must fail here.
  // (Values cross-checked with an independent Python implementation.)
  EXPECT_EQ(GpqaChoiceOrder(42, "recMadeUpAlpha001"), (std::array<int, 4>{0, 3, 2, 1}));
  EXPECT_EQ(GpqaChoiceOrder(42, "recMadeUpBravo002"), (std::array<int, 4>{1, 0, 3, 2}));
  EXPECT_EQ(GpqaChoiceOrder(42, "recMadeUpCharlie3"), (std::array<int, 4>{1, 3, 0, 2}));
  EXPECT_EQ(GpqaChoiceOrder(0, "recMadeUpAlpha001"), (std::array<int, 4>{3, 2, 0, 1}));
  EXPECT_EQ(GpqaChoiceOrder(7, "recMadeUpBravo002"), (std::array<int, 4>{0, 2, 1, 3}));
  EXPECT_EQ(GpqaChoiceOrder(UINT64_MAX, "recMadeUpAlpha001"), (std::array<int, 4>{1, 3, 0, 2}));
  EXPECT_EQ(GpqaChoiceOrder(42, ""), (std::array<int, 4>{0, 3, 1, 2}));
}

TEST(GpqaDataTest, CorrectLetter) {
  EXPECT_EQ(GpqaCorrectLetter({0, 1, 2, 3}), 'A');
  EXPECT_EQ(GpqaCorrectLetter({1, 0, 3, 2}), 'B');
  EXPECT_EQ(GpqaCorrectLetter({1, 3, 0, 2}), 'C');
  EXPECT_EQ(GpqaCorrectLetter({3, 2, 1, 0}), 'D');
  EXPECT_EQ(GpqaCorrectLetter({1, 1, 2, 3}), 0);  // not a permutation
  EXPECT_EQ(GpqaCorrectLetter({0, 1, 2, 4}), 0);
}

GpqaQuestion MadeUpQuestion() {
  GpqaQuestion q;
  q.record_id = "recMadeUp0000001";
  q.question = "How many legs does a made-up zorblax have?\nCount carefully.";
  q.correct = "Six";
  q.incorrect = {"Two", "Four ", "$8$"};
  q.domain = "Biology";
  q.subdomain = "Made-up Zoology";
  return q;
}

TEST(GpqaDataTest, LetterPrompt) {
  EXPECT_EQ(GpqaPrompt(MadeUpQuestion(), {2, 0, 3, 1}, "letter"),
            "How many legs does a made-up zorblax have?\nCount carefully.\n"
            "\n"
            "A) Four \n"
            "B) Six\n"
            "C) $8$\n"
            "D) Two\n"
            "\n"
            "Answer with only the letter (A, B, C or D) of the correct option.");
}

TEST(GpqaDataTest, SimpleEvalsPrompt) {
  // openai/simple-evals common.py QUERY_TEMPLATE_MULTICHOICE, .strip()ped and
  // .format()ted by format_multichoice_question.
  EXPECT_EQ(GpqaPrompt(MadeUpQuestion(), {0, 1, 2, 3}, "simple-evals"),
            "Answer the following multiple choice question. The last line of your response should "
            "be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of "
            "ABCD. Think step by step before answering.\n"
            "\n"
            "How many legs does a made-up zorblax have?\nCount carefully.\n"
            "\n"
            "A) Six\n"
            "B) Two\n"
            "C) Four \n"
            "D) $8$");
}

TEST(GpqaDataTest, UnknownProfileOrBadOrderGivesEmptyPrompt) {
  EXPECT_TRUE(IsGpqaPromptProfile("letter"));
  EXPECT_TRUE(IsGpqaPromptProfile("simple-evals"));
  EXPECT_FALSE(IsGpqaPromptProfile("simple_evals"));
  EXPECT_FALSE(IsGpqaPromptProfile(""));
  EXPECT_EQ(GpqaPrompt(MadeUpQuestion(), {0, 1, 2, 3}, "simple_evals"), "");
  EXPECT_EQ(GpqaPrompt(MadeUpQuestion(), {0, 0, 2, 3}, "letter"), "");
}

TEST(GpqaDataTest, SimpleEvalsExtraction) {
  // Expected values from Python's re.search with simple-evals'
  // ANSWER_PATTERN_MULTICHOICE, group(1).
  struct Case {
    const char* response;
    char letter;
  };
  const Case cases[] = {
      {"Answer: B", 'B'},
      {"**Answer:** C", 0},  // "**" between ':' and the letter
      {"**Answer: C**", 'C'},
      {"answer: d", 'd'},  // case-insensitive: lowercase comes back lowercase
      {"ANSWER:A", 'A'},
      {"Answer : $C$", 'C'},
      {"Answer:\tD", 'D'},
      {"Answer:\nB", 0},  // no line break allowed
      {"The answer is B", 0},
      {"Answer: E", 0},
      {"Answer: (B)", 0},
      {"Final Answer: Both", 'B'},         // no word boundary
      {"Answer: A\nthen Answer: C", 'A'},  // first match
      {"Correct answer: b.", 'b'},
      {"Answer: \\boxed{B}", 0},
      {"An\xC5\xBFwer: B", 'B'},  // U+017F LONG S folds to 's', in Python and in RE2
      {"", 0},
      {"Answer:  $$D", 0},
      {"Answer: $ C", 0},
      {"Answers: A", 0},
      {"Answer:: B", 0},
      {"answer:c", 'c'},
      {"R\xC3\xA9ponse: A", 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ExtractSimpleEvalsLetter(c.response), c.letter) << "response: " << c.response;
  }
}

}  // namespace
}  // namespace evalrun
