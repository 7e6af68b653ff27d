// RULER's builders at fixed sizes, byte for byte against RULER's Python
// generators (how the expected values were made: ruler_tasks_fixture.h): a
// sample of every family by its sha256, and tiny prompts in full.
#include "evals/benchmarks/ruler/ruler_builders.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "evals/base/sha256.h"
#include "tests/benchmarks/ruler/ruler_tasks_fixture.h"

namespace evalrun {
namespace {

using ruler_testing::BuildFixture;
using ruler_testing::Fresh;
using ruler_testing::Inputs;
using ruler_testing::Task;

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

}  // namespace
}  // namespace evalrun
