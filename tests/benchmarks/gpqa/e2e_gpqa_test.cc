// GPQA Diamond end to end, and the guard that no GPQA text is in the tree.
#include <filesystem>
#include <map>

#include "evals/benchmarks/gpqa/gpqa_data.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

class E2eGpqa : public E2eTest {};

TEST_F(E2eGpqa, AllQuestionsSameChoiceOrderOnEveryRun) {
  FakeServerOptions o;
  o.slots = 4;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json&) { return FakeReply{"C", "", "stop"}; });
  std::string card = WriteCard(server.base_url(), "4", R"({"gpqa": {"max_tokens": 16}})");
  BinaryResult a = Run({"--card", card, "--job", "a"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  // A second run with other concurrency must record the same orders.
  std::string card2 = WriteCard(server.base_url(), "1", R"({"gpqa": {"max_tokens": 16}})");
  BinaryResult b = Run({"--card", card2, "--job", "b"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto sa = Samples("a", "gpqa"), sb = Samples("b", "gpqa");
  ASSERT_EQ(sa.size(), 198u);
  ASSERT_EQ(sb.size(), 198u);
  std::map<std::string, nlohmann::json> order_a;
  int correct = 0, gold_c = 0;
  for (const auto& s : sa) {
    order_a[s["id"]] = s["choice_order"];
    correct += s["correct"].get<bool>();
    gold_c += s["gold"] == "C";
    ASSERT_EQ(s["choice_order"].size(), 4u);
  }
  for (const auto& s : sb) EXPECT_EQ(order_a[s["id"]], s["choice_order"]) << s["id"];
  EXPECT_EQ(correct, gold_c);
  auto r = Results("a")["parts"]["gpqa"];
  EXPECT_EQ(r["n"], 198);
  EXPECT_EQ(r["domains"]["Chemistry"]["n"], 93);
  EXPECT_EQ(r["domains"]["Physics"]["n"], 86);
  EXPECT_EQ(r["domains"]["Biology"]["n"], 19);
  EXPECT_GE(r["subdomains"].size(), 10u);
  // The prompts carried the shuffled options; the simple-evals profile and
  // extraction are exercised through `score`.
  std::string responses = dir_ + "/resp.jsonl";
  std::string text;
  int n = 0;
  for (const auto& s : sa) {
    if (n++ == 10) break;
    text += nlohmann::json{{"id", s["id"]}, {"response", "Thinking...\nAnswer: " + s["gold"].get<std::string>()}}.dump() + "\n";
  }
  WriteFile(responses, text);
  std::string card3 = WriteCard("http://127.0.0.1:1/v1", "1",
                                R"({"gpqa": {"prompt": "simple-evals", "extract": "simple-evals"}})");
  BinaryResult sc = RunBinary({EvalrunBinary(), "score", "--card", card3, "--part", "gpqa", "--responses", responses,
                               "--out", dir_ + "/runs", "--job", "s", "--data-dir", DatasetsDir()});
  ASSERT_EQ(sc.exit_code, 0) << sc.err;
  auto rs = Results("s")["parts"]["gpqa"];
  EXPECT_EQ(rs["n"], 10);
  EXPECT_EQ(rs["correct"], 10);
}

// The GPQA authors ask that the questions never appear in plain text online:
// no file of the source tree may contain the text of any question or answer.
TEST(GpqaNoPlainText, NoQuestionOrAnswerTextInTheSourceTree) {
  std::vector<GpqaQuestion> qs;
  ASSERT_TRUE(LoadGpqa(DatasetsDir() + "/gpqa/dataset.zip", kGpqaDiamondMember, GpqaZipPassword(), &qs).ok());
  std::vector<std::string> needles;
  for (const auto& q : qs) {
    for (const std::string* t : {&q.question, &q.correct}) {
      std::string s = *t;
      if (s.size() >= 48) needles.push_back(s.substr(0, 48));
    }
  }
  ASSERT_GT(needles.size(), 250u);
  namespace fs = std::filesystem;
  int files = 0;
  for (auto it = fs::recursive_directory_iterator(SourceDir()); it != fs::recursive_directory_iterator(); ++it) {
    std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.rfind("build", 0) == 0 || name == "runs")) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->file_size() > (8 << 20)) continue;
    std::string text = ReadFile(it->path().string());
    ++files;
    for (const auto& n : needles) ASSERT_EQ(text.find(n), std::string::npos) << it->path() << " holds GPQA text";
  }
  EXPECT_GT(files, 20);
}

}  // namespace
}  // namespace evalrun::testing
