// RULER's builders family by family, checked for structure rather than
// bytes: niah's needles at the essay's sentence boundaries and the essay
// cycling, vt's chain, the counts behind cwe's and fwe's gold, the documents
// qa picks (how the expected values were made: ruler_tasks_fixture.h).
#include "evals/benchmarks/ruler/ruler_builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evals/base/sha256.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "tests/benchmarks/ruler/ruler_tasks_fixture.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

using ruler_testing::BuildFixture;
using ruler_testing::FakeTokenizer;
using ruler_testing::FitTask;
using ruler_testing::Fresh;
using ruler_testing::Inputs;
using ruler_testing::Task;

size_t CountOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size()))
    ++n;
  return n;
}

TEST(RulerBuilders, EssayNeedlesSitAtSentenceBoundariesAtRulersDepths) {
  BuildFixture f(&Inputs(), Task("niah_multikey_1"), 4096);
  RulerEssayCache cache(&Inputs());
  for (int n : {300, 1500, 4000}) {
    const RulerEssayCache::Entry& e = cache.Get(n);
    std::vector<std::string> sents;
    for (auto [b, en] : e.spans) sents.push_back(e.text.substr(b, en - b));
    const size_t s = sents.size();
    ASSERT_GT(s, 10u);
    std::set<size_t> allowed;
    for (int d : RulerDepths()) allowed.insert(static_cast<size_t>(s * (d / 100.0)));
    const std::string text = f.Build(n, Fresh());
    const size_t ctx_begin = text.find("afterwards.\n") + 12;
    const size_t ctx_end = text.rfind("\nWhat is the special magic");
    const std::string context = text.substr(ctx_begin, ctx_end - ctx_begin);
    // Walk the context: sentences in order, with the 4 needles between them.
    size_t pos = 0, sent = 0;
    std::vector<size_t> needle_at;
    while (pos < context.size()) {
      if (context.compare(pos, 32, "One of the special magic numbers") == 0) {
        needle_at.push_back(sent);
        pos = context.find('.', pos) + 1;
      } else {
        ASSERT_LT(sent, s);
        ASSERT_EQ(context.compare(pos, sents[sent].size(), sents[sent]), 0)
            << "n=" << n << " sentence " << sent;
        pos += sents[sent].size();
        ++sent;
      }
      if (pos < context.size()) {
        ASSERT_EQ(context[pos], ' ');
        ++pos;
      }
    }
    EXPECT_EQ(sent, s);
    ASSERT_EQ(needle_at.size(), 4u);
    for (size_t p : needle_at)
      EXPECT_TRUE(allowed.count(p)) << "needle at sentence " << p << " of " << s;
    EXPECT_TRUE(std::is_sorted(needle_at.begin(), needle_at.end()));
  }
}

TEST(RulerBuilders, EssayTextCyclesTheCorpus) {
  RulerInputs in;
  ASSERT_TRUE(ParseRulerEssay("{\"text\": \"One two. Three\\u00a0four.\\n\"}", "inline", &in).ok());
  ASSERT_TRUE(PunktModel::Load(testing::DatasetsDir() + "/punkt-english", &in.punkt).ok());
  EXPECT_EQ(in.essay_word_starts.size(), 5u);  // ['One', 'two.', 'Three', 'four.', '']
  RulerEssayCache cache(&in);
  // " ".join((haystack * 3)[:7]).strip() in Python.
  EXPECT_EQ(cache.Get(7).text, "One two. Three four.  One two.");
  EXPECT_EQ(cache.Get(7).spans.size(), 3u);
  for (int n = 1; n <= 16; ++n) {
    std::string joined;
    for (int i = 0; i < n; ++i) {
      const size_t w = static_cast<size_t>(i) % 5;
      const size_t b = in.essay_word_starts[w];
      const size_t e = w + 1 < 5 ? in.essay_word_starts[w + 1] - 1 : in.essay_text.size();
      joined += (i ? " " : "") + in.essay_text.substr(b, e - b);
    }
    EXPECT_EQ(cache.TextBytes(n), static_cast<int64_t>(joined.size())) << n;
  }
}

TEST(RulerBuilders, VariableTrackingChain) {
  BuildFixture f(&Inputs(), Task("vt"), 4096);
  RulerBuilt icl;
  const std::string example = f.Build(8, Fresh(), &icl, /*icl=*/true);
  f.ctx()->vt_icl_example = example + " " + icl.gold[0] + " " + icl.gold[1] + " " + icl.gold[2] +
                            " " + icl.gold[3] + " " + icl.gold[4] + "\n";
  RulerBuilt built;
  const std::string text = f.Build(50, icl.after, &built);
  ASSERT_EQ(built.gold.size(), 5u);
  // The question comes after the example; its chain: v0 = value, v(j+1) = v(j).
  const size_t question = text.rfind("Memorize and track");
  ASSERT_NE(question, std::string::npos);
  ASSERT_GT(question, 0u);
  const std::string q = text.substr(question);
  const size_t first = q.find("VAR " + built.gold[0] + " = ");
  ASSERT_NE(first, std::string::npos);
  const std::string value = q.substr(first + 4 + 5 + 3, 5);
  EXPECT_TRUE(std::all_of(value.begin(), value.end(), ::isdigit));
  EXPECT_NE(q.find("assigned the value " + value + " in the text above."), std::string::npos);
  EXPECT_NE(q.find("5 variables are assigned the value " + value + ", they are: "),
            std::string::npos);
  size_t prev = first;
  for (int j = 0; j < 4; ++j) {
    const size_t at = q.find("\nVAR " + built.gold[j + 1] + " = VAR " + built.gold[j] + " \n");
    ASSERT_NE(at, std::string::npos) << j;
    EXPECT_GT(at, prev);
    prev = at;
  }
  EXPECT_EQ(CountOf(q, "The grass is green."), 50u);
  for (const std::string& v : built.gold) EXPECT_EQ(v.size(), 5u);
  // The example precedes it, followed by "\n": same length, fresh names and value.
  const std::string ex = text.substr(0, question);
  EXPECT_EQ(ex.size(), f.ctx()->vt_icl_example.size() + 1);
  EXPECT_EQ(ex.back(), '\n');
  EXPECT_EQ(ex.find("12345"), std::string::npos);
  for (const std::string& old : icl.gold)
    EXPECT_EQ(ex.find("VAR " + old + " "), std::string::npos) << old;
  EXPECT_NE(ex.find(" they are:  "), std::string::npos);  // two spaces before the example answer
}

// Occurrences of each word in a "1. w 2. w ..." list, checking the numbering.
std::map<std::string, int> NumberedCounts(const std::string& list) {
  std::map<std::string, int> counts;
  std::istringstream in(list);
  std::string num, word;
  int expect = 1;
  while (in >> num >> word) {
    EXPECT_EQ(num, std::to_string(expect) + ".");
    ++expect;
    ++counts[word];
  }
  return counts;
}

TEST(RulerBuilders, CommonWordsCountsAndGold) {
  for (int length : {8192, 2048}) {
    BuildFixture f(&Inputs(), Task("cwe"), length);
    RulerBuilt built;
    const int n = 80;
    const std::string text = f.Build(n, Fresh(), &built);
    const int cr = length >= 4096 ? 30 : 6, ur = length >= 4096 ? 3 : 1;
    const int ex_words = length >= 4096 ? 40 : 20, ex_cr = length >= 4096 ? 10 : 3,
              ex_ur = length >= 4096 ? 3 : 1;
    // Example block, its answer line, then the question block.
    const std::string head = "Memorize the ones that appear most often.\n";
    const size_t ex_b = text.find(head) + head.size();
    const size_t ex_e = text.find("\nQuestion:", ex_b);
    const size_t q_b = text.find(head, ex_e) + head.size();
    const size_t q_e = text.find("\nQuestion:", q_b);
    const std::map<std::string, int> ex = NumberedCounts(text.substr(ex_b, ex_e - ex_b));
    const std::map<std::string, int> q = NumberedCounts(text.substr(q_b, q_e - q_b));
    EXPECT_EQ(static_cast<int>(ex.size()), ex_words);
    EXPECT_EQ(static_cast<int>(q.size()), n);
    ASSERT_EQ(built.gold.size(), 10u);
    for (const auto& [w, c] : q) {
      const bool common = std::find(built.gold.begin(), built.gold.end(), w) != built.gold.end();
      EXPECT_EQ(c, common ? cr : ur) << w;
    }
    int ex_common = 0;
    for (const auto& [w, c] : ex) {
      EXPECT_TRUE(c == ex_cr || c == ex_ur) << w;
      ex_common += c == ex_cr;
    }
    EXPECT_EQ(ex_common, 10);
    // The example's answer: "... are: 1. w 2. w ... 10. w\n" after its prefix.
    const std::string answer_head = "most often in the list are: 1. ";
    EXPECT_NE(text.find(answer_head), std::string::npos);
    const std::string prefix = " Answer: The top 10 words that appear most often in the list are:";
    ASSERT_GT(text.size(), prefix.size());
    EXPECT_EQ(text.substr(text.size() - prefix.size()), prefix);
  }
}

TEST(RulerBuilders, FrequentWordsCountsAndGold) {
  BuildFixture f(&Inputs(), Task("fwe"), 8192);
  RulerBuilt built;
  const int w = 3000;
  const std::string text = f.Build(w, Fresh(), &built);
  const std::string head = "Find the three most frequently appeared coded words. ";
  const size_t b = text.find(head) + head.size();
  const std::string context = text.substr(b, text.find("\nQuestion:") - b);
  std::map<std::string, int> counts;
  std::istringstream in(context);
  std::string word;
  while (in >> word) ++counts[word];
  // Rank k appears int(W * k^-2 / zeta(2)) times; rank 1 is "...".
  const double zeta = 1.6449340668482264;
  EXPECT_EQ(counts["..."], static_cast<int>(w / zeta));
  ASSERT_EQ(built.gold.size(), 3u);
  for (int k = 2; k <= 4; ++k) {
    EXPECT_EQ(counts[built.gold[k - 2]], static_cast<int>(w * std::pow(k, -2.0) / zeta)) << k;
    EXPECT_EQ(built.gold[k - 2].size(), 6u);
  }
  std::vector<int> others;
  for (const auto& [wd, c] : counts) {
    if (wd != "..." && std::find(built.gold.begin(), built.gold.end(), wd) == built.gold.end()) {
      others.push_back(c);
    }
  }
  EXPECT_LT(*std::max_element(others.begin(), others.end()), counts[built.gold[2]]);
}

constexpr char kTinySquad[] =
    R"({"data": [{"paragraphs": [{"context": "Paris is the capital of France.", "qas": [{"question": "What is the capital of France?", "answers": [{"text": "Paris"}, {"text": "Paris"}], "is_impossible": false}, {"question": "Unanswerable?", "answers": [], "is_impossible": true}]}, {"context": "France is in Europe.", "qas": [{"question": "Where is France?", "answers": [{"text": "Europe"}], "is_impossible": false}]}, {"context": "The Seine flows through Paris.", "qas": []}]}, {"paragraphs": [{"context": "Berlin is the capital of Germany.", "qas": [{"question": "What is the capital of Germany?", "answers": [{"text": "Berlin"}], "is_impossible": false}]}, {"context": "Germany borders France.", "qas": []}, {"context": "Munich is in Bavaria.", "qas": []}]}]})";
constexpr char kTinyHotpot[] =
    R"([{"question": "Q1?", "answer": "A1", "context": [["T1", ["s1. ", "s2."]], ["T2", ["x."]]]}, {"question": "Q2?", "answer": "A2", "context": [["T3", ["y."]], ["T1", ["s1. ", "s2."]]]}])";

TEST(RulerBuilders, QaDocumentsAsRulerPicksThem) {
  RulerInputs in;
  RulerQaSet squad, hotpot;
  ASSERT_TRUE(ParseRulerSquad(kTinySquad, "squad", &squad).ok());
  ASSERT_TRUE(ParseRulerHotpot(kTinyHotpot, "hotpot", &hotpot).ok());
  ASSERT_EQ(squad.docs.size(), 6u);
  ASSERT_EQ(squad.qas.size(), 3u);
  EXPECT_EQ(squad.qas[0].outputs, (std::vector<std::string>{"Paris", "Paris"}));
  EXPECT_EQ(squad.qas[0].more_context, (std::vector<int>{1, 5}));
  EXPECT_EQ(squad.qas[2].more_context, (std::vector<int>{2, 3}));
  EXPECT_EQ(hotpot.docs, (std::vector<std::string>{"T1\ns1. s2.", "T2\nx.", "T3\ny."}));
  in.squad = squad;
  in.hotpotqa = hotpot;
  struct Case {
    const char* task;
    int index, n;
    const char* sha256;
  };
  const Case cases[] = {
      {"qa_1", 0, 2, "f63fbae4c068c401fc4bd97bb98867d904483d5daa5ff8afb6ff2a96dcff92b8"},
      {"qa_1", 0, 5, "369ded19dd015c0ff69cd995002057a1c49ae594e4ed871651a0185d22c0d5e0"},
      {"qa_1", 1, 4, "4b79ed3bd93339a93529cc08442933892a3d9a614caf12f235dff02a7424486e"},
      {"qa_1", 0, 6, "9d2ceb8baa2f44ed3c00e134761a2406b07a613077ce671a32f8738758f3242e"},
      {"qa_1", 2, 8, "c499300f64e9741bf6db6af4a9902e6ccded031c3a5b02632310f0d541eb3731"},
      {"qa_2", 0, 2, "91db659492436fbeebac83f68cb6fa392195f8c1789dbd15933453d2f72dcf4c"},
      {"qa_2", 1, 3, "cf53187fbff5e679e3a89eed48fbfae94f66fc475aa4444549dea6bcfba517f9"},
      {"qa_2", 1, 5, "89d3f38c1ed8907ab3aff5c613be573dc134c134d65b6651ceabbdc2e6fdfb6d"},
  };
  for (const Case& c : cases) {
    BuildFixture f(&in, Task(c.task), 4096);
    const std::string text = f.Build(c.n, Fresh(), nullptr, false, c.index);
    EXPECT_EQ(Sha256Hex(text), c.sha256) << c.task << " " << c.index << " " << c.n << "\n" << text;
    EXPECT_EQ(f.last_proxy(), static_cast<int64_t>(text.size()));  // the qa proxy is exact
  }
  BuildFixture f(&in, Task("qa_1"), 4096);
  EXPECT_EQ(f.Build(2, Fresh()),
            "Answer the question based on the given documents. Only give me the answer and do not "
            "output any other words.\n\nThe following are given documents.\n\nDocument 1:\nFrance "
            "is in Europe.\n\nDocument 2:\nParis is the capital of France.\n\nAnswer the question "
            "based on the given documents. Only give me the answer and do not output any other "
            "words.\n\nQuestion: What is the capital of France? Answer:");
  // More samples than questions.
  FakeTokenizer tok;
  std::vector<RulerSample> out;
  EXPECT_EQ(GenerateRulerSamples(in, FitTask("qa_1"), 1024, 4, 42, &tok, &out).code(),
            Status::Code::kInvalidInput);
  ASSERT_TRUE(GenerateRulerSamples(in, FitTask("qa_1"), 1024, 3, 42, &tok, &out).ok());
  EXPECT_EQ(out[1].gold, (std::vector<std::string>{"Europe"}));
  EXPECT_NE(out[1].prompt.find("Question: Where is France? Answer:"), std::string::npos);
}

}  // namespace
}  // namespace evalrun
