#include "evals/run/card.h"

#include <gtest/gtest.h>

#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun {
namespace {

const char* kGood = R"({
  "name": "t", "model": {"name": "m"}, "engine": {}, "hardware": {"gpu_index": 1},
  "server": {"base_url": "http://127.0.0.1:8080/v1/", "slots": "auto", "api_key_env": "TOK"},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 7},
  "thinking": true,
  "parts": {"mmlupro": {"questions": 400, "max_tokens": 1024, "prompt": "cot-5shot", "extract": "official"},
            "ruler": {"lengths": [8192], "samples_per_task": {"vt": 5}}}
})";

std::string Err(const std::string& text) {
  Card c;
  Status st = ParseCard(text, "cards/x.json", &c);
  EXPECT_FALSE(st.ok());
  return st.message();
}

TEST(CardTest, ParsesEveryField) {
  Card c;
  ASSERT_TRUE(ParseCard(kGood, "cards/x.json", &c).ok());
  EXPECT_EQ(c.name, "t");
  EXPECT_EQ(c.server.base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(c.server.Origin(), "http://127.0.0.1:8080");
  EXPECT_EQ(c.server.PathPrefix(), "/v1");
  EXPECT_EQ(c.server.slots, 0);
  EXPECT_EQ(c.server.api_key_env, "TOK");
  EXPECT_EQ(c.request.sampling.seed, 7);
  EXPECT_TRUE(c.request.thinking);
  EXPECT_EQ(*c.hardware.gpu_index, 1);
  const PartConfig* p = c.FindPart("mmlupro");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->settings.Int("questions"), 400);
  EXPECT_EQ(p->settings.Int("max_tokens"), 1024);
  EXPECT_EQ(p->settings.String("prompt"), "cot-5shot");
  EXPECT_EQ(p->settings.String("extract"), "official");
  EXPECT_FALSE(p->settings.Has("split"));
  EXPECT_EQ(p->settings.String("split"), "test");  // the key's default
  EXPECT_EQ(c.FindPart("ruler")->settings.Counts("samples_per_task").at("vt"), 5);
  EXPECT_EQ(c.FindPart("ruler")->settings.IntList("lengths"), (std::vector<int64_t>{8192}));
  EXPECT_EQ(c.sha256.size(), 64u);
}

TEST(CardTest, WrongTypeNamesFileAndPath) {
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"mmlupro": {"max_tokens": "1k"}}})"),
            "cards/x.json: parts.mmlupro.max_tokens: expected an integer, got \"1k\"");
}

TEST(CardTest, UnknownFieldWithNearMiss) {
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"mmlupro": {"max_token": 5}}})"),
            "cards/x.json: parts.mmlupro.max_token: unknown field (did you mean \"max_tokens\"?)");
  EXPECT_EQ(Err(R"({"name": "t", "sever": {}, "server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: sever: unknown field (did you mean \"server\"?)");
}

TEST(CardTest, UnknownPartWithNearMiss) {
  std::string m = Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"mmlu-pro": {}}})");
  EXPECT_NE(m.find("parts.mmlu-pro: unknown part (did you mean \"mmlupro\"?)"), std::string::npos) << m;
}

TEST(CardTest, MissingRequiredFields) {
  EXPECT_EQ(Err(R"({"server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: name: required field is missing");
  EXPECT_EQ(Err(R"({"name": "t", "parts": {"gpqa": {}}})"), "cards/x.json: server: required field is missing");
  EXPECT_EQ(Err(R"({"name": "t", "server": {}, "parts": {"gpqa": {}}})"),
            "cards/x.json: server.base_url: required field is missing");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}})"),
            "cards/x.json: parts: required field is missing");
}

TEST(CardTest, BadValues) {
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "h:80"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: server.base_url: expected an http:// or https:// URL, got \"h:80\" "
            "(did you mean \"http://h:80\"?)");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1", "slots": 0}, "parts": {"gpqa": {}}})"),
            "cards/x.json: server.slots: expected a positive integer or \"auto\", got 0");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {"extract": "firstletter"}}})"),
            "cards/x.json: parts.gpqa.extract: unknown value \"firstletter\" (did you mean \"first-letter\"?); "
            "expected one of \"first-letter\", \"simple-evals\"");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "thinking": "no", "parts": {"gpqa": {}}})"),
            "cards/x.json: thinking: expected true, false, \"on\" or \"off\", got \"no\"");
  EXPECT_EQ(Err(R"({"name": "t", "server": {"base_url": "http://h/v1"}, "parts": {"ruler": {"lengths": [8192, "32k"]}}})"),
            "cards/x.json: parts.ruler.lengths[1]: expected an integer, got \"32k\"");
}

// A card around one server field and one part (JSON members, no braces).
std::string CardWith(const std::string& server_extra, const std::string& parts = R"("gpqa": {})",
                     const std::string& top_extra = "") {
  return R"({"name": "t", "server": {"base_url": "http://h:8080/v1")" + server_extra + "}" + top_extra +
         R"(, "parts": {)" + parts + "}}";
}

// Numbers that parse but mean nothing are refused, naming the field and the
// range (a negative timeout must not be waited for "up to -5 s").
TEST(CardTest, MeaninglessNumbersAreRefused) {
  struct Case {
    std::string card, want;
  };
  const std::vector<Case> cases = {
      {CardWith(R"(, "ready_timeout_s": -5)"), "server.ready_timeout_s: expected a number > 0 and <= 604800, got -5"},
      {CardWith(R"(, "ready_timeout_s": 0)"), "server.ready_timeout_s: expected a number > 0"},
      {CardWith(R"(, "request_timeout_base_s": -1)"), "server.request_timeout_base_s: expected a number >= 0"},
      {CardWith(R"(, "connect_timeout_s": 0)"), "server.connect_timeout_s: expected a number > 0 and <= 3600, got 0"},
      {CardWith(R"(, "stop_grace_s": -1)"), "server.stop_grace_s: expected a number >= 0 and <= 3600, got -1"},
      {CardWith(R"(, "min_decode_tps": 0)"), "server.min_decode_tps: expected a number >= 0.1"},
      {CardWith(R"(, "retries": 25)"), "server.retries: expected an integer 0..20, got 25"},
      {CardWith(R"(, "context": 0)"), "server.context: expected an integer 1..2147483647, got 0"},
      {CardWith("", R"("gpqa": {})", R"(, "load_sampling": {"threshold_pct": -5})"),
       "load_sampling.threshold_pct: expected a number > 0 and <= 100000, got -5"},
      {CardWith("", R"("gpqa": {})", R"(, "load_sampling": {"top": -1})"),
       "load_sampling.top: expected an integer 0..1000, got -1"},
      {CardWith("", R"("gpqa": {})", R"(, "load_sampling": {"interval_s": 1e9})"),
       "load_sampling.interval_s: expected a number >= 0.05 and <= 3600"},
      {CardWith("", R"("gpqa": {})", R"(, "load_sampling": {"guard_max_wait_s": 0})"),
       "load_sampling.guard_max_wait_s: expected a number > 0"},
      {CardWith("", R"("gpqa": {})", R"(, "load_sampling": {"engine_port": 70000})"),
       "load_sampling.engine_port: expected an integer 1..65535, got 70000"},
      {CardWith("", R"("gpqa": {})", R"(, "sampling": {"seed": -1})"),
       "sampling.seed: expected an integer 0..4294967294, got -1"},
      {CardWith("", R"("gpqa": {})", R"(, "sampling": {"top_k": -1})"), "sampling.top_k: expected an integer >= 0"},
      {CardWith("", R"("gpqa": {})", R"(, "sampling": {"temperature": -0.5})"),
       "sampling.temperature: expected a number >= 0 and <= 100, got -0.5"},
      {CardWith("", R"("gpqa": {})", R"(, "max_failed": -1)"), "max_failed: expected an integer >= 0, got -1"},
      {CardWith("", R"("gpqa": {})", R"(, "hardware": {"gpu_index": 99999999999})"),
       "hardware.gpu_index: expected an integer 0..1023"},
      {CardWith("", R"("gpqa": {"seed": -3})"), "parts.gpqa.seed: expected an integer 0..4294967295, got -3"},
      {CardWith("", R"("gpqa": {"questions": 0})"), "parts.gpqa.questions: expected an integer >= 1, got 0"},
      {CardWith("", R"("ifeval": {"max_tokens": 3000000000})"), "parts.ifeval.max_tokens: integer out of range"},
      {CardWith("", R"("ruler": {"lengths": []})"), "parts.ruler.lengths: expected at least one length"},
      {CardWith("", R"("ruler": {"lengths": [4096, 4096]})"), "parts.ruler.lengths[1]: 4096 is given twice"},
      {CardWith("", R"("ruler": {"samples_per_task": {"vt": 99999999999}})"),
       "parts.ruler.samples_per_task.vt: expected an integer >= 1, got 99999999999"},
      {CardWith("", R"("fit": {"contexts": [4096, -5]})"), "parts.fit.contexts[1]: each context must be 256.."},
      {CardWith("", R"("fit": {"fill": 0})"), "parts.fit.fill: expected a number > 0 and <= 1, got 0"},
  };
  for (const Case& c : cases) {
    const std::string m = Err(c.card);
    EXPECT_EQ(m.rfind("cards/x.json: ", 0), 0u) << m;
    EXPECT_NE(m.find(c.want), std::string::npos) << "want: " << c.want << "\ngot:  " << m;
  }
}

// careless values are refused naming the key and the
// value as written: a decode rate so low that every timeout overflows (each
// request then timed out at once), a name with a NUL byte (it names the job
// folder: the message was "evalrun: jobt/a"), a count beyond int64 (it was
// reported as "got -1").
TEST(CardTest, CarelessValuesAreRefusedNamingTheKeyAndTheValue) {
  struct Case {
    std::string card, want;
  };
  const std::vector<Case> cases = {
      {CardWith(R"(, "min_decode_tps": 1e-9)"),
       "cards/x.json: server.min_decode_tps: expected a number >= 0.1 and <= 1000000, got 1e-09"},
      {R"({"name": "t\u0000a", "server": {"base_url": "http://h:8080/v1"}, "parts": {"gpqa": {}}})",
       "cards/x.json: name: expected a non-empty name without '/' or control characters (it names the job folder), "
       "got \"t\\u0000a\""},
      {R"({"name": "tab\there", "server": {"base_url": "http://h:8080/v1"}, "parts": {"gpqa": {}}})",
       "cards/x.json: name: expected a non-empty name without '/' or control characters (it names the job folder), "
       "got \"tab\\there\""},
      {CardWith("", R"("mmlupro": {"questions": 18446744073709551615})"),
       "cards/x.json: parts.mmlupro.questions: expected an integer >= 1, got 18446744073709551615"},
      {CardWith("", R"("ruler": {"lengths": [4096, 18446744073709551615]})"),
       "cards/x.json: parts.ruler.lengths[1]: expected an integer, got 18446744073709551615"},
      {CardWith(R"(, "retries": 18446744073709551615)"),
       "cards/x.json: server.retries: expected an integer 0..20, got 18446744073709551615"},
  };
  for (const Case& c : cases) {
    const std::string m = Err(c.card);
    EXPECT_EQ(m, c.want);
    EXPECT_EQ(m.find("-1"), std::string::npos) << m;
  }
  Card slow;
  ASSERT_TRUE(ParseCard(CardWith(R"(, "min_decode_tps": 0.1)"), "cards/x.json", &slow).ok());
  EXPECT_EQ(slow.server.min_decode_tps, 0.1);
}

TEST(CardTest, BaseUrlIsCheckedWhole) {
  for (const auto& [url, want] : std::vector<std::pair<std::string, std::string>>{
           {"http://127.0.0.1:99999/v1", "expected a port 1..65535 after ':', got \"99999\""},
           {"http://127.0.0.1:/v1", "expected a port 1..65535 after ':', got \"\""},
           {"http://127.0.0.1:80a", "expected a port 1..65535 after ':', got \"80a\""},
           {"http://", "expected a URL with a host"},
           {"https://:8080/v1", "expected a URL with a host"},
           {"localhost:8080", "expected an http:// or https:// URL, got \"localhost:8080\" (did you mean "
                              "\"http://localhost:8080\"?)"},
           {"http://user:pw@h/v1", "expected a URL without user info"},
           {"http://h/v1?x=1", "expected a base URL without a query or fragment"},
           {"http://h /v1", "expected a URL without spaces"},
       }) {
    const std::string m = Err(R"({"name": "t", "server": {"base_url": ")" + url + R"("}, "parts": {"gpqa": {}}})");
    EXPECT_NE(m.find("cards/x.json: server.base_url: " + want), std::string::npos) << url << ": " << m;
  }
  Card c;
  ASSERT_TRUE(ParseCard(R"({"name": "t", "server": {"base_url": "http://[::1]:8080/v1/"}, "parts": {"gpqa": {}}})",
                        "cards/x.json", &c)
                  .ok());
  EXPECT_EQ(c.server.Origin(), "http://[::1]:8080");
  EXPECT_EQ(c.server.PathPrefix(), "/v1");
}

// A key given twice anywhere is an error naming it and its path (JSON
// would silently keep the last one).
TEST(CardTest, DuplicateKeysAreRefusedWithTheirPath) {
  EXPECT_EQ(Err(R"({"name": "a", "name": "b", "server": {"base_url": "http://h/v1"}, "parts": {"gpqa": {}}})"),
            "cards/x.json: name: duplicate key (given twice in one object; JSON would keep only the last)");
  EXPECT_NE(Err(CardWith(R"(, "retries": 1, "retries": 2)")).find("cards/x.json: server.retries: duplicate key"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("ruler": {"task_max_tokens": {"vt": 10, "vt": 20}})"))
                .find("cards/x.json: parts.ruler.task_max_tokens.vt: duplicate key"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("gpqa": {})", R"(, "model": {"tags": [{"a": 1}, {"b": 1, "b": 2}]})"))
                .find("cards/x.json: model.tags[1].b: duplicate key"),
            std::string::npos);
  // The same key in two different objects is fine.
  Card c;
  EXPECT_TRUE(ParseCard(CardWith(R"(, "model": "m")", R"("gpqa": {})", R"(, "model": {"model": "m"})"), "x", &c).ok());
}

// RULER task names are checked by the card parser, with a near miss, so a
// typo is exit 1 before any server is asked (it was exit 2 with no server).
TEST(CardTest, RulerTaskNamesAreChecked) {
  EXPECT_NE(Err(CardWith("", R"("ruler": {"tasks": ["vt", "niah_singel_1"]})"))
                .find("parts.ruler.tasks[1]: unknown RULER task \"niah_singel_1\" (did you mean \"niah_single_1\"?); "
                      "known tasks: niah_single_1, "),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("ruler": {"samples_per_task": {"cwe": 2, "fwee": 3}})"))
                .find("parts.ruler.samples_per_task: unknown RULER task \"fwee\" (did you mean \"fwe\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("ruler": {"task_max_tokens": {"qa1": 64}})"))
                .find("parts.ruler.task_max_tokens: unknown RULER task \"qa1\" (did you mean \"qa_1\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("ruler": {"tasks": ["vt", "vt"]})")).find("parts.ruler.tasks[1]: \"vt\" is given twice"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("ruler": {"tasks": []})")).find("parts.ruler.tasks: expected at least one task"),
            std::string::npos);
}

// Every unknown key gets a near miss from the keys its object takes, also
// keys read only when present and plural/singular slips.
TEST(CardTest, EveryUnknownKeyGetsANearMiss) {
  EXPECT_NE(Err(CardWith(R"(, "slot": 4)")).find("server.slot: unknown field (did you mean \"slots\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith(R"(, "retry": 4)")).find("server.retry: unknown field (did you mean \"retries\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("mmlupro": {"question": 4})")).find("(did you mean \"questions\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("gpqa": {"sed": 4})")).find("parts.gpqa.sed: unknown field (did you mean \"seed\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("ruler": {"sample_per_task": 4})"))
                .find("(did you mean \"samples_per_task\"?)"),
            std::string::npos);
  // hardware is descriptive, but a near miss of the GPU selector is a typo.
  EXPECT_NE(Err(CardWith("", R"("gpqa": {})", R"(, "hardware": {"gpu": "RTX 5060 Ti", "gpu_indx": 0})"))
                .find("hardware.gpu_indx: unknown field (did you mean \"gpu_index\"?)"),
            std::string::npos);
  EXPECT_NE(Err(CardWith("", R"("gpqa": {})", R"(, "load_sampling": {"interval": 4})"))
                .find("load_sampling.interval: unknown field (did you mean \"interval_s\"?)"),
            std::string::npos);
}

TEST(CardTest, MalformedJsonGivesLineAndColumn) {
  std::string m = Err("{\n  \"name\": \"t\",\n  \"server\": {\"base_url\": \"http://h/v1\",}\n}");
  EXPECT_EQ(m.rfind("cards/x.json:3:", 0), 0u) << m;
  EXPECT_NE(m.find("malformed JSON"), std::string::npos) << m;
}

TEST(CardTest, ExampleCardsParse) {
  for (const char* name : {"local.json", "clover-q4_0.json"}) {
    Card c;
    Status st = LoadCard(evalrun::testing::SourceDir() + "/cards/" + name, &c);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  Card c;
  ASSERT_TRUE(LoadCard(evalrun::testing::SourceDir() + "/cards/clover-q4_0.json", &c).ok());
  EXPECT_EQ(c.server.slots, 4);
  int ruler = 0;
  for (const auto& [t, n] : c.FindPart("ruler")->settings.Counts("samples_per_task")) ruler += n;
  EXPECT_EQ(ruler, 40) << "the published card runs 40 RULER samples per length";
  EXPECT_EQ(c.FindPart("mmlupro")->settings.Int("questions"), 400);
  EXPECT_EQ(c.FindPart("gpqa")->settings.Int("questions"), 198);
  EXPECT_EQ(c.FindPart("ifeval")->settings.Int("prompts"), 200);
  EXPECT_EQ(c.FindPart("ifeval")->settings.Int("max_tokens"), 4096);
}

}  // namespace
}  // namespace evalrun
