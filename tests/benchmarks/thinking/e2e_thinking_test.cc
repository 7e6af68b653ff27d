// The thinking part end to end against the fake server playing a thinking
// model: planted behaviours per question (chosen from the prompt's sha256,
// so the test knows each sample's) give the figures of both arms.
#include <algorithm>
#include <map>

#include "evals/base/sha256.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/planted.h"

namespace evalrun::testing {
namespace {

// The planted behaviour of a question with thinking on, from its prompt.
int Kind(const std::string& prompt_sha256) { return PlantedKind(prompt_sha256, 8); }

// On: 0, 1, 7 reason 50 tokens and answer C; 2 reasons 400 (the budget of
// 100 ends it) and answers C; 3 reasons 50 and is cut in its answer; 4
// thinks inside the content and is cut there; 5 thinks inside the content
// and answers C; 6 leaves reasoning and a stray </think> in its answer.
FakeReply OnReply(int kind) {
  switch (kind) {
    case 2: return {"C", Words(400), "stop"};
    case 3: return {"B", Words(50), "length"};
    case 4: return {"<think>" + Words(500), "", "stop"};
    case 5: return {"<think>short thought</think>\nC", "", "stop"};
    case 6: return {"still thinking</think>\nC", Words(50), "stop"};
    default: return {"C", Words(50), "stop"};
  }
}

// Reasoning tokens each kind spends, as evalrun counts them (completion
// tokens - the answer's - the end-of-sequence token; a cut at 132 tokens;
// the budget's forced end tag "</think>" is 4 fake tokens).
int OnTokens(int kind) {
  switch (kind) {
    case 2: return 104;
    case 4: return 132;
    case 5: return 9;  // "<think>short thought</think>\n": 9 fake tokens
    default: return 50;
  }
}

std::string Prompt(const nlohmann::json& body) { return body["messages"][0]["content"].get<std::string>(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class E2eThinking : public E2eTest {
 protected:
  std::string Card(const FakeServer& s) {
    return WriteCard(s.base_url(), "4",
                     R"({"thinking": {"benchmarks": {"gpqa": 12, "mmlupro": 14}, "budget": 100, "answer_tokens": 32}})");
  }
};

TEST_F(E2eThinking, ObeyingModelGivesThePlantedFigures) {
  FakeServerOptions o;
  o.thinking_switch = true;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json& body) {
    if (FakeThinkingOff(body)) return FakeReply{"A", "", "stop"};
    return OnReply(Kind(Sha256Hex(Prompt(body))));
  });
  BinaryResult r = Run({"--card", Card(server), "--job", "t"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("thinking switch: the switch reaches the template"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("thinking switch: the switch reaches the template (prompt tokens:"), std::string::npos) << r.err;

  // Every request of the on arm had thinking on and the budget; max_tokens
  // the budget + the answer limit. The off arm: thinking off, no budget.
  int on_requests = 0, off_requests = 0;
  for (const auto& b : server.requests()) {
    if (b["max_tokens"] == 1) continue;  // the switch check
    if (FakeThinkingOff(b)) {
      ++off_requests;
      EXPECT_FALSE(b.contains("reasoning_budget_tokens"));
      EXPECT_EQ(b["max_tokens"], 32);
    } else {
      ++on_requests;
      EXPECT_EQ(b["chat_template_kwargs"]["enable_thinking"], true);
      EXPECT_EQ(b["reasoning_budget_tokens"], 100);
      EXPECT_EQ(b["max_tokens"], 132);
    }
  }
  EXPECT_EQ(on_requests, 26);
  EXPECT_EQ(off_requests, 26);

  struct Want { int n = 0, correct = 0, off_correct = 0, cut_r = 0, cut_a = 0, ended = 0, in_content = 0,
                on_only = 0, off_only = 0; std::vector<double> tokens; };
  std::map<std::string, Want> want;
  std::map<std::string, std::string> gold;
  auto samples = Samples("t", "thinking");
  ASSERT_EQ(samples.size(), 52u);
  for (const auto& s : samples) gold[s["question"]] = s["gold"];
  for (const auto& s : samples) {
    if (s["arm"] != "on") continue;
    Want& w = want[s["benchmark"]];
    const int k = Kind(s["prompt_sha256"]);
    const std::string g = gold[s["question"]];
    const bool right = g == "C" && (k <= 2 || k == 5 || k == 7);
    ++w.n;
    w.correct += right;
    w.off_correct += g == "A";
    w.on_only += right && g != "A";
    w.off_only += !right && g == "A";
    w.cut_r += k == 4;
    w.cut_a += k == 3;
    w.ended += k == 2;
    w.in_content += k == 6;
    w.tokens.push_back(OnTokens(k));
    EXPECT_EQ(s["correct"], right) << s["id"];
  }
  const auto res = Results("t")["parts"]["thinking"];
  EXPECT_EQ(res["switch"]["verdict"], "reaches");
  EXPECT_EQ(res["off_switch"], "obeyed");
  EXPECT_EQ(res["budget"], 100);
  for (const auto& [name, w] : want) {
    SCOPED_TRACE(name);
    const auto& b = res["benchmarks"][name];
    EXPECT_EQ(b["on"]["n"], w.n);
    EXPECT_EQ(b["on"]["correct"], w.correct);
    EXPECT_EQ(b["off"]["correct"], w.off_correct);
    EXPECT_EQ(b["on"]["cut_off"]["in_reasoning"], w.cut_r);
    EXPECT_EQ(b["on"]["cut_off"]["in_answer"], w.cut_a);
    EXPECT_EQ(b["on"]["budget_ended"], w.ended);
    EXPECT_EQ(b["on"]["reasoning_in_content"], w.in_content);
    EXPECT_EQ(b["on"]["reasoned"], w.n);
    EXPECT_EQ(b["off"]["no_reasoning_share"], 1.0);
    EXPECT_EQ(b["off"]["reasoning_tokens"]["max"], 0);
    EXPECT_EQ(b["paired"]["n"], w.n);
    EXPECT_EQ(b["paired"]["on_only"], w.on_only);
    EXPECT_EQ(b["paired"]["off_only"], w.off_only);
    EXPECT_EQ(b["on"]["reasoning_tokens"]["max"], *std::max_element(w.tokens.begin(), w.tokens.end()));
    EXPECT_DOUBLE_EQ(b["on"]["reasoning_tokens"]["median"].get<double>(), Median(w.tokens));
  }
  EXPECT_EQ(res["n"], 26);
  EXPECT_EQ(res["correct"], want["gpqa"].correct + want["mmlupro"].correct);
}

// A gateway that strips chat_template_kwargs: the model always thinks first
// (inside <think> in its content); the check says the switch is dropped, the
// off arm is reported as ignored, and its answers are scored on the answer
// text only.
TEST_F(E2eThinking, DroppedSwitchIsReportedAndAnswersScoredOnTheAnswerText) {
  FakeServerOptions o;
  o.thinking_switch = true;
  o.drop_template_kwargs = true;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json& body) {
    EXPECT_FALSE(body.contains("chat_template_kwargs"));
    // Reasoning that still leaves room for the answer within the off arm's
    // answer limit (32): a model that ignores off and answers is scored on
    // its answer.
    return FakeReply{"<think>" + Words(20) + "</think>\nC", "", "stop"};
  });
  BinaryResult r = Run({"--card", Card(server), "--job", "d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the switch is dropped on the way"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("thinking off was ignored: 26 of 26 replies reasoned"), std::string::npos) << r.out;
  const auto res = Results("d")["parts"]["thinking"];
  EXPECT_EQ(res["switch"]["verdict"], "dropped");
  EXPECT_EQ(res["switch"]["rendered"]["differ"], true);
  EXPECT_EQ(res["off_switch"], "ignored");
  int gold_c = 0;
  for (const auto& s : Samples("d", "thinking")) {
    if (s["arm"] != "off") continue;
    gold_c += s["gold"] == "C";
    EXPECT_EQ(s["response"], "C");
    EXPECT_EQ(s["correct"], s["gold"] == "C");
  }
  EXPECT_EQ(res["arms"]["off"]["correct"], gold_c);
  EXPECT_EQ(res["arms"]["off"]["no_reasoning_share"], 0.0);
  EXPECT_EQ(res["arms"]["off"]["reasoning_in_content"], 0);
  EXPECT_EQ(res["arms"]["off"]["reasoning_tokens"]["max"], 27);  // "<think>" (3) + 20 + "</think>" (4)
}

}  // namespace
}  // namespace evalrun::testing
