// Tests for the IFEval checkers (scorers/ifeval/ifeval_checkers.h), strict/loose
// evaluation (scorers/ifeval/ifeval_eval.h) and the Python-semantics helpers under
// them (scorers/ifeval/ifeval_py_regex.h, ifeval_py_json.h, ifeval_text_util.h,
// ifeval_nltk_tokenize.h; scorers/py_unicode.h has its own tests in
// tests/engine/py_unicode_test.cc).
//
// Every expected verdict in kCases was produced by Google's official checker
// (google-research instruction_following_eval @ 4c42994, run locally with
// NLTK 3.8, langdetect 1.0.9 with DetectorFactory.seed = 0, and the English
// Punkt model of shared/datasets/punkt-english); see
// tests/fixtures/ifeval/README.md for how that run is set up.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scorers/ifeval/ifeval_checkers.h"
#include "scorers/ifeval/ifeval_eval.h"
#include "scorers/ifeval/ifeval_nltk_tokenize.h"
#include "scorers/ifeval/ifeval_py_json.h"
#include "scorers/ifeval/ifeval_py_regex.h"
#include "scorers/ifeval/ifeval_text_util.h"
#include "scorers/ifeval/langdetect.h"
#include "scorers/punkt.h"
#include "tests/support/jsonl_file.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

// Loaded once for the whole file; a missing data directory fails the tests.
class IfevalResourcesEnv {
 public:
  static const IfevalResources& Get() {
    static IfevalResourcesEnv* env = new IfevalResourcesEnv();
    EXPECT_TRUE(env->status_.ok()) << env->status_.ToString();
    return env->res_;
  }

 private:
  IfevalResourcesEnv() {
    status_ = PunktModel::Load(testing::DatasetsDir() + "/punkt-english", &punkt_);
    if (status_.ok()) status_ = LangDetector::Load(testing::DatasetsDir() + "/langdetect", &lang_);
    res_.punkt = punkt_.get();
    res_.lang = lang_.get();
  }
  Status status_;
  std::unique_ptr<PunktModel> punkt_;
  std::unique_ptr<LangDetector> lang_;
  IfevalResources res_;
};

std::unique_ptr<const IfevalPrompt> MustCompile(const std::vector<std::string>& ids,
                                                const std::vector<std::string>& kwargs_json,
                                                int64_t key = 1) {
  IfevalPromptSpec spec;
  spec.key = key;
  spec.prompt = "the prompt";
  spec.instruction_ids = ids;
  for (const std::string& k : kwargs_json) spec.kwargs.push_back(nlohmann::json::parse(k));
  std::unique_ptr<const IfevalPrompt> p;
  const Status st = IfevalPrompt::Compile(spec, &p);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return p;
}

Status CompileStatus(const std::string& id, const std::string& kwargs_json) {
  IfevalPromptSpec spec;
  spec.key = 7;
  spec.instruction_ids = {id};
  spec.kwargs = {nlohmann::json::parse(kwargs_json)};
  std::unique_ptr<const IfevalPrompt> p;
  return IfevalPrompt::Compile(spec, &p);
}

struct Case {
  const char* id;
  const char* kwargs;
  const char* response;
  bool strict;
  bool loose;
};

// (instruction, kwargs, response) -> the official strict and loose verdicts.
// At least one passing and one failing response per instruction id; the last
// rows pass loosely only (a first or last line breaks them).
const Case kCases[] = {
    {"keywords:existence", R"({"keywords": ["apple", "Pie"]})", "I baked an APPLE pie.", true, true},
    {"keywords:existence", R"({"keywords": ["apple", "pie"]})", "I baked an apple tart.", false, false},
    {"keywords:frequency", R"({"keyword": "cat", "frequency": 3, "relation": "at least"})", "Cat, cats and a catalogue.", true, true},
    {"keywords:frequency", R"({"keyword": "cat", "frequency": 3, "relation": "less than"})", "Cat, cats and a catalogue.", false, false},
    {"keywords:frequency", R"({"keyword": " dog ", "frequency": 2, "relation": "less than"})", "A dog.", true, true},
    {"keywords:forbidden_words", R"({"forbidden_words": ["cat", "dog"]})", "Cats and hotdogs are fine.", true, true},
    {"keywords:forbidden_words", R"({"forbidden_words": ["cat", "dog"]})", "My Dog is here.", false, false},
    {"keywords:letter_frequency", R"({"letter": "a", "let_frequency": 3, "let_relation": "at least"})", "A banana", true, true},
    {"keywords:letter_frequency", R"({"letter": "a", "let_frequency": 3, "let_relation": "less than"})", "A banana", false, false},
    {"keywords:letter_frequency", R"({"letter": "#", "let_frequency": 2, "let_relation": "at least"})", "#one #two", true, true},
    {"language:response_language", R"({"language": "de"})", "Die Katze schläft auf dem Sofa und der Hund bellt laut im Garten.", true, true},
    {"language:response_language", R"({"language": "de"})", "The cat sleeps on the sofa and the dog barks loudly in the garden.", false, false},
    {"language:response_language", R"({"language": "ru"})", "Это очень хороший день для прогулки в парке с друзьями.", true, true},
    {"language:response_language", R"({"language": "en"})", "12345 !!!", true, true},
    {"length_constraints:number_sentences", R"({"num_sentences": 3, "relation": "less than"})", "Dr. Smith arrived. He left.", true, true},
    {"length_constraints:number_sentences", R"({"num_sentences": 3, "relation": "at least"})", "Dr. Smith arrived. He left.", false, false},
    {"length_constraints:number_paragraphs", R"({"num_paragraphs": 3})", "One.\n***\nTwo.\n***\nThree.", true, true},
    {"length_constraints:number_paragraphs", R"({"num_paragraphs": 3})", "One.\n***\n***\nTwo.\n***\nThree.", false, false},
    {"length_constraints:number_paragraphs", R"({"num_paragraphs": 2})", "***\nOne.\n***\nTwo.\n***", true, true},
    {"length_constraints:number_words", R"({"num_words": 5, "relation": "less than"})", "Don't stop_me now, café!", false, false},
    {"length_constraints:number_words", R"({"num_words": 5, "relation": "at least"})", "Don't stop_me now, café!", true, true},
    {"length_constraints:nth_paragraph_first_word", R"({"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "Then"})", "First part.\n\n\"Then, the second.\"", true, true},
    {"length_constraints:nth_paragraph_first_word", R"({"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"})", "\n\nFirst part.\n\nThen the second.", false, true},
    {"length_constraints:nth_paragraph_first_word", R"({"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"})", "First part.\n\nNow the second.", false, false},
    {"detectable_content:number_placeholders", R"({"num_placeholders": 2})", "Dear [name], see [date].", true, true},
    {"detectable_content:number_placeholders", R"({"num_placeholders": 2})", "Dear [name\n], see.", false, false},
    {"detectable_content:postscript", R"({"postscript_marker": "P.S."})", "Body.\n\np. s. see you", true, true},
    {"detectable_content:postscript", R"({"postscript_marker": "P.S."})", "Body.\n\nPS see you", false, false},
    {"detectable_content:postscript", R"({"postscript_marker": "P.P.S"})", "Body.\nP.P.S. one more", true, true},
    {"detectable_content:postscript", R"({"postscript_marker": "P.P.S"})", "Body.\nP.S. just one", false, false},
    {"detectable_format:number_bullet_lists", R"({"num_bullets": 3})", "* one\n* two\n- three\n**bold** line", true, true},
    {"detectable_format:number_bullet_lists", R"({"num_bullets": 3})", "* one\n* two", false, false},
    {"detectable_format:constrained_response", R"({})", "  My answer is maybe. ", true, true},
    {"detectable_format:constrained_response", R"({})", "My answer is Yes.", false, false},
    {"detectable_format:number_highlighted_sections", R"({"num_highlights": 2})", "*one* and **two**", true, true},
    {"detectable_format:number_highlighted_sections", R"({"num_highlights": 2})", "**two** and * *", false, false},
    {"detectable_format:multiple_sections", R"({"section_spliter": "Section", "num_sections": 2})", "Section 1\nA\nSection 2\nB", true, true},
    {"detectable_format:multiple_sections", R"({"section_spliter": "SECTION", "num_sections": 2})", "Section 1\nA\nSection 2\nB", false, false},
    {"detectable_format:json_format", R"({})", "```json\n{\"a\": NaN, \"b\": [1, 2]}\n```", true, true},
    {"detectable_format:json_format", R"({})", "Here: {\"a\": 1}", false, false},
    {"detectable_format:json_format", R"({})", "{'a': 1}", false, false},
    {"detectable_format:title", R"({})", "<<A Title>>\nText", true, true},
    {"detectable_format:title", R"({})", "<<  >>\n<<\nx>>", false, false},
    {"combination:two_responses", R"({})", "First answer.\n******\nSecond answer.", true, true},
    {"combination:two_responses", R"({})", "Same.\n******\nSame.", false, false},
    {"combination:two_responses", R"({})", "A\n******\n\n******\nB", false, false},
    {"combination:repeat_prompt", R"({"prompt_to_repeat": "Write a poem."})", "  write a POEM. Roses are red.", true, true},
    {"combination:repeat_prompt", R"({"prompt_to_repeat": "Write a poem."})", "Sure! Write a poem.", false, false},
    {"startend:end_checker", R"({"end_phrase": "Any other questions?"})", "Done. ANY other questions?\"  ", true, true},
    {"startend:end_checker", R"({"end_phrase": "Any other questions?"})", "Any other questions? Bye.", false, false},
    {"change_case:capital_word_frequency", R"({"capital_frequency": 3, "capital_relation": "at least"})", "I DON'T KNOW.", true, true},
    {"change_case:capital_word_frequency", R"({"capital_frequency": 3, "capital_relation": "less than"})", "I DON'T KNOW.", false, false},
    {"change_case:capital_word_frequency", R"({"capital_frequency": 2, "capital_relation": "at least"})", "U.S.A. and NASA-X are big.", true, true},
    {"change_case:english_capital", R"({})", "THIS IS AN ENGLISH SENTENCE ABOUT THE WEATHER TODAY.", true, true},
    {"change_case:english_capital", R"({})", "THIS IS AN English SENTENCE.", false, false},
    {"change_case:english_capital", R"({})", "DIE KATZE SCHLÄFT AUF DEM SOFA UND DER HUND BELLT LAUT.", false, false},
    {"change_case:english_capital", R"({})", "YES", false, false},
    {"change_case:english_capital", R"({})", "123 !!!", false, false},
    {"change_case:english_lowercase", R"({})", "this is an english sentence about the weather today.", true, true},
    {"change_case:english_lowercase", R"({})", "this is an English sentence.", false, false},
    {"punctuation:no_comma", R"({})", "No commas here. Only dots.", true, true},
    {"punctuation:no_comma", R"({})", "One, two.", false, false},
    {"punctuation:no_comma", R"({})", "Full-width， comma is not a comma.", true, true},
    {"startend:quotation", R"({})", " \"Wrapped.\" \n", true, true},
    {"startend:quotation", R"({})", "\"", false, false},
    {"startend:quotation", R"({})", "\"Not closed.", false, false},
    {"startend:quotation", R"({})", "Sure, here it is:\n\"Wrapped in quotes.\"", false, true},
    {"startend:end_checker", R"({"end_phrase": "Is there anything else I can help with?"})", "Answer.\nIs there anything else I can help with?\n(Note: I ended as asked.)", false, true},
    {"detectable_format:json_format", R"({})", "Here is the JSON:\n{\"name\": \"x\"}", false, true},
    {"punctuation:no_comma", R"({})", "Sure, here you go:\nNo commas at all here\nThanks, bye", false, true},
    {"length_constraints:number_words", R"({"num_words": 4, "relation": "less than"})", "Sure! Here is my long intro line with many words\nShort answer.", false, true},
    {"detectable_format:number_bullet_lists", R"({"num_bullets": 2})", "Here are two:\n* a\n* b\n- end note", false, true},
};

TEST(IfevalCheckersTest, EveryCaseMatchesTheOfficialVerdict) {
  const IfevalResources& res = IfevalResourcesEnv::Get();
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.id) + " " + c.kwargs + " on \"" + c.response + "\"");
    auto p = MustCompile({c.id}, {c.kwargs});
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->EvaluateStrict(res, c.response).follow_list, std::vector<bool>{c.strict});
    EXPECT_EQ(p->EvaluateLoose(res, c.response).follow_list, std::vector<bool>{c.loose});
  }
}

TEST(IfevalCheckersTest, EveryRegisteredIdHasAPassingAndAFailingCase) {
  EXPECT_EQ(IfevalInstructionIds().size(), 25u);
  for (const std::string& id : IfevalInstructionIds()) {
    bool pass = false, fail = false;
    for (const Case& c : kCases) {
      if (id != c.id) continue;
      pass = pass || c.strict;
      fail = fail || !c.strict;
    }
    EXPECT_TRUE(pass && fail) << id;
  }
}

TEST(IfevalCheckersTest, LooseOnlyPassesAreCovered) {
  int loose_only = 0;
  for (const Case& c : kCases) loose_only += (!c.strict && c.loose);
  EXPECT_GE(loose_only, 6);
}

TEST(IfevalEvalTest, BlankResponseFailsEveryInstruction) {
  const IfevalResources& res = IfevalResourcesEnv::Get();
  // punctuation:no_comma alone would pass "  \n"; upstream requires response.strip().
  auto p = MustCompile({"punctuation:no_comma", "startend:quotation"}, {"{}", "{}"});
  const IfevalVerdict strict = p->EvaluateStrict(res, " \n\t ");
  EXPECT_FALSE(strict.follow_all);
  EXPECT_EQ(strict.follow_list, (std::vector<bool>{false, false}));
  EXPECT_EQ(p->EvaluateLoose(res, "").follow_list, (std::vector<bool>{false, false}));
}

TEST(IfevalEvalTest, FollowAllIsTheConjunction) {
  const IfevalResources& res = IfevalResourcesEnv::Get();
  auto p = MustCompile({"punctuation:no_comma", "keywords:existence"}, {"{}", R"({"keywords": ["sun"]})"});
  EXPECT_TRUE(p->EvaluateStrict(res, "The sun rises").follow_all);
  const IfevalVerdict v = p->EvaluateStrict(res, "The sun, it rises");
  EXPECT_FALSE(v.follow_all);
  EXPECT_EQ(v.follow_list, (std::vector<bool>{false, true}));
}

TEST(IfevalEvalTest, LooseVariantsInUpstreamOrder) {
  const std::vector<std::string> v = IfevalLooseVariants("*a*\n b \n c*");
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0], "*a*\n b \n c*");
  EXPECT_EQ(v[1], "a\n b \n c");
  EXPECT_EQ(v[2], "b \n c*");
  EXPECT_EQ(v[3], "*a*\n b");
  EXPECT_EQ(v[4], "b");
  EXPECT_EQ(v[5], "b \n c");
  EXPECT_EQ(v[6], "a\n b");
  EXPECT_EQ(v[7], "b");
  // One line: "\n".join(r[1:]) and "\n".join(r[:-1]) are both empty.
  const std::vector<std::string> one = IfevalLooseVariants("only *line*");
  EXPECT_EQ(one[1], "only line");
  EXPECT_EQ(one[2], "");
  EXPECT_EQ(one[3], "");
  EXPECT_EQ(one[4], "");
}

TEST(IfevalEvalTest, NullKwargsAreIgnoredButFalsyValuesAreKept) {
  const IfevalResources& res = IfevalResourcesEnv::Get();
  // The Hugging Face layout: every argument name, null where unused.
  auto p = MustCompile({"detectable_format:number_highlighted_sections"},
                       {R"({"num_highlights": 2, "relation": null, "num_words": null,
                            "keywords": null, "first_word": null})"});
  EXPECT_TRUE(p->EvaluateStrict(res, "*a* and *b*").follow_all);
  EXPECT_FALSE(p->EvaluateStrict(res, "*a* only").follow_all);
  // frequency 0 stays 0 (lm-evaluation-harness would drop it and draw one).
  auto zero = MustCompile({"keywords:frequency"},
                          {R"({"keyword": "x", "frequency": 0, "relation": "less than"})"});
  EXPECT_FALSE(zero->EvaluateStrict(res, "no match here").follow_all);
  // An instruction without arguments accepts an all-null object.
  auto none = MustCompile({"punctuation:no_comma"}, {R"({"num_words": null})"});
  EXPECT_TRUE(none->EvaluateStrict(res, "fine").follow_all);
}

TEST(IfevalEvalTest, RepeatPromptUsesPromptToRepeatNotThePromptText) {
  const IfevalResources& res = IfevalResourcesEnv::Get();
  // evaluation_lib's build_description(prompt=...) never fires: no registered
  // instruction has a "prompt" argument. The spec's prompt is "the prompt".
  auto p = MustCompile({"combination:repeat_prompt"}, {R"({"prompt_to_repeat": "Tell me a joke."})"});
  EXPECT_TRUE(p->EvaluateStrict(res, "Tell me a joke. Why did the chicken...").follow_all);
  EXPECT_FALSE(p->EvaluateStrict(res, "the prompt. Tell me a joke.").follow_all);
  EXPECT_EQ(p->prompt(), "the prompt");
}

TEST(IfevalEvalTest, InvalidSpecsNamePromptInstructionAndArgument) {
  EXPECT_EQ(CompileStatus("keywords:frequencies", "{}").message(),
            "prompt 7: instruction 1: unknown instruction id \"keywords:frequencies\" "
            "(did you mean \"keywords:frequency\"?)");
  EXPECT_EQ(CompileStatus("keywords:frequency",
                          R"({"keyword": "a", "frequency": 2, "relation": "more than"})")
                .message(),
            "prompt 7: instruction 1: instruction \"keywords:frequency\": argument \"relation\": "
            "expected \"less than\" or \"at least\", got \"more than\"");
  EXPECT_EQ(CompileStatus("keywords:frequency", R"({"keyword": "a", "relation": "at least"})").message(),
            "prompt 7: instruction 1: instruction \"keywords:frequency\": argument \"frequency\": "
            "missing (upstream would draw a random value; evalrun requires it)");
  EXPECT_EQ(CompileStatus("detectable_format:number_bullet_lists", R"({"num_bulets": 3})").message(),
            "prompt 7: instruction 1: instruction \"detectable_format:number_bullet_lists\": "
            "argument \"num_bulets\": does not take it (did you mean \"num_bullets\"?)");
  EXPECT_EQ(CompileStatus("punctuation:no_comma", R"({"x": 1})").message(),
            "prompt 7: instruction 1: instruction \"punctuation:no_comma\": argument \"x\": "
            "takes no arguments");
  EXPECT_EQ(CompileStatus("language:response_language", R"({"language": "xx"})").code(),
            Status::Code::kInvalidInput);
  EXPECT_EQ(CompileStatus("detectable_content:number_placeholders", R"({"num_placeholders": -1})")
                .code(),
            Status::Code::kInvalidInput);
  EXPECT_EQ(CompileStatus("combination:repeat_prompt", R"({"prompt_to_repeat": ""})").code(),
            Status::Code::kInvalidInput);
  EXPECT_EQ(CompileStatus("keywords:existence", R"({"keywords": "apple"})").code(),
            Status::Code::kInvalidInput);
  EXPECT_EQ(CompileStatus("keywords:existence", R"j({"keywords": ["(?=x)"]})j").message(),
            "prompt 7: instruction 1: instruction \"keywords:existence\": argument \"keywords\": "
            "regular expression \"(?=x)\": the group \"(?=\" (look-around, back-reference, "
            "conditional or flag) (evalrun matches with RE2, which cannot express it)");
  EXPECT_EQ(CompileStatus("length_constraints:nth_paragraph_first_word",
                          R"({"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "a"})")
                .code(),
            Status::Code::kInvalidInput);
  EXPECT_EQ(CompileStatus("keywords:letter_frequency",
                          R"({"letter": "ab", "let_frequency": 1, "let_relation": "at least"})")
                .code(),
            Status::Code::kInvalidInput);

  IfevalPromptSpec spec;
  spec.key = 9;
  spec.instruction_ids = {"punctuation:no_comma", "startend:quotation"};
  spec.kwargs = {nlohmann::json::object()};
  std::unique_ptr<const IfevalPrompt> p;
  EXPECT_EQ(IfevalPrompt::Compile(spec, &p).message(),
            "prompt 9: 2 instruction ids but 1 kwargs objects");
}

TEST(IfevalEvalTest, ParsesAnInputDataRow) {
  const auto row = nlohmann::json::parse(
      R"({"key": 1000, "prompt": "Write.", "instruction_id_list": ["punctuation:no_comma"],
          "kwargs": [{}]})");
  IfevalPromptSpec spec;
  ASSERT_TRUE(ParseIfevalPromptSpec(row, "input_data.jsonl:1", &spec).ok());
  EXPECT_EQ(spec.key, 1000);
  EXPECT_EQ(spec.prompt, "Write.");
  EXPECT_EQ(spec.instruction_ids, std::vector<std::string>{"punctuation:no_comma"});
  ASSERT_EQ(spec.kwargs.size(), 1u);
  EXPECT_EQ(ParseIfevalPromptSpec(nlohmann::json::parse(R"({"key": "x"})"), "f:2", &spec).message(),
            "f:2: key: expected an integer");
}

TEST(IfevalEvalTest, AccuracyMatchesPrintReport) {
  const IfevalResources& res = IfevalResourcesEnv::Get();
  auto a = MustCompile({"punctuation:no_comma", "keywords:existence"},
                       {"{}", R"({"keywords": ["sun"]})"});
  auto b = MustCompile({"punctuation:no_comma"}, {"{}"});
  auto c = MustCompile({"startend:quotation"}, {"{}"});
  IfevalAccuracy acc;
  acc.Add(a->instruction_ids(), a->EvaluateStrict(res, "The sun, it rises"));  // [F, T]
  acc.Add(b->instruction_ids(), b->EvaluateStrict(res, "No comma"));           // [T]
  acc.Add(c->instruction_ids(), c->EvaluateStrict(res, "\"quoted\""));         // [T]
  EXPECT_EQ(acc.prompt_total, 3);
  EXPECT_EQ(acc.prompt_correct, 2);
  EXPECT_EQ(acc.instruction_total, 4);
  EXPECT_EQ(acc.instruction_correct, 3);
  EXPECT_DOUBLE_EQ(acc.PromptLevel(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(acc.InstructionLevel(), 0.75);
  EXPECT_EQ(acc.by_category.at("punctuation").total, 2);
  EXPECT_EQ(acc.by_category.at("punctuation").followed, 1);
  EXPECT_EQ(acc.by_instruction.at("keywords:existence").followed, 1);
  EXPECT_EQ(acc.by_instruction.at("startend:quotation").total, 1);
  EXPECT_EQ(IfevalAccuracy().PromptLevel(), 0.0);
}

TEST(IfevalEvalTest, EveryPromptOfTheDatasetCompiles) {
  int rows = 0, instructions = 0;
  for (const nlohmann::json& row : testing::ReadJsonLines(testing::DatasetsDir() + "/ifeval/input_data.jsonl")) {
    IfevalPromptSpec spec;
    ASSERT_TRUE(ParseIfevalPromptSpec(row, "input_data.jsonl", &spec).ok());
    std::unique_ptr<const IfevalPrompt> p;
    const Status st = IfevalPrompt::Compile(spec, &p);
    EXPECT_TRUE(st.ok()) << st.ToString();
    ++rows;
    instructions += static_cast<int>(spec.instruction_ids.size());
  }
  EXPECT_EQ(rows, 541);
  EXPECT_EQ(instructions, 834);
}

// --- helpers: Python semantics -------------------------------------------

TEST(IfevalTextUtilTest, WordsAreRunsOfPythonWordCharacters) {
  using namespace ifeval;
  EXPECT_EQ(CountWords("Don't stop_me now, café!"), 5);
  EXPECT_EQ(CountWords("١٢٣ Ⅻ ab\u0301c"), 4);  // Arabic digits, a Roman numeral; a combining mark splits
  EXPECT_EQ(CountWords("日本語のテキスト"), 1);
  EXPECT_EQ(CountWords(""), 0);
}

TEST(IfevalTextUtilTest, PythonJsonLoads) {
  using namespace ifeval;
  EXPECT_TRUE(IsPythonJson(R"({"a": [1, -2.5e3, NaN, Infinity, -Infinity, null, true, "\u00e9\ud800"]})"));
  EXPECT_TRUE(IsPythonJson(" 42 "));
  EXPECT_TRUE(IsPythonJson("\"str\""));
  EXPECT_FALSE(IsPythonJson("{'a': 1}"));
  EXPECT_FALSE(IsPythonJson("[1,]"));
  EXPECT_FALSE(IsPythonJson("01"));
  EXPECT_FALSE(IsPythonJson("1."));
  EXPECT_FALSE(IsPythonJson("nan"));
  EXPECT_FALSE(IsPythonJson("\"tab\there\""));  // a raw control character
  EXPECT_FALSE(IsPythonJson("{} {}"));
  EXPECT_FALSE(IsPythonJson("\xEF\xBB\xBF{}"));  // BOM
  EXPECT_FALSE(IsPythonJson(""));
  EXPECT_TRUE(IsPythonJson(std::string(4300, '7')));
  EXPECT_FALSE(IsPythonJson(std::string(4301, '7')));  // int(): "Exceeds the limit (4300 digits)"
}

TEST(IfevalTextUtilTest, TreebankTokenizerMatchesNltk) {
  using namespace ifeval;
  // Expected tokens from nltk 3.8 NLTKWordTokenizer().tokenize.
  EXPECT_EQ(NltkTreebankTokenize("I DON'T KNOW, CANNOT SAY."),
            (std::vector<std::string>{"I", "DO", "N'T", "KNOW", ",", "CAN", "NOT", "SAY", "."}));
  EXPECT_EQ(NltkTreebankTokenize("\"Hi,\" she said... 'tis (U.S.A.) --ok"),
            (std::vector<std::string>{"``", "Hi", ",", "''", "she", "said", "...", "'t", "is", "(",
                                      "U.S.A.", ")", "--", "ok"}));
  EXPECT_EQ(NltkTreebankTokenize("Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\nThanks."),
            (std::vector<std::string>{"Good", "muffins", "cost", "$", "3.88", "in", "New", "York.",
                                      "Please", "buy", "me", "two", "of", "them.", "Thanks", "."}));
}

TEST(IfevalTextUtilTest, PatternsFollowPythonRe) {
  using namespace ifeval;
  std::unique_ptr<const PyPattern> p;
  ASSERT_TRUE(PyPattern::Compile("dog", true, false, &p).ok());
  EXPECT_TRUE(p->is_literal());
  EXPECT_EQ(p->CountAll("Dog dogs DOGGY hotdog"), 4);
  EXPECT_FALSE(p->SearchBetweenWordBoundaries("dogs hotdog dog_x"));
  EXPECT_TRUE(p->SearchBetweenWordBoundaries("hotdog, Dog."));
  ASSERT_TRUE(PyPattern::Compile("is", true, false, &p).ok());
  EXPECT_TRUE(p->Search("ıſ"));  // Python's extra IGNORECASE pairs: i/ı, s/ſ
  ASSERT_TRUE(PyPattern::Compile("café", true, false, &p).ok());
  EXPECT_TRUE(p->SearchBetweenWordBoundaries("CAFÉ!"));
  EXPECT_FALSE(p->SearchBetweenWordBoundaries("cafés"));  // é is a word character
  ASSERT_TRUE(PyPattern::Compile(R"(colou?r\s\d)", true, false, &p).ok());
  EXPECT_FALSE(p->is_literal());
  EXPECT_EQ(p->CountAll("Color\u00a01, colour ٣, color x"), 2);
  std::string re2;
  ASSERT_TRUE(TranslatePyRegex(R"(a{,2}[\d\]x]$)", false, &re2).ok());
  EXPECT_EQ(re2, R"(a{0,2}[\p{Nd}\x{5d}x](?:\n?\z))");
  EXPECT_FALSE(TranslatePyRegex(R"((a)\1)", false, &re2).ok());
  EXPECT_FALSE(TranslatePyRegex(R"(\bword)", false, &re2).ok());
}

}  // namespace
}  // namespace evalrun
