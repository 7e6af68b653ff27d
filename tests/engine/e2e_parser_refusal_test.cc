// End to end through the real evalrun binary: answers the server's output
// parser refuses (llama-server's HTTP 500 "... does not match the expected
// peg-native format") are never lost: recovered as raw text and scored
// (raw_fallback), or with server.raw_fallback off scored empty and wrong
// (server_parse_error); the run completes with exit 0 and results.json
// counts both. And the card's `retries: N` bounds the chat attempts at
// N + 1 per question, end to end, for a server that answers 503 busy or
// "Loading model" to every chat request.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/files.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

std::string PromptOf(const nlohmann::json& request) {
  const auto& m = request["messages"];
  return m.empty() ? std::string() : m.back().value("content", std::string());
}

class E2eParserRefusal : public E2eTest {
 protected:
  // The fake server's card (test_card.h) with `server_extra` added to its server.
  std::string Card(const std::string& base_url, int questions, int retries, const nlohmann::json& server_extra = {},
                   int slots = 2) {
    nlohmann::json card = TestCard(base_url, {{"mmlupro", {{"questions", questions}, {"max_tokens", 64}}}});
    card["name"] = "parser";
    card["server"]["slots"] = slots;
    card["server"]["retries"] = retries;
    for (const auto& [k, v] : server_extra.items()) card["server"][k] = v;
    return WriteCard(card);
  }

  // Every other question (by the order the server first sees them) gets
  // its chat answer refused by the parser; the model writes "Answer: B".
  void RefuseEveryOther(FakeServer* server) {
    server->SetResponder([this](const nlohmann::json& req) {
      FakeReply r{"Answer: B", "", "stop"};
      std::lock_guard<std::mutex> l(mu_);
      const std::string p = PromptOf(req);
      if (!seen_.count(p)) {
        seen_.insert(p);
        if (seen_.size() % 2 == 1) refused_.insert(p);
      }
      if (refused_.count(p)) r.fault = Fault::kParserRefusal;
      return r;
    });
  }

  std::mutex mu_;
  std::set<std::string> seen_, refused_;
};

// `evalrun merge` counts them from the shards' records as a run does.
TEST_F(E2eParserRefusal, MergedShardsCountTheRecoveredAnswersAsOneRunWould) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  RefuseEveryOther(&server);
  const std::string card = Card(server.base_url(), 6, 2);
  int in_shards = 0;
  for (int i = 1; i <= 2; ++i) {
    const std::string job = "s" + std::to_string(i);
    BinaryResult r = Run({"--card", card, "--job", job, "--shard", std::to_string(i) + "/2"}, 90);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    in_shards += Results(job)["parts"]["mmlupro"].value("raw_fallback", 0);
  }
  EXPECT_EQ(in_shards, 3);
  BinaryResult m = RunBinary({EvalrunBinary(), "merge", dir_ + "/runs/m", dir_ + "/runs/s1", dir_ + "/runs/s2"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const nlohmann::json p = Results("m")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 6);
  EXPECT_EQ(p["raw_fallback"], 3);
  EXPECT_FALSE(p.contains("server_parse_error")) << "absent when 0";
}

TEST_F(E2eParserRefusal, RefusedAnswersAreRecoveredAsRawTextScoredAndCounted) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  RefuseEveryOther(&server);
  BinaryResult r = Run({"--card", Card(server.base_url(), 6, 2), "--job", "raw"}, 90);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(refused_.size(), 3u);
  const nlohmann::json p = Results("raw")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 6);
  EXPECT_EQ(p["failed"], 0);
  EXPECT_EQ(p["raw_fallback"], 3);
  EXPECT_FALSE(p.contains("server_parse_error")) << "absent when 0";
  int marked = 0;
  for (const auto& s : Samples("raw", "mmlupro")) {
    EXPECT_EQ(s["extracted"], "B") << s.dump();
    if (!s.value("raw_fallback", false)) {
      EXPECT_FALSE(s.contains("attempt_causes")) << "an answer at the first attempt carries no causes";
      continue;
    }
    ++marked;
    EXPECT_EQ(s["attempts"], 2);
    EXPECT_EQ(s["attempt_causes"], nlohmann::json::parse(R"([{"cause":"server_parse_error","status":500},
                                                              {"cause":"raw_fallback","status":200}])"));
  }
  EXPECT_EQ(marked, 3);
  EXPECT_NE(r.err.find("3 recovered as raw text (raw_fallback)"), std::string::npos) << r.err;
}

TEST_F(E2eParserRefusal, WithTheFallbackOffRefusedAnswersCountWrongAndTheRunCompletes) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  RefuseEveryOther(&server);
  BinaryResult r =
      Run({"--card", Card(server.base_url(), 6, 3, {{"raw_fallback", false}}), "--job", "noraw"}, 90);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json p = Results("noraw")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 6);
  EXPECT_EQ(p["failed"], 0);
  EXPECT_FALSE(p.contains("raw_fallback")) << "absent when 0";
  EXPECT_EQ(p["server_parse_error"], 3);
  int wrong = 0;
  for (const auto& s : Samples("noraw", "mmlupro")) {
    if (!s.value("server_parse_error", false)) continue;
    ++wrong;
    EXPECT_EQ(s["correct"], false);
    EXPECT_EQ(s["no_answer"], true);
    EXPECT_EQ(s["response"], "");
    EXPECT_EQ(s["finish_reason"], "server_parse_error");
    EXPECT_EQ(s["attempts"], 2) << "the same 500 is retried once, not `retries` times";
    EXPECT_EQ(s["attempt_causes"].size(), 2u);
  }
  EXPECT_EQ(wrong, 3);
  EXPECT_TRUE(server.requests().size() == static_cast<size_t>(server.chat_requests()))
      << "no /completion request with the fallback off";
}

// The issue's case: a server answering 503 busy got 18 chat attempts for 3
// questions at `retries: 2`. Now at most 3 per question, whatever the 503
// says, and each failure records its causes in failed.jsonl.
TEST_F(E2eParserRefusal, RetriesBoundTheAttemptsPerQuestionEndToEnd) {
  for (const Fault fault : {Fault::kHttp503Busy, Fault::kHttp503}) {
    FakeServer server;
    ASSERT_TRUE(server.Start());
    std::mutex mu;
    std::map<std::string, int> asked;
    server.SetResponder([&](const nlohmann::json& req) {
      std::lock_guard<std::mutex> l(mu);
      ++asked[PromptOf(req)];
      FakeReply r{"Answer: B", "", "stop"};
      r.fault = fault;
      return r;
    });
    const std::string job = fault == Fault::kHttp503Busy ? "busy" : "loading";
    // 4 slots, as the lane's server: the 3 questions fail together.
    BinaryResult r = Run({"--card", Card(server.base_url(), 3, 2, {}, 4), "--job", job}, 90);
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_LE(server.chat_requests(), 9) << job << ": " << r.err;
    EXPECT_EQ(asked.size(), 3u) << job;
    for (const auto& [prompt, n] : asked) EXPECT_LE(n, 3) << job;
    const auto failed = Lines(dir_ + "/runs/" + job + "/mmlupro/failed.jsonl");
    ASSERT_EQ(failed.size(), 3u) << job;
    for (const auto& f : failed) {
      EXPECT_LE(f["attempts"].get<int>(), 3) << f.dump();
      EXPECT_EQ(f["http_status"], 503) << f.dump();
      ASSERT_TRUE(f["attempt_causes"].is_array()) << f.dump();
      EXPECT_EQ(f["attempt_causes"].size(), f["attempts"].get<size_t>()) << f.dump();
      for (const auto& a : f["attempt_causes"]) EXPECT_EQ(a["cause"], "http_503") << f.dump();
    }
  }
}

}  // namespace
}  // namespace evalrun::testing
