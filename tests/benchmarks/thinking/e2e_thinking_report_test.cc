// One job asks MMLU-Pro with thinking off (its own request settings) and
// the thinking part on GPQA, against the fake server playing a thinking
// model; `evalrun report` and `evalrun compare` (against a second job whose
// gateway drops the switch and whose model answers otherwise) show both
// parts with the figures planted. Behaviours are chosen per question from
// the prompt's sha256, so the test knows each sample's.
#include <algorithm>
#include <map>

#include "evals/base/sha256.h"
#include "evals/publish/table_text.h"
#include "scorers/statistics.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/markdown_tables.h"
#include "tests/support/planted.h"

namespace evalrun::testing {
namespace {

int Kind(const std::string& prompt_sha256) { return PlantedKind(prompt_sha256, 4); }

// Job A, thinking on: 0 reasons 40 tokens and answers C; 1 reasons 400
// (the budget of 100 ends it: 104 with the forced end tag) and answers C;
// 2 thinks inside its content until the limit (cut off in the reasoning);
// 3 reasons 40 and is cut off in its answer.
FakeReply OnReply(int kind) {
  switch (kind) {
    case 1: return {"C", Words(400), "stop"};
    case 2: return {"<think>" + Words(500), "", "stop"};
    case 3: return {"B", Words(40), "length"};
    default: return {"C", Words(40), "stop"};
  }
}
constexpr int kOnTokens[] = {40, 104, 132, 40};

// Job A's MMLU-Pro answer (thinking off, max_tokens 40): a letter from the prompt.
std::string MmluLetter(const std::string& prompt_sha256) {
  return std::string(1, "ABCDEFGHIJ"[(prompt_sha256[1] + prompt_sha256[2]) % 10]);
}

std::string Prompt(const nlohmann::json& body) { return body["messages"][0]["content"].get<std::string>(); }

std::string Pct(int k, int n) { return FormatDouble("%.2f", 100.0 * k / n); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What job A's thinking samples say, as the test planted it.
struct Planted {
  int on_right = 0, off_right = 0, on_only = 0, off_only = 0, cut_r = 0, cut_a = 0, ended = 0;
  int mid_n = 0, mid_right = 0, top_n = 0, top_right = 0;  // buckets 26-50 and >= 100
  std::vector<double> tokens;
};

Planted Expect(const std::vector<nlohmann::json>& samples) {
  Planted p;
  std::map<std::string, std::string> gold;
  for (const auto& s : samples) gold[s["question"]] = s["gold"];
  for (const auto& s : samples) {
    if (s["arm"] != "on") continue;
    const int k = Kind(s["prompt_sha256"]);
    const std::string g = gold[s["question"]];
    const bool right = g == "C" && k <= 1, off = g == "A";
    p.on_right += right;
    p.off_right += off;
    p.on_only += right && !off;
    p.off_only += !right && off;
    p.cut_r += k == 2;
    p.cut_a += k == 3;
    p.ended += k == 1;
    p.tokens.push_back(kOnTokens[k]);
    (k == 0 || k == 3 ? p.mid_n : p.top_n)++;
    (k == 0 || k == 3 ? p.mid_right : p.top_right) += right;
  }
  return p;
}

std::string Has(const std::string& text, const std::string& want) {
  return text.find(want) != std::string::npos ? "" : "missing: " + want;
}

class E2eThinkingReport : public E2eTest {
 protected:
  // Job `job` against `server`: MMLU-Pro thinking off, thinking on GPQA.
  void RunJob(FakeServer& server, const std::string& job) {
    const std::string card = WriteCard(server.base_url(), "4", R"({
        "mmlupro": {"questions": 8, "thinking": "off", "max_tokens": 40},
        "thinking": {"benchmarks": {"gpqa": 12}, "budget": 100, "answer_tokens": 32}})");
    BinaryResult r = Run({"--card", card, "--job", job});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string Runs() { return dir_ + "/runs/"; }
};

TEST_F(E2eThinkingReport, ReportAndCompareShowBothPartsWithThePlantedFigures) {
  FakeServerOptions o;
  o.thinking_switch = true;
  FakeServer a_server(o);
  ASSERT_TRUE(a_server.Start());
  a_server.SetResponder([](const nlohmann::json& body) {
    const std::string sha = Sha256Hex(Prompt(body));
    if (body["max_tokens"] == 40) return FakeReply{MmluLetter(sha), "", "stop"};  // MMLU-Pro
    if (FakeThinkingOff(body)) return FakeReply{"A", "", "stop"};                  // the off arm
    return OnReply(Kind(sha));
  });
  ASSERT_NO_FATAL_FAILURE(RunJob(a_server, "a"));
  // MMLU-Pro was asked with thinking off and no budget.
  int mmlu_requests = 0;
  for (const auto& b : a_server.requests()) {
    if (b["max_tokens"] != 40) continue;
    ++mmlu_requests;
    EXPECT_EQ(b["chat_template_kwargs"]["enable_thinking"], false);
    EXPECT_FALSE(b.contains("reasoning_budget_tokens"));
  }
  EXPECT_EQ(mmlu_requests, 8);
  int mmlu_right = 0;
  for (const auto& s : Samples("a", "mmlupro")) mmlu_right += s["gold"] == MmluLetter(s["prompt_sha256"]);
  ASSERT_GT(mmlu_right, 0) << "plant at least one right MMLU-Pro answer";
  const Planted p = Expect(Samples("a", "thinking"));
  const auto res = Results("a")["parts"];
  ASSERT_EQ(res["mmlupro"]["request"]["thinking"], "off");
  ASSERT_EQ(res["thinking"]["benchmarks"]["gpqa"]["on"]["correct"], p.on_right);

  BinaryResult r = RunBinary({EvalrunBinary(), "report", Runs() + "a"}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = UnpadTables(ReadFile(Runs() + "a/report.md"));  // cells without their padding
  const nlohmann::json on_tokens = res["thinking"]["benchmarks"]["gpqa"]["on"]["reasoning_tokens"];
  EXPECT_DOUBLE_EQ(on_tokens["median"].get<double>(), Median(p.tokens));
  const std::string tok = FormatDouble("%.6g", Median(p.tokens)) + " | " +
                          FormatDouble("%.6g", on_tokens["p90"].get<double>()) + " | 132";
  for (const std::string& want : {
           "| mmlupro | accuracy | " + Pct(mmlu_right, 8) + " |",
           std::string("## Thinking: on vs off, and the switch"),
           std::string("Switch check: the switch reaches the template. enable_thinking changes the prompt"),
           std::string("Thinking off was obeyed: none of the 12 replies with the switch off reasoned."),
           "| gpqa | 12 | " + Pct(p.on_right, 12) + " | " + Pct(p.off_right, 12) + " | " +
               FormatPoints((p.on_right - p.off_right) / 12.0) + " | " + std::to_string(p.on_only) + " | " +
               std::to_string(p.off_only) + " | " + FormatPValue(McNemarExactP(p.on_only, p.off_only)) + " |",
           "| gpqa | on | 12 | " + tok + " | " + std::to_string(p.cut_r) + " | " + std::to_string(p.cut_a) + " | " +
               std::to_string(p.ended) + " | 0 | 0 |",
           std::string("| gpqa | off | 12 | 0 | 0 | 0 | 0 | 0 | — | 0 | 12 |"),
           std::string("| 0 | 0 | — | 12 | ") + Pct(p.off_right, 12) + " |",
           "| 26-50 | " + std::to_string(p.mid_n) + " | " + Pct(p.mid_right, p.mid_n) + " | 0 | — |",
           "| ≥ 100 | " + std::to_string(p.top_n) + " | " + Pct(p.top_right, p.top_n) + " | 0 | — |"})
    EXPECT_EQ(Has(md, want), "") << md;
  const std::string html = ReadFile(Runs() + "a/report.html");
  EXPECT_EQ(Has(html, "<section id=\"thinking\">"), "");
  EXPECT_EQ(Has(html, "aria-label=\"accuracy against reasoning tokens spent\""), "");
  EXPECT_EQ(Has(html, "Switch check: the switch reaches the template."), "");

  // Job B: a gateway drops the switch; the model always reasons 20 tokens
  // and answers D.
  o.drop_template_kwargs = true;
  FakeServer b_server(o);
  ASSERT_TRUE(b_server.Start());
  b_server.SetResponder([](const nlohmann::json&) { return FakeReply{"D", Words(20), "stop"}; });
  ASSERT_NO_FATAL_FAILURE(RunJob(b_server, "b"));
  int b_on_right = 0;
  for (const auto& s : Samples("b", "thinking")) b_on_right += s["arm"] == "on" && s["gold"] == "D";

  const std::string page = dir_ + "/cmp.html";
  r = RunBinary({EvalrunBinary(), "compare", Runs() + "a", Runs() + "b", "--html", page}, 60);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 4) << r.err;
  const std::string cmp = r.out;
  const std::string changed = "the switch reached the template in A and is dropped on the way in B";
  ASSERT_NE(cmp.find("## Notes"), std::string::npos) << cmp;
  const std::string notes = cmp.substr(cmp.find("## Notes"));
  EXPECT_EQ(notes.find("- thinking: " + changed), notes.find("- ")) << "the changed verdict is the first note\n" << cmp;
  // First under the verdict, before the summary.
  EXPECT_LT(cmp.find("**Thinking: " + changed + ".**"), cmp.find("## Summary")) << cmp;
  for (const std::string& want : {
           "**Changed: " + changed + ".**",
           std::string("**Changed: thinking off was obeyed in A and is ignored in B.**"),
           std::string("- switch check: A: the switch reaches the template · B: the switch is dropped on the way"),
           "| gpqa | on | 12 | " + Pct(p.on_right, 12) + " | " + Pct(b_on_right, 12) + " | " +
               FormatPoints((b_on_right - p.on_right) / 12.0) + " |",
           "| " + FormatDouble("%.6g", Median(p.tokens)) + " / " +
               FormatDouble("%.6g", on_tokens["p90"].get<double>()) + " / 132 | 20 / 20 / 20 | " +
               std::to_string(p.cut_r) + " / " + std::to_string(p.cut_a) + " | 0 / 0 |",
           std::string("## mmlupro"), std::string("## thinking")})
    EXPECT_EQ(Has(cmp, want), "") << cmp;
  const std::string cmp_html = ReadFile(page);
  EXPECT_EQ(Has(cmp_html, "Changed: " + changed + "."), "");
  EXPECT_LT(cmp_html.find("<div class=\"banner bad\">" + changed + ".</div>"), cmp_html.find("id=\"summary\""));
}

}  // namespace
}  // namespace evalrun::testing
