// Tests for scorers/punkt.h: the port must split exactly as NLTK 3.8's
// sent_tokenize with the English Punkt model. The reference vectors were
// produced by the real tokenizer; the hand cases' expected values come from
// Debian's python3-nltk 3.8 (PunktSentenceTokenizer over PunktParameters
// built from the same four parameter files).
#include "scorers/punkt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/jsonl_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

using Sentences = std::vector<std::string>;

std::string ModelDir() { return testing::DatasetsDir() + "/punkt-english"; }

class PunktTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { *load_status_ = PunktModel::Load(ModelDir(), &model_); }
  static void TearDownTestSuite() { model_.reset(); }
  // Every test fails (not skips) when the model could not be loaded.
  void SetUp() override {
    ASSERT_TRUE(load_status_->ok()) << load_status_->ToString();
    ASSERT_NE(model_, nullptr);
  }

  static const PunktModel& model() { return *model_; }

  // Split and SplitSpans must agree; returns the sentences.
  static Sentences SplitChecked(std::string_view text) {
    Sentences sentences = model_->Split(text);
    const auto spans = model_->SplitSpans(text);
    EXPECT_EQ(spans.size(), sentences.size());
    for (size_t i = 0; i < spans.size() && i < sentences.size(); ++i) {
      EXPECT_LE(spans[i].first, spans[i].second);
      EXPECT_LE(spans[i].second, text.size());
      EXPECT_EQ(text.substr(spans[i].first, spans[i].second - spans[i].first), sentences[i]);
    }
    return sentences;
  }

  static std::unique_ptr<PunktModel> model_;
  static Status* load_status_;
};

std::unique_ptr<PunktModel> PunktTest::model_;
Status* PunktTest::load_status_ = new Status();

struct Reference {
  std::string text;
  Sentences sentences;
};

std::vector<Reference> LoadReferences() {
  std::vector<Reference> refs;
  for (const nlohmann::json& j : testing::ReadJsonLines(ModelDir() + "/reference_splits.jsonl"))
    refs.push_back({j.at("text").get<std::string>(), j.at("sentences").get<Sentences>()});
  return refs;
}

std::string Shorten(const std::string& s) { return s.size() > 200 ? s.substr(0, 200) + "..." : s; }

TEST_F(PunktTest, AllReferenceSplitsMatch) {
  const std::vector<Reference> refs = LoadReferences();
  ASSERT_EQ(refs.size(), 274u);
  size_t matched = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    const Sentences got = SplitChecked(refs[i].text);
    if (got == refs[i].sentences) {
      ++matched;
      continue;
    }
    size_t k = 0;
    while (k < got.size() && k < refs[i].sentences.size() && got[k] == refs[i].sentences[k]) ++k;
    ADD_FAILURE() << "first mismatch: case " << i << " text \"" << Shorten(refs[i].text)
                  << "\"\n  got " << got.size() << " sentences, expected "
                  << refs[i].sentences.size() << "; sentence " << k << " got \""
                  << (k < got.size() ? Shorten(got[k]) : "<none>") << "\" expected \""
                  << (k < refs[i].sentences.size() ? Shorten(refs[i].sentences[k]) : "<none>")
                  << "\"";
    break;
  }
  EXPECT_EQ(matched, refs.size());
}

struct HandCase {
  const char* text;
  Sentences expected;
};

TEST_F(PunktTest, HandCasesMatchNltk) {
  const std::vector<HandCase> cases = {
      // Abbreviations.
      {"Mr. Smith went to Washington. He arrived at 3 p.m. and left.",
       {"Mr. Smith went to Washington.", "He arrived at 3 p.m. and left."}},
      {"See e.g. the appendix. It has details.", {"See e.g.", "the appendix.", "It has details."}},
      {"Use i.e. this one. Then stop.", {"Use i.e.", "this one.", "Then stop."}},
      {"We met Dr. Watson. However, he left.", {"We met Dr. Watson.", "However, he left."}},
      {"He works at Acme Inc. The company is big.",
       {"He works at Acme Inc.", "The company is big."}},
      {"Was it 5 p.m.? Yes.", {"Was it 5 p.m.?", "Yes."}},
      // Initials.
      {"J. R. R. Tolkien wrote it. It sold well.", {"J. R. R. Tolkien wrote it.", "It sold well."}},
      // A punctuation mark never starts a sentence (_ortho_heuristic).
      {"We saw J. ; it was late.", {"We saw J. ; it was late."}},
      {"Item 3. , then more.", {"Item 3. , then more."}},
      // Numbers.
      {"The value is 3.5 today. Next one is 4.25.",
       {"The value is 3.5 today.", "Next one is 4.25."}},
      {"It rose 5. percent. In 1999. the rest.", {"It rose 5. percent.", "In 1999. the rest."}},
      {"It costs $1,000.00. That is a lot.", {"It costs $1,000.00.", "That is a lot."}},
      {"A list: 1. first 2. second. Done.", {"A list: 1. first 2. second.", "Done."}},
      {"It was 3. done now.", {"It was 3. done now."}},
      {"It was x3. done now.", {"It was x3.", "done now."}},
      // Ellipsis.
      {"Wait... what? No way!", {"Wait... what?", "No way!"}},
      {"The end. . . Then more. . . . and less.",
       {"The end.", ".", ".", "Then more.", ".", ".", ".", "and less."}},
      // Closing punctuation after the period.
      {"He said \"Hi.\" Then he left.", {"He said \"Hi.\"", "Then he left."}},
      {"He said 'Go.' She went.", {"He said 'Go.'", "She went."}},
      {"(This is a sentence.) This is another.", {"(This is a sentence.)", "This is another."}},
      {"Ends with closers.\") Next one.", {"Ends with closers.\")", "Next one."}},
      {"Mix.--Dash. Next", {"Mix.--Dash.", "Next"}},
      {"He left.'-- Then she came.", {"He left.'", "-- Then she came."}},
      {"Go.\"\n\nNow.", {"Go.\"", "Now."}},
      // ? and !.
      {"Really?! Yes. Ok!? Fine.", {"Really?!", "Yes.", "Ok!?", "Fine."}},
      {"Very bad acting!!! I promise.", {"Very bad acting!!!", "I promise."}},
      // Whitespace and layout.
      {"", {}},
      {"   \n\t ", {}},
      {"One", {"One"}},
      {"One. ", {"One."}},
      {"  Hello. World.  ", {"  Hello.", "World."}},
      {"First line.\n\nSecond paragraph.\nThird line",
       {"First line.", "Second paragraph.", "Third line"}},
      {"Sentence one.Sentence two.", {"Sentence one.Sentence two."}},
      // Non-ASCII. NBSP is whitespace for the regexes but not for NLTK's
      // "word before" search (string.whitespace), so no break after "One.".
      {"Caf\u00e9 is open. \u00c9douard is here.", {"Caf\u00e9 is open.", "\u00c9douard is here."}},
      {"One.\u00a0Two. Three.", {"One.\u00a0Two.", "Three."}},
      {"Mr. Smith. \u00c9t\u00e9.\u2003Fin!  ", {"Mr. Smith.", "\u00c9t\u00e9.", "Fin!"}},
      // Unicode letters as initials ([^\W\d]): E acute, superscript two.
      {"Call \u00c9. Zola now.", {"Call \u00c9. Zola now."}},
      {"Pay \u00b2. Zola now.", {"Pay \u00b2. Zola now."}},
      // str.isupper (circled A is Other_Uppercase) and str.islower.
      {"He met J. \u24b6bc there.", {"He met J. \u24b6bc there."}},
      {"He met J. \u00e9douard there.", {"He met J. \u00e9douard there."}},
      // Arabic-Indic three is a decimal digit: a number, like "3.".
      {"It was \u0663. done now.", {"It was \u0663. done now."}},
      // KELVIN SIGN lower-cases to "k": "\u212Aan." is the abbreviation "kan".
      {"The \u212aan. people left. The Kan. people left.",
       {"The \u212aan. people left.", "The Kan. people left."}},
  };
  for (const HandCase& c : cases) {
    EXPECT_EQ(SplitChecked(c.text), c.expected) << "text: \"" << c.text << "\"";
  }
}

TEST_F(PunktTest, SpansAreByteOffsets) {
  // Python's code point spans are (0, 5), (6, 14), (15, 19).
  const std::string text = "Caf\u00e9. \u00c9t\u00e9 ici. Fin.";
  const std::vector<std::pair<size_t, size_t>> expected = {{0, 6}, {7, 17}, {18, 22}};
  EXPECT_EQ(model().SplitSpans(text), expected);
  EXPECT_EQ(model().Split(text), (Sentences{"Caf\u00e9.", "\u00c9t\u00e9 ici.", "Fin."}));
}

TEST_F(PunktTest, InvalidUtf8IsOneOpaqueCharacter) {
  // Python sees the stray byte as a lone surrogate (surrogateescape) and
  // gives ["Bad \udcff.", "Next one."].
  EXPECT_EQ(SplitChecked("Bad \xff. Next one."), (Sentences{"Bad \xff.", "Next one."}));
  EXPECT_EQ(SplitChecked("Cut \xe2\x84"), (Sentences{"Cut \xe2\x84"}));
}

TEST_F(PunktTest, ConcurrentSplitsAgree) {
  const std::vector<Reference> refs = LoadReferences();
  ASSERT_GE(refs.size(), 8u);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < 40 && i < refs.size(); i += 2) {
        if (model().Split(refs[i].text) != refs[i].sentences) ++mismatches;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// --- Load -----------------------------------------------------------------

class PunktLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("abbrev_types.txt", "mr\ne.g\n");
    Write("collocations.tab", "##number##\tbusiness\n");
    Write("sent_starters.txt", "however\n");
    Write("ortho_context.tab", "however\t2\nsmith\t14\n");
  }
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ / name, std::ios::binary) << content;
  }
  Status Load(std::unique_ptr<PunktModel>* out) { return PunktModel::Load(dir_.string(), out); }

  testing::TempDir tmp_{"punkt_test"};
  std::filesystem::path dir_ = tmp_.path();
};

TEST_F(PunktLoadTest, SmallModelLoadsAndSplits) {
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->Split("Mr. Smith came. However, he left."),
            (Sentences{"Mr. Smith came.", "However, he left."}));
}

TEST_F(PunktLoadTest, CrlfAndBlankLinesAccepted) {
  Write("abbrev_types.txt", "mr\r\n\r\ne.g\r\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(model->Split("Mr. Smith came."), (Sentences{"Mr. Smith came."}));
}

TEST_F(PunktLoadTest, MissingDirectoryIsNotFound) {
  std::unique_ptr<PunktModel> model;
  Status st = PunktModel::Load((dir_ / "nope").string(), &model);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("abbrev_types.txt"), std::string::npos) << st.message();
  EXPECT_EQ(model, nullptr);
}

TEST_F(PunktLoadTest, BadFlagsNameFileAndLine) {
  Write("ortho_context.tab", "however\t2\nsmith\tabc\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("ortho_context.tab:2:"), std::string::npos) << st.message();
  EXPECT_EQ(model, nullptr);
}

TEST_F(PunktLoadTest, FlagsOutOfRangeRejected) {
  Write("ortho_context.tab", "however\t128\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("ortho_context.tab:1:"), std::string::npos) << st.message();
}

TEST_F(PunktLoadTest, DuplicateOrthoWordRejected) {
  Write("ortho_context.tab", "however\t2\n\nhowever\t4\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("ortho_context.tab:3: duplicate word \"however\""), std::string::npos)
      << st.message();
}

TEST_F(PunktLoadTest, CollocationNeedsTwoFields) {
  Write("collocations.tab", "##number##\tbusiness\nlonely\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("collocations.tab:2:"), std::string::npos) << st.message();
}

TEST_F(PunktLoadTest, TabInWordListRejected) {
  Write("sent_starters.txt", "however\nbut\tyet\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("sent_starters.txt:2:"), std::string::npos) << st.message();
}

TEST_F(PunktLoadTest, EmptyFileRejected) {
  Write("abbrev_types.txt", "\n");
  std::unique_ptr<PunktModel> model;
  Status st = Load(&model);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("abbrev_types.txt: no rows"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace evalrun
