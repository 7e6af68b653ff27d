// end to end: the real evalrun binary against a scripted hostile
// server (tests/support/hostile_proxy.h in front of the fake llama-server).
// Each test failed before the fix it names.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/hostile_proxy.h"

namespace evalrun::testing {
namespace {

bool IsChat(const ProxiedExchange& x) { return x.path == "/v1/chat/completions"; }

// The model answers every question with the sha256 of its own prompt, so
// an answer scored against the wrong question shows.
FakeReply ShaOfPrompt(const nlohmann::json& req) {
  FakeReply r;
  r.content = "Answer: B sha=" + Sha256Hex(req["messages"].back()["content"].get<std::string>());
  return r;
}

class E2eHostile : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    FakeServerOptions o;
    o.slots = 4;
    server_ = std::make_unique<FakeServer>(o);
    ASSERT_TRUE(server_->Start());
    server_->SetResponder(ShaOfPrompt);
  }
  void TearDown() override {
    if (proxy_) proxy_->Stop();
    server_->Stop();
    E2eTest::TearDown();
  }
  void StartProxy(HostileScript script) {
    proxy_ = std::make_unique<HostileProxy>(server_->port(), std::move(script));
    ASSERT_TRUE(proxy_->Start());
  }
  std::string Card(int slots, int questions, int retries, int max_failed = 0, const std::string& extra_server = "") {
    return WriteCard(proxy_->base_url(), std::to_string(slots) + R"(, "retries": )" + std::to_string(retries) +
                                             extra_server,
                     R"({"mmlupro": {"questions": )" + std::to_string(questions) + R"(, "max_tokens": 64}})",
                     R"( "max_failed": )" + std::to_string(max_failed) + ",");
  }
  std::string JobDir(const std::string& job) { return dir_ + "/runs/" + job; }

  std::unique_ptr<FakeServer> server_;
  std::unique_ptr<HostileProxy> proxy_;
};

// Case 1: one reply too many on a kept-alive connection shifted 7 of 8
// answers onto the wrong questions, exit 0. Now every answer is its own
// question's, and the connection with bytes left over is not reused.
TEST_F(E2eHostile, OneReplyTooManyNeverShiftsAnswersOntoOtherQuestions) {
  StartProxy([](const ProxiedExchange& x) {
    HostileAction a = PassThrough(x);
    if (IsChat(x) && x.n == 1) a.writes.push_back(a.writes[0]);  // the same reply again, its own write
    return a;
  });
  BinaryResult r = Run({"--card", Card(1, 8, 3), "--job", "extra"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Samples("extra", "mmlupro");
  ASSERT_EQ(samples.size(), 8u);
  for (const auto& s : samples)
    EXPECT_NE(s["response"].get<std::string>().find(s["prompt_sha256"].get<std::string>()), std::string::npos)
        << "an answer scored against another question: " << s.dump();
  int chats = 0;
  for (const auto& x : proxy_->exchanges()) chats += IsChat(x);
  EXPECT_GE(chats, 8);
  EXPECT_GE(proxy_->connections(), 2) << "the connection with a reply nobody asked for was reused";
}

// Case 2: /v1/models nested 200,000 deep crashed evalrun (exit 139) and
// left a job folder; now exit 2 naming the reply, nothing left behind.
TEST_F(E2eHostile, DeepJsonFromTheServerIsRefusedNotACrash) {
  for (const std::string path : {"/v1/models", "/props"}) {
    StartProxy([path](const ProxiedExchange& x) {
      if (x.path != path) return PassThrough(x);
      HostileAction a;
      a.writes.push_back(ReplyBytes(200, std::string(200000, '[') + std::string(200000, ']')));
      return a;
    });
    BinaryResult r = Run({"--card", Card(1, 2, 0), "--job", "deep"});
    EXPECT_EQ(r.exit_code, 2) << path << ": " << r.err;
    EXPECT_NE(r.err.find(path + ": reply: JSON nested deeper than 128 levels"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(JobDir("deep"))) << path;
    proxy_->Stop();
  }
}

// Case 2: what is copied from the server into run.json is bounded (a 2 MB
// /v1/models was copied whole, and 20,000 levels became 800 MB).
TEST_F(E2eHostile, AFloodFromTheServerIsNotCopiedIntoTheRunFiles) {
  StartProxy([](const ProxiedExchange& x) {
    if (x.path != "/v1/models") return PassThrough(x);
    nlohmann::json flood = nlohmann::json::parse(x.reply_body);
    flood["padding"] = std::string(2 << 20, 'x');
    HostileAction a;
    a.writes.push_back(ReplyBytes(200, flood.dump()));
    return a;
  });
  BinaryResult r = Run({"--card", Card(1, 2, 0), "--job", "flood"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(std::filesystem::file_size(JobDir("flood") + "/run.json"), 256u << 10);
  EXPECT_LT(std::filesystem::file_size(JobDir("flood") + "/results.json"), 256u << 10);
  EXPECT_NE(ReadFile(JobDir("flood") + "/run.json").find("left out: "), std::string::npos);
}

// Case 2: a card, or a samples.jsonl line, nested 200,000 deep crashed run,
// resume, report and compare; now each exits 1 naming the file.
TEST_F(E2eHostile, DeepJsonInACardOrARunFileIsRefusedNotACrash) {
  StartProxy(PassThrough);
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  // The card's text is the point (a nlohmann::json that deep would crash
  // this test as it did evalrun), so it is written as text.
  const std::string deep_card = dir_ + "/deep-card.json";
  WriteFile(deep_card, R"({"name": "deep", "model": {"name": )" + deep + "}}");
  BinaryResult card = Run({"--card", deep_card, "--job", "deepcard"});
  EXPECT_EQ(card.exit_code, 1) << card.err;
  EXPECT_NE(card.err.find("deep-card.json: JSON nested deeper than 128 levels"), std::string::npos) << card.err;

  const std::string good = Card(1, 3, 0);
  ASSERT_EQ(Run({"--card", good, "--job", "ok"}).exit_code, 0);
  const std::string samples = JobDir("ok") + "/mmlupro/samples.jsonl";
  std::string text = ReadFile(samples);
  const size_t first_nl = text.find('\n');
  text.insert(first_nl + 1, "{\"id\": " + deep + "}\n");  // line 2 of 4
  WriteFile(samples, text);
  BinaryResult resume = Run({"--card", good, "--job", "ok"});
  EXPECT_EQ(resume.exit_code, 1) << resume.err;
  EXPECT_NE(resume.err.find("samples.jsonl:2: JSON nested deeper"), std::string::npos) << resume.err;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", JobDir("ok")},
        std::vector<std::string>{"compare", JobDir("ok"), JobDir("ok")}}) {
    BinaryResult r = RunBinary([&] {
      std::vector<std::string> v = {EvalrunBinary()};
      v.insert(v.end(), args.begin(), args.end());
      return v;
    }());
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("JSON nested deeper"), std::string::npos) << args[0] << ": " << r.err;
  }
}

// Case 3: a server that quotes the request's headers back in an error put
// the key into failed.jsonl. Now no file of the job holds it.
TEST_F(E2eHostile, AKeyQuotedBackByTheServerNeverReachesTheDisk) {
  const std::string key = "sk-hostile-4b1d-never-on-disk";
  StartProxy([](const ProxiedExchange& x) {
    if (!IsChat(x)) return PassThrough(x);
    std::string auth = x.request_head.substr(x.request_head.find("Authorization"));
    auth = auth.substr(0, auth.find("\r\n"));
    HostileAction a;
    a.writes.push_back(ReplyBytes(401, nlohmann::json{{"error", {{"message", "refused: " + auth}}}}.dump()));
    return a;
  });
  const std::string card = WriteCard(proxy_->base_url(), R"(1, "retries": 0, "api_key_env": "EVALRUN_HOSTILE_KEY")",
                                     R"({"mmlupro": {"questions": 2, "max_tokens": 64}})", R"( "max_failed": 0,)");
  BinaryResult r = RunBinary({EvalrunBinary(), "--card", card, "--job", "key", "--out", dir_ + "/runs", "--data-dir",
                              DatasetsDir()},
                             120, {"EVALRUN_HOSTILE_KEY=" + key});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string failed = ReadFile(JobDir("key") + "/mmlupro/failed.jsonl");
  EXPECT_NE(failed.find("refused: Authorization: Bearer [redacted]"), std::string::npos) << failed;
  for (const auto& f : std::filesystem::recursive_directory_iterator(JobDir("key"))) {
    if (f.is_regular_file()) {
      EXPECT_EQ(ReadFile(f.path()).find(key), std::string::npos) << f.path();
    }
  }
  EXPECT_EQ(r.err.find(key), std::string::npos);
  EXPECT_EQ(r.out.find(key), std::string::npos);
}

// Case 3: a key with CR/LF put extra headers on every request; one with a
// trailing newline gave exit 2 "connection closed". Now exit 1 naming it.
TEST_F(E2eHostile, AKeyWithControlCharactersIsRefusedNamingTheVariable) {
  StartProxy(PassThrough);
  const std::string card = WriteCard(proxy_->base_url(), R"(1, "api_key_env": "EVALRUN_HOSTILE_KEY")",
                                     R"({"mmlupro": {"questions": 2, "max_tokens": 64}})");
  for (const auto& [key, says] : std::vector<std::pair<std::string, std::string>>{
           {"abc\r\nX-Evil: injected", "holds a control character"}, {"sk-abc\n", "ends with a newline"}}) {
    BinaryResult r = RunBinary({EvalrunBinary(), "--card", card, "--job", "k", "--out", dir_ + "/runs", "--data-dir",
                                DatasetsDir()},
                               60, {"EVALRUN_HOSTILE_KEY=" + key});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("server.api_key_env: the environment variable EVALRUN_HOSTILE_KEY " + says),
              std::string::npos)
        << r.err;
  }
  EXPECT_TRUE(proxy_->exchanges().empty()) << "a request was sent with the bad key";
}

// Case 4: a burst of 503s that are not "Loading model" was retried 9 times
// in half a second and cut a 4-slot run to 1 in flight for the rest of
// the run. Now: the backoff and Retry-After between attempts, and all 4
// slots busy again afterwards.
TEST_F(E2eHostile, A503BurstIsRetriedAfterRetryAfterAndTheSlotsComeBack) {
  server_->SetResponder([](const nlohmann::json& req) {
    FakeReply r = ShaOfPrompt(req);
    r.delay_ms = 150;
    return r;
  });
  StartProxy([](const ProxiedExchange& x) {
    if (!IsChat(x) || x.n >= 4) return PassThrough(x);
    HostileAction a;
    a.writes.push_back(ReplyBytes(503, R"({"error":{"message":"server busy","type":"server_busy"}})",
                                  "Retry-After: 2\r\n"));
    return a;
  });
  BinaryResult r = Run({"--card", Card(4, 24, 2), "--job", "busy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<ProxiedExchange> chats;
  for (const auto& x : proxy_->exchanges())
    if (IsChat(x)) chats.push_back(x);
  ASSERT_GE(chats.size(), 28u);
  // No retry of a refused question before its Retry-After.
  std::map<std::string, double> refused_at;
  for (const auto& x : chats) {
    auto it = refused_at.find(x.request_body);
    if (it != refused_at.end()) {
      EXPECT_GE(x.at_s - it->second, 1.9) << "retried before Retry-After";
    }
    if (x.n < 4) refused_at[x.request_body] = x.at_s;
  }
  EXPECT_EQ(chats.size(), 28u) << "each refused question asked once more, the others once";
  // After the burst: 4 in flight at once again.
  int most = 0;
  for (size_t i = 4; i < chats.size(); ++i) {
    int overlap = 0;
    for (size_t j = 4; j < chats.size(); ++j)
      overlap += chats[j].at_s <= chats[i].at_s && chats[i].at_s < chats[j].replied_s;
    most = std::max(most, overlap);
  }
  EXPECT_EQ(most, 4) << "the slots never came back after the burst";
}

// Case 4: a 503 that never ends fails after the card's `retries`, with the
// backoff between attempts (it was 9 attempts in 0.3-0.5 s).
TEST_F(E2eHostile, A503ThatNeverEndsFailsAfterTheCardsRetries) {
  StartProxy([](const ProxiedExchange& x) {
    if (!IsChat(x)) return PassThrough(x);
    HostileAction a;
    a.writes.push_back(ReplyBytes(503, "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>", "",
                                  -1, "text/html"));
    return a;
  });
  BinaryResult r = Run({"--card", Card(1, 1, 2), "--job", "storm"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto failed = Lines(JobDir("storm") + "/mmlupro/failed.jsonl");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["attempts"], 3);
  EXPECT_EQ(failed[0]["http_status"], 503);
  std::vector<double> at;
  for (const auto& x : proxy_->exchanges())
    if (IsChat(x)) at.push_back(x.at_s);
  ASSERT_EQ(at.size(), 3u);
  EXPECT_GE(at[1] - at[0], 0.9);  // backoff 1 s, then 2 s
  EXPECT_GE(at[2] - at[1], 1.9);
}

}  // namespace
}  // namespace evalrun::testing
