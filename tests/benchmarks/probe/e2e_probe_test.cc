// End to end: the probe part (evals/benchmarks/probe/probe.cc) against the fake
// llama-server's scripted logprobs (tests/support/fake_logprobs.h): what it
// asks and records, resume after a kill, and `evalrun compare` of two probe
// runs: identical = KLD 0, a shifted server flagged (exit 4) against the
// flags' and the card's thresholds, runs that cannot be compared refused
// (exit 1) naming the first difference.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "tests/support/e2e.h"
#include "tests/support/wait_for.h"
#include "tests/support/fake_logprobs.h"
#include "tests/support/fake_server.h"
#include "tests/support/fake_tokenizer.h"

namespace evalrun::testing {
namespace {

class E2eProbe : public E2eTest {
 protected:
  std::string Card(const std::string& base_url, const std::string& probe, const std::string& name = "card.json") {
    std::string path = WriteCard(base_url, "4", R"({"probe": )" + probe + "}");
    if (name == "card.json") return path;
    const std::string other = dir_ + "/" + name;
    WriteFile(other, ReadFile(path));
    return other;
  }
  BinaryResult Probe(const std::string& card, const std::string& job) { return Run({"--card", card, "--job", job}); }
  BinaryResult Compare(const std::string& a, const std::string& b, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {EvalrunBinary(), "compare", dir_ + "/runs/" + a, dir_ + "/runs/" + b};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunBinary(argv, 60);
  }
  nlohmann::json CompareJson(const std::string& a, const std::string& b, const std::vector<std::string>& extra,
                             int* exit_code) {
    std::vector<std::string> args = extra;
    args.push_back("--json");
    BinaryResult r = Compare(a, b, args);
    *exit_code = r.exit_code;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }
};

constexpr const char* kProbe = R"({"positions": 24, "top_logprobs": 5, "context_words": 16})";

TEST_F(E2eProbe, AsksOneTokenPerPositionTeacherForcedAndRecordsTheTopK) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  BinaryResult r = Probe(Card(server.base_url(), kProbe), "p");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Every request: a raw completion (no chat template), one token at
  // temperature 0, the top 5, no prompt cache; 16 words each.
  std::map<std::string, std::string> prompt_by_sha;
  for (const auto& q : server.requests()) {
    EXPECT_FALSE(q.contains("messages"));
    EXPECT_EQ(q["max_tokens"], 1);
    EXPECT_EQ(q["logprobs"], 5);
    EXPECT_EQ(q["temperature"], 0.0);
    EXPECT_EQ(q["cache_prompt"], false);
    const std::string prompt = q["prompt"];
    EXPECT_EQ(std::count(prompt.begin(), prompt.end(), ' '), 15) << prompt;
    prompt_by_sha[Sha256Hex(prompt)] = prompt;
  }
  EXPECT_EQ(server.requests().size(), 24u);
  EXPECT_EQ(server.chat_requests(), 0);

  const auto samples = Samples("p", "probe");
  ASSERT_EQ(samples.size(), 24u);
  std::set<int64_t> positions;
  for (const auto& s : samples) {
    positions.insert(s["position"].get<int64_t>());
    EXPECT_EQ(s["id"], std::to_string(s["position"].get<int64_t>()));
    ASSERT_TRUE(prompt_by_sha.count(s["prompt_sha256"])) << s.dump();
    const std::string prompt = prompt_by_sha[s["prompt_sha256"]];
    // The server's own count of the prompt (BOS included), as it said it.
    EXPECT_EQ(s["prompt_tokens"], FakeTokenCount(prompt) + 1);
    // The top-K exactly as the server answered, most likely first.
    const auto want = FakeTopLogprobs(prompt, 5, 0);
    ASSERT_EQ(s["top_logprobs"].size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(s["top_logprobs"][i]["id"], want[i].id);
      EXPECT_EQ(s["top_logprobs"][i]["token"], want[i].token);
      EXPECT_EQ(s["top_logprobs"][i]["logprob"].get<double>(), want[i].logprob);
    }
    EXPECT_EQ(s["response"], want[0].token);
    // A readable excerpt: the end of the prompt.
    const std::string excerpt = s["excerpt"];
    if (excerpt.rfind("…", 0) == 0) {
      const std::string tail = excerpt.substr(3);
      EXPECT_EQ(prompt.substr(prompt.size() - tail.size()), tail);
    } else {
      EXPECT_EQ(excerpt, prompt);
    }
    EXPECT_FALSE(s["next_word"].get<std::string>().empty());
  }
  EXPECT_EQ(positions.size(), 24u);

  const auto res = Results("p")["parts"]["probe"];
  EXPECT_EQ(res["kind"], "logprobs");
  EXPECT_EQ(res["n"], 24);
  EXPECT_EQ(res["info"]["top_logprobs"], 5);
  EXPECT_EQ(res["info"]["context_words"], 16);
  EXPECT_EQ(res["info"]["text"]["file"], "ruler/PaulGrahamEssays.json");
  EXPECT_EQ(res["info"]["positions"].size(), 24u);
  std::vector<int64_t> recorded = res["info"]["positions"].get<std::vector<int64_t>>();
  EXPECT_TRUE(std::is_sorted(recorded.begin(), recorded.end()));
  EXPECT_EQ(std::set<int64_t>(recorded.begin(), recorded.end()), positions);
  EXPECT_TRUE(res["top1_logprob"]["median"].is_number());
  EXPECT_LE(res["max_in_flight"].get<int>(), 4);

  // The same card again: the same positions (seeded).
  ASSERT_EQ(Probe(Card(server.base_url(), kProbe), "p2").exit_code, 0);
  EXPECT_EQ(Results("p2")["parts"]["probe"]["info"]["positions"], res["info"]["positions"]);
}

TEST_F(E2eProbe, LlamaCompletionEndpointAsksNProbs) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  BinaryResult r = Probe(Card(server.base_url(), R"({"positions": 6, "top_logprobs": 3, "context_words": 8,
                                                      "endpoint": "llama-completion"})"),
                         "n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& q : server.requests()) {
    EXPECT_EQ(q["n_probs"], 3);
    EXPECT_EQ(q["n_predict"], 1);
  }
  const auto samples = Samples("n", "probe");
  ASSERT_EQ(samples.size(), 6u);
  for (const auto& s : samples) {
    EXPECT_EQ(s["top_logprobs"].size(), 3u);
    EXPECT_GT(s["prompt_tokens"].get<int>(), 8);  // tokens_evaluated
  }
}

TEST_F(E2eProbe, KilledRunResumesAskingOnlyTheRest) {
  FakeServerOptions o;
  o.ms_per_token = 40;  // one token each: 40 ms a position
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  const std::string card = Card(server.base_url(), R"({"positions": 40, "top_logprobs": 4, "context_words": 12})");
  // What counts as answered is the answer journal (the scoring stage writes
  // samples.jsonl after, in batches): killed once 8 answers are in it.
  const std::string journal = dir_ + "/runs/k/probe/answers.jsonl";
  std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "k", "--out", dir_ + "/runs",
                                   "--data-dir", DatasetsDir()};
  int pid = SpawnBinary(argv, dir_ + "/o.txt", dir_ + "/e.txt");
  ASSERT_GT(pid, 0);
  auto lines = [&] {
    const std::string t = ReadFile(journal);
    return static_cast<size_t>(std::count(t.begin(), t.end(), '\n'));
  };
  WaitFor([&] { return lines() >= 8; }, 60);
  kill(pid, SIGKILL);
  WaitBinary(pid, 20);
  std::set<std::string> kept_shas;  // journaled or scored
  for (const std::string f : {"answers.jsonl", "samples.jsonl"})
    for (const auto& line : Lines(dir_ + "/runs/k/probe/" + f)) kept_shas.insert(line["prompt_sha256"]);
  ASSERT_GE(kept_shas.size(), 8u);
  ASSERT_LT(kept_shas.size(), 40u);
  const size_t asked_before = server.requests().size();

  BinaryResult r = RunBinary(argv, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto all = Samples("k", "probe");
  std::set<std::string> ids;
  for (const auto& s : all) EXPECT_TRUE(ids.insert(s["id"]).second) << "answered twice: " << s["id"];
  EXPECT_EQ(ids.size(), 40u);
  const auto requests = server.requests();
  for (size_t i = asked_before; i < requests.size(); ++i)
    EXPECT_EQ(kept_shas.count(Sha256Hex(requests[i]["prompt"].get<std::string>())), 0u) << "asked again";
  EXPECT_EQ(requests.size() - asked_before, 40 - kept_shas.size());
  EXPECT_EQ(Results("k")["parts"]["probe"]["n"], 40);
}

TEST_F(E2eProbe, CompareOfTwoIdenticalServersIsZeroAndPasses) {
  FakeServer a, b;
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  ASSERT_EQ(Probe(Card(a.base_url(), kProbe), "a").exit_code, 0);
  ASSERT_EQ(Probe(Card(b.base_url(), kProbe), "b").exit_code, 0);
  int code = -1;
  const auto doc = CompareJson("a", "b", {"--max-kld-mean", "1e-9", "--max-kld-p99", "1e-9", "--min-top1", "1"}, &code);
  EXPECT_EQ(code, 0);
  const auto& p = doc["parts"][0];
  EXPECT_EQ(p["kind"], "logprobs");
  EXPECT_EQ(p["paired"], 24);
  EXPECT_EQ(p["kld"]["max"].get<double>(), 0.0);
  EXPECT_EQ(p["top1_agreement"].get<double>(), 1.0);
  EXPECT_EQ(p["abs_delta_top_logprob"]["max"].get<double>(), 0.0);
  EXPECT_EQ(p["verdict"], "within thresholds");
  EXPECT_EQ(p["thresholds"].size(), 3u);
  EXPECT_EQ(doc["exit_code"], 0);
}

TEST_F(E2eProbe, CompareFlagsAShiftedServerWithExit4) {
  FakeServer a;
  FakeServer b(LogprobShifted(0.05));
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  ASSERT_EQ(Probe(Card(a.base_url(), kProbe), "a").exit_code, 0);
  ASSERT_EQ(Probe(Card(b.base_url(), kProbe), "b").exit_code, 0);

  // Measured without thresholds: KLD > 0, exit 0, said so.
  int code = -1;
  auto doc = CompareJson("a", "b", {}, &code);
  EXPECT_EQ(code, 0);
  const double mean = doc["parts"][0]["kld"]["mean"];
  EXPECT_GT(mean, 0.0);
  EXPECT_EQ(doc["parts"][0]["verdict"], "measured");
  EXPECT_EQ(doc["parts"][0]["worst"].size(), 10u);
  EXPECT_GE(doc["parts"][0]["worst"][0]["kld"].get<double>(), doc["parts"][0]["worst"][1]["kld"].get<double>());

  // Thresholds below it: a regression, exit 4, in JSON and Markdown.
  doc = CompareJson("a", "b", {"--max-kld-mean", "1e-9"}, &code);
  EXPECT_EQ(code, 4);
  EXPECT_EQ(doc["regressions"], nlohmann::json::array({"probe"}));
  EXPECT_EQ(doc["parts"][0]["thresholds"][0]["exceeded"], true);
  EXPECT_EQ(doc["parts"][0]["thresholds"][0]["source"], "--max-kld-mean");
  BinaryResult md = Compare("a", "b", {"--max-kld-mean", "1e-9"});
  EXPECT_EQ(md.exit_code, 4);
  EXPECT_NE(md.out.find("**Regression** in probe"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("\"rest\""), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("Worst positions by KLD"), std::string::npos) << md.out;
  // Thresholds above it: within, exit 0.
  doc = CompareJson("a", "b", {"--max-kld-mean", std::to_string(mean * 10)}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(doc["parts"][0]["verdict"], "within thresholds");
}

TEST_F(E2eProbe, TheCardsThresholdsDecideWithoutFlags) {
  FakeServer a;
  FakeServer b(LogprobShifted(0.05));
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  ASSERT_EQ(Probe(Card(a.base_url(), kProbe), "a").exit_code, 0);
  const std::string with_limits = R"({"positions": 24, "top_logprobs": 5, "context_words": 16,
                                      "max_kld_p99": 1e-9, "min_top1": 0.5})";
  ASSERT_EQ(Probe(Card(b.base_url(), with_limits, "b.json"), "b").exit_code, 0);
  int code = -1;
  const auto doc = CompareJson("a", "b", {}, &code);
  EXPECT_EQ(code, 4);
  const auto& t = doc["parts"][0]["thresholds"];
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["name"], "max_kld_p99");
  EXPECT_EQ(t[0]["exceeded"], true);
  EXPECT_EQ(t[0]["source"], "B's card (parts.probe.max_kld_p99)");
  EXPECT_EQ(t[1]["name"], "min_top1");
}

TEST_F(E2eProbe, CompareRefusesRunsOfAnotherTextPositionsOrTokenization) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  ASSERT_EQ(Probe(Card(server.base_url(), kProbe), "a").exit_code, 0);

  // Another text.
  std::string words;
  for (int i = 0; i < 400; ++i) words += "word" + std::to_string(i % 37) + (i % 11 ? " " : "\n");
  WriteFile(dir_ + "/other.txt", words);
  ASSERT_EQ(Probe(Card(server.base_url(), R"({"positions": 24, "top_logprobs": 5, "context_words": 16,
                                              "text": "other.txt"})", "t.json"), "text").exit_code, 0);
  BinaryResult r = Compare("a", "text");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not comparable: text (sha256)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("other.txt"), std::string::npos) << r.err;

  // Other positions (another seed).
  ASSERT_EQ(Probe(Card(server.base_url(), R"({"positions": 24, "top_logprobs": 5, "context_words": 16,
                                              "seed": 7})", "s.json"), "seed").exit_code, 0);
  r = Compare("a", "seed");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("positions: entry "), std::string::npos) << r.err;

  // Another tokenization: one position's prompt counted otherwise.
  ASSERT_EQ(Probe(Card(server.base_url(), kProbe), "tok").exit_code, 0);
  const std::string path = dir_ + "/runs/tok/probe/samples.jsonl";
  auto lines = Samples("tok", "probe");
  const std::string id = lines[3]["id"];
  lines[3]["prompt_tokens"] = lines[3]["prompt_tokens"].get<int>() + 1;
  std::string text;
  for (const auto& l : lines) text += l.dump() + "\n";
  WriteFile(path, text);
  r = Compare("a", "tok");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("position " + id + ": the prompt is"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tokenize the text differently"), std::string::npos) << r.err;
}

TEST_F(E2eProbe, BadSettingsAreRefusedBeforeAnyRequest) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  BinaryResult r = Probe(Card(server.base_url(), R"({"positions": 600000, "context_words": 16})"), "x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("parts.probe.positions"), std::string::npos) << r.err;
  WriteFile(dir_ + "/bad.txt", std::string("caf\xe9 au lait ") + std::string(100, 'x'));
  r = Probe(Card(server.base_url(), R"({"positions": 1, "context_words": 1, "text": "bad.txt"})"), "y");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not UTF-8 (byte 3)"), std::string::npos) << r.err;
  r = Probe(Card(server.base_url(), R"({"top_logprobs": 0})"), "z");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("parts.probe.top_logprobs"), std::string::npos) << r.err;
  EXPECT_EQ(server.requests().size(), 0u);
}

}  // namespace
}  // namespace evalrun::testing
