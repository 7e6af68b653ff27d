// RULER's task table, its text helpers, the inputs it loads, and
// GenerateRulerSamples, against RULER's Python generators (how the expected
// values were made: ruler_tasks_fixture.h). The builders at fixed sizes:
// ruler_builders_test.cc, ruler_builder_structure_test.cc.
#include "evals/benchmarks/ruler/ruler_tasks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "evals/base/py_random.h"
#include "evals/base/sha256.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "tests/benchmarks/ruler/ruler_tasks_fixture.h"
#include "tests/support/temp_dir.h"

namespace evalrun {
namespace {

using ruler_testing::FakeTokenizer;
using ruler_testing::FitTask;
using ruler_testing::Inputs;
using ruler_testing::RulerDir;
using ruler_testing::Task;

// ---------------------------------------------------------------------------

TEST(RulerTaskTable, ThirteenTasksInRulerOrder) {
  EXPECT_EQ(RulerTaskNames(),
            (std::vector<std::string>{"niah_single_1", "niah_single_2", "niah_single_3",
                                      "niah_multikey_1", "niah_multikey_2", "niah_multikey_3",
                                      "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe",
                                      "qa_1", "qa_2"}));
}

TEST(RulerTaskTable, ArgumentsMatchSyntheticYaml) {
  using H = RulerHaystack;
  using N = RulerNeedleType;
  struct Row {
    const char* name;
    H h;
    N k, v;
    int nk, nv, nq;
  };
  const Row rows[] = {
      {"niah_single_1", H::kNoise, N::kWords, N::kNumbers, 1, 1, 1},
      {"niah_single_2", H::kEssay, N::kWords, N::kNumbers, 1, 1, 1},
      {"niah_single_3", H::kEssay, N::kWords, N::kUuids, 1, 1, 1},
      {"niah_multikey_1", H::kEssay, N::kWords, N::kNumbers, 4, 1, 1},
      {"niah_multikey_2", H::kNeedle, N::kWords, N::kNumbers, 1, 1, 1},
      {"niah_multikey_3", H::kNeedle, N::kUuids, N::kUuids, 1, 1, 1},
      {"niah_multivalue", H::kEssay, N::kWords, N::kNumbers, 1, 4, 1},
      {"niah_multiquery", H::kEssay, N::kWords, N::kNumbers, 1, 1, 4},
  };
  for (const Row& r : rows) {
    const RulerTaskConfig t = Task(r.name);
    EXPECT_EQ(t.family, RulerFamily::kNiah) << r.name;
    EXPECT_EQ(t.type_haystack, r.h) << r.name;
    EXPECT_EQ(t.type_needle_k, r.k) << r.name;
    EXPECT_EQ(t.type_needle_v, r.v) << r.name;
    EXPECT_EQ(t.num_needle_k, r.nk) << r.name;
    EXPECT_EQ(t.num_needle_v, r.nv) << r.name;
    EXPECT_EQ(t.num_needle_q, r.nq) << r.name;
    EXPECT_EQ(t.max_tokens, 128) << r.name;
    EXPECT_EQ(t.metric, RulerMetric::kStringMatchAll) << r.name;
  }
  const RulerTaskConfig vt = Task("vt");
  EXPECT_EQ(vt.max_tokens, 30);
  EXPECT_EQ(vt.type_haystack, H::kNoise);
  EXPECT_EQ(vt.num_chains, 1);
  EXPECT_EQ(vt.num_hops, 4);
  const RulerTaskConfig cwe = Task("cwe");
  EXPECT_EQ(cwe.max_tokens, 120);
  EXPECT_EQ(cwe.freq_cw, 30);
  EXPECT_EQ(cwe.freq_ucw, 3);
  EXPECT_EQ(cwe.num_cw, 10);
  const RulerTaskConfig fwe = Task("fwe");
  EXPECT_EQ(fwe.max_tokens, 50);
  EXPECT_EQ(fwe.alpha, 2.0);
  EXPECT_EQ(Task("qa_1").max_tokens, 32);
  EXPECT_EQ(Task("qa_1").dataset, "squad");
  EXPECT_EQ(Task("qa_2").dataset, "hotpotqa");
  EXPECT_EQ(Task("qa_2").metric, RulerMetric::kStringMatchPart);
}

TEST(RulerTaskTable, UnknownNameSuggests) {
  RulerTaskConfig t;
  const Status st = RulerTaskByName("niah_singel_1", &t);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("did you mean \"niah_single_1\""), std::string::npos) << st.message();
}

TEST(RulerTaskTable, Depths) {
  EXPECT_EQ(RulerDepths(), (std::vector<int>{0,  3,  5,  8,  10, 13, 15, 18, 21, 23, 26, 28, 31, 33,
                                             36, 38, 41, 44, 46, 49, 51, 54, 56, 59, 62, 64, 67, 69,
                                             72, 74, 77, 79, 82, 85, 87, 90, 92, 95, 97, 100}));
}

TEST(RulerText, SingularRewriteOfTheWholeTemplate) {
  const RulerTemplate t = RulerTemplateFor(RulerFamily::kNiah);
  EXPECT_EQ(
      RulerSingularTemplate(std::string(t.task_template) + t.answer_prefix),
      "A special magic {type_needle_v} is hidden within the following text. Make sure to "
      "memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat is "
      "the special magic {type_needle_v} for {query} mentioned in the provided text? The "
      "special magic {type_needle_v} for {query} mentioned in the provided text is");
  // Order matters: "are all" goes before "are"; "answers" loses its s.
  EXPECT_EQ(RulerSingularTemplate("Some are all are answers care"), "A is is answer cis");
}

TEST(RulerText, FormatReplaceAndChoices) {
  EXPECT_EQ(RulerFormat("{a}-{b}-{a}-{c}", {{"a", "x"}, {"b", "{a}"}}), "x-{a}-x-{c}");
  EXPECT_EQ(RulerReplaceAll("aaa", "aa", "b"), "ba");
  EXPECT_EQ(RulerReplaceAll(". \nx. \n", ". \n", ".\n"), ".\nx.\n");
  // str(uuid.UUID(int=random.Random(42).getrandbits(128), version=4))
  PyRandom r(42);
  EXPECT_EQ(RulerUuid4(&r), "bdd640fb-0667-4ad1-9c80-317fa3b1799d");
}

TEST(RulerText, CollapsesPythonUnicodeWhitespace) {
  EXPECT_EQ(RulerCollapseWhitespace("a\xC2\xA0\xE2\x80\x83"
                                    "b\n\n\tc \xE3\x80\x80"),
            "a b c ");
  EXPECT_EQ(RulerCollapseWhitespace("x\x1Fy\xC2\x85z"), "x y z");
  EXPECT_EQ(RulerCollapseWhitespace("caf\xC3\xA9"), "caf\xC3\xA9");  // é is not a space
}

TEST(RulerInputsTest, EssayHaystackAsRulerSplitsIt) {
  const RulerInputs& in = Inputs();
  // re.sub(r'\s+', " ", text).split(" "): 525,450 words (PROVENANCE.md), the
  // last one empty; " ".join of them is 3,002,808 UTF-8 bytes.
  EXPECT_EQ(in.essay_word_starts.size(), 525450u);
  EXPECT_EQ(in.essay_text.size(), 3002808u);
  EXPECT_EQ(in.essay_text.substr(0, 20), "July 2010What hard l");
  EXPECT_EQ(in.essay_text.back(), ' ');
  ASSERT_NE(in.punkt, nullptr);
}

TEST(RulerInputsTest, NiahWordListIsPythonsSortedSet) {
  const NiahWordList& w = Inputs().niah_words;
  ASSERT_EQ(w.size(), 6171620u);  // 910 unique adjectives x 6,782 nouns
  EXPECT_EQ(w.At(0), "Early-ATM");
  EXPECT_EQ(w.At(1), "Early-CD");
  EXPECT_EQ(w.At(6782), "aback-ATM");
  EXPECT_EQ(w.At(1000000), "courageous-ikebana");
  EXPECT_EQ(w.At(3085810), "level-ATM");
  EXPECT_EQ(w.At(6171619), "zonked-zucchini");
  // sha256("\n".join(words)) in Python.
  std::string all;
  all.reserve(6171620 * 20);
  for (size_t i = 0; i < w.size(); ++i) {
    if (i) all.push_back('\n');
    all += w.At(i);
  }
  EXPECT_EQ(Sha256Hex(all), "e5e6a09ed20903cb4abfcde8b89d1a40d4133a6fcff97001c690c21d97af3007");
}

TEST(RulerInputsTest, NiahWordListMergesInterleavingAdjectives) {
  NiahWordList w;
  w.Init({"blue", "blue-eyed", "Early", "blue", "ad hoc"},
         {"zebra", "eyed", "apple", "eyed-apple"});
  const std::vector<std::string> expected = {
      "Early-apple",          "Early-eyed",      "Early-eyed-apple",  "Early-zebra",
      "ad hoc-apple",         "ad hoc-eyed",     "ad hoc-eyed-apple", "ad hoc-zebra",
      "blue-apple",           "blue-eyed",       "blue-eyed-apple",   "blue-eyed-eyed",
      "blue-eyed-eyed-apple", "blue-eyed-zebra", "blue-zebra"};
  ASSERT_EQ(w.size(), expected.size());  // "blue-eyed-apple" twice in the product, once here
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(w.At(i), expected[i]) << i;
}

TEST(RulerInputsTest, CweWordPool) {
  std::vector<std::string> pool = Inputs().cwe_words;
  ASSERT_EQ(pool.size(), 8166u);
  PyRandom(42).Shuffle(&pool);
  EXPECT_EQ(pool[0], "distinct");
  EXPECT_EQ(pool[1], "viability");
  EXPECT_EQ(pool[2], "skiing");
  EXPECT_TRUE(Inputs().english_words.empty());
}

TEST(RulerInputsTest, MissingQaFilesAreSkipNotes) {
  const RulerInputs& in = Inputs();
  EXPECT_FALSE(in.squad.has_value());
  EXPECT_FALSE(in.hotpotqa.has_value());
  const Status st = RulerTaskAvailable(in, Task("qa_1"));
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find(RulerDir() + "/squad.json not found"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find(kRulerSquadSha256), std::string::npos);
  const Status st2 = RulerTaskAvailable(in, Task("qa_2"));
  EXPECT_NE(st2.message().find("hotpotqa.json"), std::string::npos);
  bool noted = false;
  for (const std::string& m : in.missing) noted |= m.rfind("qa_1 skipped: ", 0) == 0;
  EXPECT_TRUE(noted);
  FakeTokenizer tok;
  std::vector<RulerSample> out;
  EXPECT_EQ(GenerateRulerSamples(in, FitTask("qa_2"), 4096, 1, 42, &tok, &out).code(),
            Status::Code::kNotFound);
  EXPECT_EQ(tok.calls(), 0);
}

TEST(RulerInputsTest, QaFileWithWrongSha256IsRejected) {
  const testing::TempDir tmp("ruler_sha_test");
  const std::string& dir = tmp.path();
  std::ofstream(dir + "/squad.json") << "{\"data\": []}";
  RulerLoadOptions opts;
  opts.tasks = {"qa_1"};
  RulerInputs in;
  const Status st = LoadRulerInputs(dir, opts, &in);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("expected " + std::string(kRulerSquadSha256)), std::string::npos)
      << st.message();
}

TEST(RulerInputsTest, LoadsOnlyWhatTheTasksNeed) {
  RulerLoadOptions opts;
  opts.tasks = {"niah_single_1", "fwe"};
  RulerInputs in;
  ASSERT_TRUE(LoadRulerInputs(RulerDir(), opts, &in).ok());
  EXPECT_TRUE(in.essay_text.empty());
  EXPECT_EQ(in.punkt, nullptr);
  EXPECT_EQ(in.niah_words.size(), 6171620u);
  EXPECT_TRUE(in.cwe_words.empty());
  EXPECT_TRUE(RulerTaskAvailable(in, Task("niah_single_1")).ok());
  EXPECT_EQ(RulerTaskAvailable(in, Task("niah_single_2")).code(), Status::Code::kNotFound);
  opts.tasks = {"niah_sngle_2"};
  EXPECT_NE(LoadRulerInputs(RulerDir(), opts, &in).message().find("did you mean"),
            std::string::npos);
}

// ---------------------------------------------------------------------------
// GenerateRulerSamples

TEST(RulerGenerate, SampleFields) {
  FakeTokenizer tok;
  std::vector<RulerSample> out;
  RulerGenStats stats;
  ASSERT_TRUE(
      GenerateRulerSamples(Inputs(), FitTask("niah_multivalue"), 4096, 3, 42, &tok, &out, &stats)
          .ok());
  ASSERT_EQ(out.size(), 3u);
  int calls = 0;
  for (int i = 0; i < 3; ++i) {
    const RulerSample& s = out[i];
    EXPECT_EQ(s.id, "niah_multivalue/4096/" + std::to_string(i));
    EXPECT_EQ(s.task, "niah_multivalue");
    EXPECT_EQ(s.length, 4096);
    EXPECT_EQ(s.index, i);
    EXPECT_EQ(s.max_tokens, 128);
    EXPECT_EQ(s.prompt_sha256, Sha256Hex(s.prompt));
    EXPECT_EQ(s.gold.size(), 4u);
    for (const std::string& g : s.gold)
      EXPECT_NE(s.prompt.find("is: " + g + "."), std::string::npos);
    EXPECT_TRUE(s.assistant_prefix.empty());
    EXPECT_EQ(s.answer_prefix.rfind(" The special magic numbers for ", 0), 0u) << s.answer_prefix;
    EXPECT_EQ(s.prompt.substr(s.prompt.size() - s.answer_prefix.size()), s.answer_prefix);
    EXPECT_EQ(s.exact_prompt_tokens, FakeTokenizer::Words(s.prompt) + 9);
    EXPECT_LE(s.exact_prompt_tokens + s.max_tokens, 4096);
    EXPECT_GT(s.haystack_units, 1000);
    calls += s.tokenizer_calls;
  }
  EXPECT_EQ(calls, stats.tokenizer_calls);
  EXPECT_EQ(stats.tokenizer_calls, tok.calls());
  EXPECT_EQ(stats.setup_calls, 0);
}

TEST(RulerGenerate, SameSeedSameBytesOtherSeedOtherBytes) {
  for (const char* task : {"niah_single_2", "niah_multikey_3", "vt", "cwe", "fwe"}) {
    std::vector<RulerSample> a, b, c;
    FakeTokenizer t1, t2, t3;
    ASSERT_TRUE(GenerateRulerSamples(Inputs(), FitTask(task), 4096, 3, 42, &t1, &a).ok()) << task;
    ASSERT_TRUE(GenerateRulerSamples(Inputs(), FitTask(task), 4096, 3, 42, &t2, &b).ok()) << task;
    ASSERT_TRUE(GenerateRulerSamples(Inputs(), FitTask(task), 4096, 3, 43, &t3, &c).ok()) << task;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(a[i].prompt, b[i].prompt) << task;
      EXPECT_EQ(a[i].gold, b[i].gold) << task;
      EXPECT_EQ(a[i].prompt_sha256, b[i].prompt_sha256) << task;
      EXPECT_NE(a[i].prompt_sha256, c[i].prompt_sha256) << task;
    }
    EXPECT_EQ(t1.calls(), t2.calls());
    // Samples differ from one another too.
    EXPECT_NE(a[0].prompt_sha256, a[1].prompt_sha256) << task;
  }
}

TEST(RulerGenerate, AssistantPrefillKeepsTheAnswerPrefixApart) {
  RulerTaskConfig t = FitTask("vt");
  t.answer_prefix_mode = RulerAnswerPrefixMode::kAssistantPrefill;
  FakeTokenizer tok1, tok2;
  std::vector<RulerSample> pre, user;
  ASSERT_TRUE(GenerateRulerSamples(Inputs(), t, 4096, 2, 42, &tok1, &pre).ok());
  ASSERT_TRUE(GenerateRulerSamples(Inputs(), FitTask("vt"), 4096, 2, 42, &tok2, &user).ok());
  for (int i = 0; i < 2; ++i) {
    const RulerSample& s = pre[i];
    EXPECT_EQ(s.assistant_prefix, s.answer_prefix);
    EXPECT_EQ(s.answer_prefix.rfind(" Answer: According to the chain(s)", 0), 0u);
    EXPECT_EQ(s.prompt_sha256, Sha256Hex(s.prompt + s.assistant_prefix));
    EXPECT_EQ(s.prompt.back(), '.');  // "... in the text above."
    EXPECT_EQ(s.exact_prompt_tokens,
              FakeTokenizer::Words(s.prompt) + 9 + FakeTokenizer::Words(s.assistant_prefix));
    EXPECT_LE(s.exact_prompt_tokens + 30, 4096);
    // The example keeps its own answer prefix inside the user message.
    EXPECT_NE(s.prompt.find(" Answer: According to the chain(s)"), std::string::npos);
    EXPECT_TRUE(user[i].assistant_prefix.empty());
    EXPECT_EQ(user[i].answer_prefix.rfind(" Answer: According", 0), 0u);
  }
}

TEST(RulerGenerate, VtExampleIsSizedByRawCount) {
  FakeTokenizer tok;
  std::vector<RulerSample> out;
  RulerGenStats stats;
  ASSERT_TRUE(GenerateRulerSamples(Inputs(), FitTask("vt"), 4096, 1, 42, &tok, &out, &stats).ok());
  EXPECT_GT(stats.setup_calls, 0);
  const std::string& p = out[0].prompt;
  const size_t q = p.rfind("Memorize and track");
  const size_t ex_prefix = p.find(", they are: ");
  ASSERT_LT(ex_prefix, q);
  // The example up to its answer prefix fits 500 raw tokens, within 24.
  const int ex_tokens = FakeTokenizer::Words(p.substr(0, ex_prefix + 12));
  EXPECT_LE(ex_tokens, 500);
  EXPECT_GE(ex_tokens, 500 - 24);
}

TEST(RulerGenerate, CweBeyondTheWonderwordsPoolNeedsEnglishWords) {
  FakeTokenizer tok;
  std::vector<RulerSample> out;
  const Status st = GenerateRulerSamples(Inputs(), FitTask("cwe"), 131072, 1, 42, &tok, &out);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("english_words.json"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(kRulerEnglishWordsSha256), std::string::npos);
}

TEST(RulerGenerate, LengthTooSmallForTheTemplate) {
  FakeTokenizer tok;
  std::vector<RulerSample> out;
  EXPECT_EQ(GenerateRulerSamples(Inputs(), FitTask("niah_single_1"), 128, 1, 42, &tok, &out).code(),
            Status::Code::kInvalidInput);
  const Status st = GenerateRulerSamples(Inputs(), FitTask("niah_single_1"), 160, 1, 42, &tok, &out);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("the smallest prompt"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace evalrun
