// RULER task generation: templates, draws and structure against RULER's
// Python generators (NVIDIA/RULER scripts/data/synthetic/*.py). The expected
// hashes and strings were produced by running RULER's generator code
// (niah.py, variable_tracking.py, common_words_extraction.py,
// freq_words_extraction.py, qa.py) under CPython 3.11 with random.seed(42),
// nltk 3.8's PunktSentenceTokenizer built from datasets/punkt-english, and
// Debian's numpy 1.24.2 (np.random.seed(42)), e.g. the vt case with
// variable_tracking.py's own generate_input_output and randomize_icl.
#include "evals/parts/ruler_tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "evals/parts/ruler_builders.h"
#include "evals/parts/ruler_inputs.h"
#include "evals/base/np_random.h"
#include "evals/base/py_random.h"
#include "evals/base/sha256.h"
#include "tests/support/counting_tokenizer.h"
#include "tests/test_paths.h"

namespace evalrun {
namespace {

// Counts ceil(len/5) per whitespace-separated word plus one per newline;
// CountChat adds 9 for the chat template. Not additive across joins.
class FakeTokenizer : public testing::CountingTokenizer {
 public:
  FakeTokenizer() : CountingTokenizer(Words, [](std::string_view content) { return Words(content) + 9; }) {}
  static int Words(std::string_view t) {
    int n = 0;
    size_t i = 0;
    while (i < t.size()) {
      if (t[i] == '\n') {
        ++n;
        ++i;
      } else if (t[i] == ' ') {
        ++i;
      } else {
        size_t j = i;
        while (j < t.size() && t[j] != ' ' && t[j] != '\n') ++j;
        n += static_cast<int>((j - i + 4) / 5);
        i = j;
      }
    }
    return n;
  }
};

std::string RulerDir() { return testing::DatasetsDir() + "/ruler"; }

// The real inputs, loaded once (all tasks; qa files are absent there).
const RulerInputs& Inputs() {
  static const RulerInputs* inputs = [] {
    auto* in = new RulerInputs;
    const Status st = LoadRulerInputs(RulerDir(), RulerLoadOptions{}, in);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return in;
  }();
  return *inputs;
}

RulerTaskConfig Task(const std::string& name) {
  RulerTaskConfig t;
  EXPECT_TRUE(RulerTaskByName(name, &t).ok()) << name;
  return t;
}

// The task with the fit profile (the generation tests below are fit's;
// tests/ruler_nvidia_test.cc has the nvidia profile's).
RulerTaskConfig FitTask(const std::string& name) {
  RulerTaskConfig t = Task(name);
  t.profile = RulerProfile::kFit;
  return t;
}

// One builder at a fixed haystack size, outside the length search.
class BuildFixture {
 public:
  BuildFixture(const RulerInputs* in, RulerTaskConfig task, int length)
      : task_(std::move(task)), essay_(in) {
    ctx_.inputs = in;
    ctx_.task = &task_;
    ctx_.length = length;
    ctx_.seed = 42;
    ctx_.essay = &essay_;
    if (task_.family == RulerFamily::kCommonWords) {
      ctx_.cwe_pool = in->cwe_words;
      PyRandom(42).Shuffle(&ctx_.cwe_pool);
    }
  }
  BuildFixture(const BuildFixture&) = delete;
  RulerBuildContext* ctx() { return &ctx_; }

  // Builds sample `index` at n from `start`; returns the text.
  std::string Build(int n, const RulerStreams& start, RulerBuilt* built = nullptr, bool icl = false,
                    int index = 0) {
    std::unique_ptr<RulerSampleBuilder> b;
    Status st = MakeRulerBuilder(&ctx_, index, start, icl, &b);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return "";
    std::string text;
    st = b->Build(n, &text);
    EXPECT_TRUE(st.ok()) << st.ToString();
    int64_t proxy = 0;
    EXPECT_TRUE(b->ProxyBytes(n, &proxy).ok());
    proxy_ = proxy;
    if (built) *built = b->Result(n);
    return text;
  }
  int64_t last_proxy() const { return proxy_; }

 private:
  RulerTaskConfig task_;
  RulerEssayCache essay_;
  RulerBuildContext ctx_;
  int64_t proxy_ = 0;
};

RulerStreams Fresh() { return RulerStreams{PyRandom(42), NpRandom(42)}; }

size_t CountOf(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size()))
    ++n;
  return n;
}

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
  const std::string dir = ::testing::TempDir() + "/ruler_sha_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/squad.json") << "{\"data\": []}";
  RulerLoadOptions opts;
  opts.tasks = {"qa_1"};
  RulerInputs in;
  const Status st = LoadRulerInputs(dir, opts, &in);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_NE(st.message().find("expected " + std::string(kRulerSquadSha256)), std::string::npos)
      << st.message();
  std::filesystem::remove_all(dir);
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
// Builders at fixed sizes against RULER's Python code.

TEST(RulerBuilders, MatchRulersPythonGenerators) {
  struct Case {
    const char* task;
    int n;
    const char* sha256;
    size_t bytes;
    std::vector<std::string> gold;
  };
  const Case cases[] = {
      {"niah_single_1",
       20,
       "8afbd68e492ee6ad5a1ac55791c476f5e542764d52cd3a9e4c47e57a471d0ea8",
       2157,
       {"2867825"}},
      {"niah_multikey_2",
       12,
       "ba1f75f3ff0e972421d4fa027dc8a196ee9700e7b0642c5af009131046678e21",
       1156,
       {"2867825"}},
      {"niah_multikey_3",
       7,
       "1bdd3f7e4126e2eb1d5d014e0244500f367c143144c944460de228e6b5cdd3c3",
       1240,
       {"23b8c1e9-3924-46de-beb1-3b9046685257"}},
      {"niah_single_3",
       400,
       "b2296c13ca2a142de5e4f20d8cbeab76f3c4fb525d9fe81a198701cd30e7c8ad",
       2714,
       {"46685257-bdd6-40fb-8667-1ad11c80317f"}},
      {"niah_multikey_1",
       1500,
       "afb74904d7162fe0d6826d61a8c850c3086be923d5370a6f0623f348a03e980b",
       9339,
       {"2867825"}},
      {"niah_multivalue",
       700,
       "1a369a74d8e184f6ce557bab4dcf7461750b1e851fe1abd2e246e743f075bacd",
       4743,
       {"2867825", "1419610", "5614226", "5108603"}},
      {"niah_multiquery",
       900,
       "b7e81646e2bd4491c523f28d5f6aa3ef29a8f35b33c1cb8d298358b380f322a2",
       5986,
       {"2867825", "2719583", "4744854", "5614226"}},
      {"fwe",
       300,
       "32e72f45ae621e96f4b9742397ab0851bafca7a2f84dd1a1a83676ac897dcc66",
       1784,
       {"vqwpsb", "gywwje", "sbkokf"}},
  };
  for (const Case& c : cases) {
    BuildFixture f(&Inputs(), Task(c.task), 4096);
    RulerBuilt built;
    const std::string text = f.Build(c.n, Fresh(), &built);
    EXPECT_EQ(text.size(), c.bytes) << c.task;
    EXPECT_EQ(Sha256Hex(text), c.sha256) << c.task << "\n" << text.substr(0, 2000);
    EXPECT_EQ(built.gold, c.gold) << c.task;
  }
  // cwe at >= 4096 (example 40 words x10/x3, question x30/x3) and < 4096
  // (20 words x3/x1, question x6/x1).
  {
    BuildFixture f(&Inputs(), Task("cwe"), 8192);
    RulerBuilt built;
    const std::string text = f.Build(60, Fresh(), &built);
    EXPECT_EQ(Sha256Hex(text), "c13729d6b633ab1fdbce921b09751d4ecc9bce2170bd91fd993962532a56e4ad");
    EXPECT_EQ(text.size(), 8855u);
    EXPECT_EQ(built.gold,
              (std::vector<std::string>{"thermostat", "acceptance", "tin", "jaw", "blackboard",
                                        "negotiation", "programme", "wend", "drinking", "garlic"}));
    EXPECT_EQ(f.last_proxy(), static_cast<int64_t>(text.size()));  // the cwe proxy is exact
  }
  {
    BuildFixture f(&Inputs(), Task("cwe"), 2048);
    RulerBuilt built;
    const std::string text = f.Build(25, Fresh(), &built);
    EXPECT_EQ(Sha256Hex(text), "759c3ff0c672315e799c00685460862c7ba9418eeabc4d27a7137266c46c1e84");
    EXPECT_EQ(built.gold[0], "notoriety");
    EXPECT_EQ(built.gold[9], "native");
  }
  // vt: the in-context example at 6 lines from the fresh stream, then sample
  // 0 at 30 lines from the stream after it, with the example randomised.
  {
    BuildFixture f(&Inputs(), Task("vt"), 4096);
    RulerBuilt icl;
    const std::string example = f.Build(6, Fresh(), &icl, /*icl=*/true);
    EXPECT_EQ(Sha256Hex(example),
              "db287288b835bb85f71a04fdd2a1fbd27a3e2d3be5616ad83c7c5681dc6514c7");
    EXPECT_EQ(icl.gold, (std::vector<std::string>{"QAH", "FTR", "XCK", "AFN", "AFQ"}));
    f.ctx()->vt_icl_example = example + " QAH FTR XCK AFN AFQ\n";
    RulerBuilt built;
    const std::string text = f.Build(30, icl.after, &built);
    EXPECT_EQ(Sha256Hex(text), "ba89f72f1da2c16b2c0251498d0f3d7e64075d50ca6d9bc8980b1dc52888ff39");
    EXPECT_EQ(text.size(), 4056u);
    EXPECT_EQ(built.gold, (std::vector<std::string>{"VAUSI", "EYICC", "WPUSN", "ZJOVQ", "WPSBF"}));
  }
}

TEST(RulerBuilders, ExactTinyPrompts) {
  const std::string noise =
      "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
  {  // niah_single_1, 3 lines: the singular rewrite, the needle keeps "numbers".
    BuildFixture f(&Inputs(), Task("niah_single_1"), 4096);
    EXPECT_EQ(
        f.Build(3, Fresh()),
        "A special magic number is hidden within the following text. Make sure to memorize it. "
        "I will quiz you about the number afterwards.\nOne of the special magic numbers for "
        "tenuous-thirst is: 2867825.\n" +
            noise + "\n" + noise + "\n" + noise +
            "\nWhat is the special magic number for tenuous-thirst mentioned in the provided "
            "text? The special magic number for tenuous-thirst mentioned in the provided text is");
  }
  {  // two values: plural template.
    RulerTaskConfig t = Task("niah_single_1");
    t.num_needle_v = 2;
    BuildFixture f(&Inputs(), t, 4096);
    RulerBuilt built;
    EXPECT_EQ(
        f.Build(2, Fresh(), &built),
        "Some special magic numbers are hidden within the following text. Make sure to "
        "memorize it. I will quiz you about the numbers afterwards.\nOne of the special magic "
        "numbers for tenuous-thirst is: 2867825.\n" +
            noise +
            "\nOne of the special magic "
            "numbers for tenuous-thirst is: 1419610.\n" +
            noise +
            "\nWhat are all the special "
            "magic numbers for tenuous-thirst mentioned in the provided text? The special magic "
            "numbers for tenuous-thirst mentioned in the provided text are");
    EXPECT_EQ(built.gold, (std::vector<std::string>{"2867825", "1419610"}));
  }
  {  // needle haystack, two keys queried: "k1, and k2".
    RulerTaskConfig t = Task("niah_multikey_2");
    t.num_needle_k = 2;
    t.num_needle_q = 2;
    BuildFixture f(&Inputs(), t, 4096);
    RulerBuilt built;
    EXPECT_EQ(
        f.Build(2, Fresh(), &built),
        "Some special magic numbers are hidden within the following text. Make sure to "
        "memorize it. I will quiz you about the numbers afterwards.\nOne of the special magic "
        "numbers for tenuous-thirst is: 2867825.\nOne of the special magic numbers for "
        "fretful-thumb is: 4744854.\nOne of the special magic numbers for ad hoc-turnover is: "
        "5614226.\nOne of the special magic numbers for dashing-newsprint is: 2719583.\nWhat "
        "are all the special magic numbers for tenuous-thirst, and ad hoc-turnover mentioned "
        "in the provided text? The special magic numbers for tenuous-thirst, and ad "
        "hoc-turnover mentioned in the provided text are");
    EXPECT_EQ(built.gold, (std::vector<std::string>{"2867825", "5614226"}));
  }
  {  // vt's example: the chain lines keep RULER's trailing space.
    BuildFixture f(&Inputs(), Task("vt"), 4096);
    std::string expected =
        "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n"
        "VAR QAH = 12345\n" +
        noise + "\nVAR FTR = VAR QAH \n" + noise + "\nVAR XCK = VAR FTR \n" + noise +
        "\nVAR AFN = VAR XCK \n" + noise + "\nVAR AFQ = VAR AFN \n" + noise +
        "\nQuestion: Find all variables that are assigned the value 12345 in the text above. "
        "Answer: According to the chain(s) of variable assignment in the text above, 5 variables "
        "are assigned the value 12345, they are: ";
    EXPECT_EQ(f.Build(5, Fresh(), nullptr, /*icl=*/true), expected);
  }
  {  // fwe with a 5-word vocabulary and 12 words: counts int(12 / (k^2 zeta(2))).
    RulerTaskConfig t = Task("fwe");
    t.vocab_size = 5;
    BuildFixture f(&Inputs(), t, 4096);
    RulerBuilt built;
    EXPECT_EQ(f.Build(12, Fresh(), &built),
              "Read the following coded text and track the frequency of each coded word. Find the "
              "three most frequently appeared coded words. ... ... ... qahftr ... ... ... ...\n"
              "Question: Do not provide any explanation. Please ignore the dots '....'. What are "
              "the three most frequently appeared words in the above coded text? Answer: According "
              "to the coded text above, the three most frequently appeared words are:");
    EXPECT_EQ(built.gold, (std::vector<std::string>{"qahftr", "vausie", "yiccwp"}));
  }
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
