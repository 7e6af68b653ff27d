// The thinking part's pieces: the switch check against the fake server's
// three templates, and the measures of recorded answers.
#include <gtest/gtest.h>

#include "evals/benchmarks/thinking/thinking_measures.h"
#include "evals/benchmarks/thinking/thinking_switch.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

SwitchProbe Probe(FakeServerOptions o) {
  FakeServer server(o);
  EXPECT_TRUE(server.Start());
  ServerConfig cfg;
  cfg.base_url = server.base_url();
  std::unique_ptr<HttpTransport> t = MakeHttpTransport(server.origin(), "");
  SwitchProbe p;
  ProbeThinkingSwitch(t.get(), cfg, &p);
  return p;
}

TEST(ThinkingSwitch, Qwen3TemplateReachesIt) {
  FakeServerOptions o;
  o.thinking_switch = true;
  const SwitchProbe p = Probe(o);
  EXPECT_EQ(JudgeSwitch(p), SwitchVerdict::kReaches);
  // "<think>\n\n</think>\n\n": 7 fake tokens more with the switch off.
  EXPECT_EQ(p.chat_tokens_off, p.chat_tokens_on + 7);
  const nlohmann::json j = SwitchJson(p);
  EXPECT_EQ(j["text"], "the switch reaches the template");
  EXPECT_EQ(j["rendered"]["off_tail"], "<think>\n\n</think>\n\n");
  EXPECT_EQ(j["template_names_switch"], true);
}

TEST(ThinkingSwitch, ChatmlHasNoSwitch) {
  const SwitchProbe p = Probe({});
  EXPECT_EQ(JudgeSwitch(p), SwitchVerdict::kNoSwitch);
  EXPECT_EQ(p.chat_tokens_off, p.chat_tokens_on);
  EXPECT_GT(p.chat_tokens_on, 0);
  EXPECT_EQ(SwitchJson(p)["text"], "the template has no thinking switch");
}

TEST(ThinkingSwitch, GatewayThatStripsTheKwargsDropsIt) {
  FakeServerOptions o;
  o.thinking_switch = true;
  o.drop_template_kwargs = true;
  SwitchProbe p = Probe(o);
  EXPECT_EQ(JudgeSwitch(p), SwitchVerdict::kDropped);
  EXPECT_EQ(SwitchJson(p)["text"], "the switch is dropped on the way");
  // Without /apply-template, /props' template naming the switch says it.
  p.rendered = false;
  EXPECT_EQ(JudgeSwitch(p), SwitchVerdict::kDropped);
  p.template_names_switch = false;
  EXPECT_EQ(JudgeSwitch(p), SwitchVerdict::kNoSwitch);
}

TEST(ThinkingSwitch, NoServerIsUnchecked) {
  ServerConfig cfg;
  cfg.base_url = "http://127.0.0.1:1/v1";
  std::unique_ptr<HttpTransport> t = MakeHttpTransport("http://127.0.0.1:1", "");
  SwitchProbe p;
  ProbeThinkingSwitch(t.get(), cfg, &p);
  EXPECT_EQ(JudgeSwitch(p), SwitchVerdict::kUnchecked);
  EXPECT_NE(p.chat_error.find("switch off failed"), std::string::npos) << p.chat_error;
  EXPECT_EQ(SwitchJson(p)["verdict"], "unchecked");
}

SampleRecord Rec(std::string response, std::string reasoning, std::string finish, int completion,
                 bool unclosed = false) {
  SampleRecord r;
  r.response = std::move(response);
  r.reasoning = std::move(reasoning);
  r.finish_reason = std::move(finish);
  r.completion_tokens = completion;
  r.unclosed_think = unclosed;
  return r;
}

TEST(ThinkingMeasures, WhereReasoningIsAndWhatItSpent) {
  const AnswerCounter words = [](const std::string& t) { return static_cast<int>(t.size()); };
  ThinkingFacts f = ReadThinkingFacts(Rec("C", "r r r", "stop", 10), words);
  EXPECT_TRUE(f.reasoned);
  EXPECT_EQ(f.reasoning_tokens, 8);  // 10 - 1 (answer) - 1 (end of sequence)
  EXPECT_EQ(f.cut, CutPlace::kNone);
  f = ReadThinkingFacts(Rec("", "r", "length", 40), words);
  EXPECT_EQ(f.cut, CutPlace::kReasoning);
  EXPECT_EQ(f.reasoning_tokens, 40);
  f = ReadThinkingFacts(Rec("", "r", "length", 40, true), words);
  EXPECT_EQ(f.cut, CutPlace::kReasoning);
  EXPECT_FALSE(f.reasoning_in_content);
  f = ReadThinkingFacts(Rec("abc", "r", "length", 40), words);
  EXPECT_EQ(f.cut, CutPlace::kAnswer);
  EXPECT_EQ(f.reasoning_tokens, 37);
  f = ReadThinkingFacts(Rec("", "r", "stop", 40, true), words);
  EXPECT_TRUE(f.reasoning_in_content);
  f = ReadThinkingFacts(Rec("x</think>C", "", "stop", 5), words);
  EXPECT_TRUE(f.reasoning_in_content);
  EXPECT_TRUE(f.reasoned);
  // Whitespace is no reasoning (Qwen3's empty think block).
  f = ReadThinkingFacts(Rec("A", "\n\n", "stop", 2), words);
  EXPECT_FALSE(f.reasoned);
  EXPECT_EQ(f.reasoning_tokens, 0);
  // No usage: unknown.
  f = ReadThinkingFacts(Rec("A", "r", "stop", -1), words);
  EXPECT_EQ(f.reasoning_tokens, -1);
}

TEST(ThinkingMeasures, ArmAndPairs) {
  std::vector<SampleRecord> on, off;
  for (int i = 0; i < 10; ++i) {
    SampleRecord a = Rec("A", "r", "stop", 2 + 10 * i), b = Rec("A", "", "stop", 2);
    a.fields = {{"question", std::to_string(i)}};
    b.fields = a.fields;
    ChoiceVerdict va, vb;
    va.correct = i < 8;  // 8 right on
    vb.correct = i < 2;  // 2 right off
    a.verdict = va;
    b.verdict = vb;
    on.push_back(a);
    off.push_back(b);
  }
  std::vector<const SampleRecord*> pon, poff;
  std::vector<ThinkingFacts> fon, foff;
  const AnswerCounter one = [](const std::string&) { return 1; };
  for (auto& r : on) pon.push_back(&r), fon.push_back(ReadThinkingFacts(r, one));
  for (auto& r : off) poff.push_back(&r), foff.push_back(ReadThinkingFacts(r, one));
  const nlohmann::json a = ArmJson(pon, fon, 50);
  EXPECT_EQ(a["correct"], 8);
  EXPECT_EQ(a["reasoning_tokens"]["max"], 90);  // 2 + 90 - 1 - 1
  EXPECT_EQ(a["reasoning_tokens"]["median"], 45);
  EXPECT_EQ(a["reasoning_tokens"]["p90"], 81);
  EXPECT_EQ(a["budget_ended"], 5);  // 50, 60, 70, 80, 90
  const nlohmann::json b = ArmJson(poff, foff, std::nullopt);
  EXPECT_EQ(b["no_reasoning_share"], 1.0);
  EXPECT_FALSE(b.contains("budget_ended"));
  const nlohmann::json p = PairedJson(pon, poff);
  EXPECT_EQ(p["n"], 10);
  EXPECT_EQ(p["on_only"], 6);
  EXPECT_EQ(p["off_only"], 0);
  EXPECT_NEAR(p["mcnemar_p"].get<double>(), 0.03125, 1e-9);
  EXPECT_NEAR(p["difference"].get<double>(), 0.6, 1e-9);
}

// Accuracy against reasoning tokens spent: buckets of the budget (50: 0,
// 1-6, 7-12, 13-25, 26-49, 50 and more), reasoning tokens 0, 10, ..., 90,
// the first 8 right.
TEST(ThinkingMeasures, AccuracyByReasoningTokensInBucketsOfTheBudget) {
  std::vector<SampleRecord> on;
  for (int i = 0; i < 10; ++i) {
    on.push_back(Rec("A", "r", "stop", 2 + 10 * i));
    ChoiceVerdict v;
    v.correct = i < 8;
    on.back().verdict = v;
  }
  on.push_back(Rec("A", "r", "stop", -1));  // no usage: unknown
  std::vector<const SampleRecord*> recs;
  std::vector<ThinkingFacts> facts;
  const AnswerCounter one = [](const std::string&) { return 1; };
  for (auto& r : on) recs.push_back(&r), facts.push_back(ReadThinkingFacts(r, one));
  const nlohmann::json b = ReasoningBucketsJson(recs, facts, 50);
  ASSERT_EQ(b.size(), 7u) << b.dump();
  const std::vector<std::string> labels = {"0", "1-6", "7-12", "13-25", "26-49", "≥ 50", "unknown"};
  const std::vector<int> n = {1, 0, 1, 1, 2, 5, 1}, correct = {1, 0, 1, 1, 2, 3, 0};
  for (size_t i = 0; i < labels.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    EXPECT_EQ(b[i]["label"], labels[i]);
    EXPECT_EQ(b[i]["n"], n[i]);
    EXPECT_EQ(b[i]["correct"], correct[i]);
  }
  EXPECT_TRUE(b[1]["accuracy"].is_null());
  EXPECT_DOUBLE_EQ(b[5]["accuracy"].get<double>(), 0.6);
  EXPECT_EQ(b[5]["from"], 50);
  EXPECT_TRUE(b[5]["to"].is_null());
  // A budget of 1: nothing between 0 and the budget.
  const nlohmann::json one_bucket = ReasoningBucketsJson(recs, facts, 1);
  ASSERT_EQ(one_bucket.size(), 3u) << one_bucket.dump();
  EXPECT_EQ(one_bucket[1]["label"], "≥ 1");
  EXPECT_EQ(one_bucket[1]["n"], 9);
}

// The fake server's budget as llama-server's sampler: after the budget the
// forced message and end tag are generated tokens; the end tag is not shown.
TEST(FakeThinkingModel, TheBudgetsForcedEndTagCountsAsGenerated) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  std::string words;
  for (int i = 0; i < 50; ++i) words += i ? " w" : "w";
  server.SetResponder([&](const nlohmann::json&) { return FakeReply{"C", words, "stop"}; });
  std::unique_ptr<HttpTransport> t = MakeHttpTransport(server.origin(), "");
  auto ask = [&](nlohmann::json extra) {
    nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "q"}}}}, {"max_tokens", 100}};
    body.update(extra);
    HttpResponse r = t->Post("/v1/chat/completions", body.dump(), 10);
    EXPECT_EQ(r.status, 200) << r.body;
    return nlohmann::json::parse(r.body);
  };
  nlohmann::json r = ask({{"reasoning_budget_tokens", 10}});
  EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], FakeFirstTokens(words, 10));
  EXPECT_EQ(r["choices"][0]["message"]["content"], "C");
  // 10 reasoning + "</think>" (4 fake tokens) + "C" + end of sequence.
  EXPECT_EQ(r["usage"]["completion_tokens"], 16);
  r = ask({{"thinking_budget_tokens", 10}, {"reasoning_budget_message", " Enough."}});
  EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], FakeFirstTokens(words, 10) + " Enough.");
  EXPECT_EQ(r["usage"]["completion_tokens"], 16 + FakeTokenCount(" Enough."));
  // The end tag takes room under max_tokens: 12 leaves none for the answer.
  r = ask({{"reasoning_budget_tokens", 10}, {"max_tokens", 12}});
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][0]["message"].value("content", ""), "");
  EXPECT_EQ(r["usage"]["completion_tokens"], 12);
  // A reasoning within the budget ends by itself: nothing forced.
  r = ask({{"reasoning_budget_tokens", 50}});
  EXPECT_EQ(r["usage"]["completion_tokens"], 52);
}

}  // namespace
}  // namespace evalrun::testing
