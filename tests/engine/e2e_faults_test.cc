// End to end: the real evalrun binary against the fake llama-server when the
// server misbehaves. Each fault is played twice in one run: on one question
// it is transient (the first attempt(s) fail, then a good answer comes) and
// on another it is permanent (every attempt fails). The transient question
// must end with the good answer recorded and `attempts` > 1, the permanent
// one in failed.jsonl with the error (exit 3 above max_failed), and nothing
// may ever be scored from a faulty reply. Resuming the job (same --job)
// must then ask exactly the failed question again and finish with exit 0.
//
// Retries back off 1 s (then 2 s) before each further attempt, so the card
// asks for as few retries as the case needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "evals/base/sha256.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

constexpr const char* kGood = "Answer: B";  // first-letter extraction: "B"
constexpr const char* kBad = "Answer: J";   // what a faulty reply carries, where it carries content

std::string PromptOf(const nlohmann::json& request) {
  const auto& m = request["messages"];
  return m.empty() ? std::string() : m.back().value("content", std::string());
}

FakeReply Good() { return FakeReply{kGood, "", "stop"}; }

// Answers by role. The first distinct question (prompt text) the server sees
// becomes "transient": `fault` on its first `transient_failures` attempts,
// then the good answer. The second becomes "permanent": `fault` on every
// attempt. Every other question gets the good answer at once. Questions
// with a prompt longer than `max_role_bytes` get no role. Thread-safe.
class FaultScript {
 public:
  FaultScript(FakeReply fault, int transient_failures, size_t max_role_bytes = SIZE_MAX)
      : fault_(fault), transient_failures_(transient_failures), max_role_bytes_(max_role_bytes) {}

  FakeReply Reply(const nlohmann::json& request) {
    const std::string prompt = PromptOf(request);
    std::lock_guard<std::mutex> l(mu_);
    int attempt = ++attempts_[prompt];
    if (attempt == 1 && prompt.size() <= max_role_bytes_) {
      if (transient_.empty()) {
        transient_ = prompt;
      } else if (permanent_.empty()) {
        permanent_ = prompt;
      }
    }
    if (prompt == permanent_ || (prompt == transient_ && attempt <= transient_failures_)) return fault_;
    return Good();
  }

  std::string transient() const {
    std::lock_guard<std::mutex> l(mu_);
    return transient_;
  }
  std::string permanent() const {
    std::lock_guard<std::mutex> l(mu_);
    return permanent_;
  }
  int attempts(const std::string& prompt) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = attempts_.find(prompt);
    return it == attempts_.end() ? 0 : it->second;
  }

 private:
  const FakeReply fault_;
  const int transient_failures_;
  const size_t max_role_bytes_;
  mutable std::mutex mu_;
  std::map<std::string, int> attempts_;
  std::string transient_, permanent_;
};

// Records the prompts of every chat request. Thread-safe.
class Recorder {
 public:
  FakeReply Reply(const nlohmann::json& request) {
    std::lock_guard<std::mutex> l(mu_);
    prompts_.push_back(PromptOf(request));
    return Good();
  }
  std::vector<std::string> prompts() const {
    std::lock_guard<std::mutex> l(mu_);
    return prompts_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> prompts_;
};

FakeReply WithFault(Fault f) {
  FakeReply r{kBad, "", "stop"};
  r.fault = f;
  return r;
}

struct CardOptions {
  int questions = 4;
  int slots = 2;
  int retries = 1;
  int max_failed = 0;
  double request_timeout_base_s = 30;
  double min_decode_tps = 2;
};

// What the permanent failure must look like in failed.jsonl.
struct Failure {
  std::string error;      // a part of the error text
  int http_status = 0;    // of the last attempt; 0: no reply
  int attempts = 0;
};

class E2eFaults : public E2eTest {
 protected:
  // The fake server's card (test_card.h) with `c`'s figures.
  std::string WriteFaultCard(const std::string& base_url, const CardOptions& c) {
    nlohmann::json card = TestCard(base_url, {{"mmlupro", {{"questions", c.questions}, {"max_tokens", 64}}}});
    card["name"] = "faults";
    card["server"]["slots"] = c.slots;
    card["server"]["retries"] = c.retries;
    card["server"]["request_timeout_base_s"] = c.request_timeout_base_s;
    card["server"]["min_decode_tps"] = c.min_decode_tps;
    card["max_failed"] = c.max_failed;
    return WriteCard(card);
  }

  std::string PartDir(const std::string& job) { return dir_ + "/runs/" + job + "/mmlupro"; }

  std::set<std::string> PlannedIds(const nlohmann::json& results) {
    std::set<std::string> ids;
    for (const auto& id : results["parts"]["mmlupro"]["info"]["ids"]) ids.insert(id.get<std::string>());
    return ids;
  }

  // Resumes job `job` against a healthy server: only the questions in
  // `failed_prompts` may be asked, each once; the lines written before stay
  // byte-identical and the job completes with exit 0.
  void ResumeAsksExactly(FakeServer* server, const std::string& card, const std::string& job,
                         const std::set<std::string>& failed_prompts, int questions) {
    const std::string samples_path = PartDir(job) + "/samples.jsonl";
    const std::string before = ReadFile(samples_path);
    const size_t lines_before = Samples(job, "mmlupro").size();
    Recorder rec;
    server->SetResponder([&](const nlohmann::json& req) { return rec.Reply(req); });
    BinaryResult r = Run({"--card", card, "--job", job}, 60);
    server->SetResponder([](const nlohmann::json&) { return Good(); });
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> asked = rec.prompts();
    std::multiset<std::string> asked_set(asked.begin(), asked.end());
    EXPECT_EQ(asked_set, std::multiset<std::string>(failed_prompts.begin(), failed_prompts.end()))
        << "resume must ask exactly the failed questions, once each";

    const std::string after = ReadFile(samples_path);
    ASSERT_GE(after.size(), before.size());
    EXPECT_EQ(after.substr(0, before.size()), before) << "lines written before the resume changed";
    auto samples = Samples(job, "mmlupro");
    ASSERT_EQ(samples.size(), static_cast<size_t>(questions));
    std::set<std::string> shas;
    for (const auto& p : failed_prompts) shas.insert(Sha256Hex(p));
    std::set<std::string> ids;
    for (size_t i = 0; i < samples.size(); ++i) {
      ids.insert(samples[i]["id"].get<std::string>());
      if (i >= lines_before) {
        EXPECT_EQ(shas.count(samples[i]["prompt_sha256"].get<std::string>()), 1u) << samples[i].dump();
        EXPECT_EQ(samples[i]["attempts"], 1);
        EXPECT_EQ(samples[i]["response"], kGood);
      }
    }
    EXPECT_EQ(ids.size(), samples.size()) << "an id answered twice";
    auto results = Results(job);
    const auto& p = results["parts"]["mmlupro"];
    EXPECT_EQ(p["n"], questions);
    EXPECT_EQ(p["failed"], 0);
    EXPECT_EQ(p["complete"], true);
    EXPECT_EQ(ids, PlannedIds(results));
  }

  // Plays `fault` transiently on one question (`transient_failures` failed
  // attempts, then a good answer) and permanently on another, checks what
  // the run recorded, then resumes.
  void PlayFault(const FakeReply& fault, int transient_failures, const CardOptions& c, const Failure& expect,
                 size_t max_role_bytes = SIZE_MAX) {
    FakeServerOptions o;
    o.slots = 6;  // room for hung handlers besides the card's 2 requests in flight
    // Declared before the server: its handlers use it until it stops.
    FaultScript script(fault, transient_failures, max_role_bytes);
    FakeServer server(o);
    ASSERT_TRUE(server.Start());
    server.SetResponder([&](const nlohmann::json& req) { return script.Reply(req); });
    const std::string card = WriteFaultCard(server.base_url(), c);

    BinaryResult r = Run({"--card", card, "--job", "f"}, 60);
    ASSERT_FALSE(r.timed_out);
    ASSERT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("1 requests failed (tolerance max_failed = 0)"), std::string::npos) << r.err;
    const std::string transient = script.transient(), permanent = script.permanent();
    ASSERT_FALSE(transient.empty());
    ASSERT_FALSE(permanent.empty());
    EXPECT_EQ(script.attempts(transient), transient_failures + 1);
    EXPECT_EQ(script.attempts(permanent), expect.attempts);

    // Answers: the good one everywhere; the transient question after retries.
    auto samples = Samples("f", "mmlupro");
    ASSERT_EQ(samples.size(), static_cast<size_t>(c.questions - 1));
    std::set<std::string> ids;
    bool saw_transient = false;
    for (const auto& s : samples) {
      ids.insert(s["id"].get<std::string>());
      const std::string sha = s["prompt_sha256"].get<std::string>();
      EXPECT_NE(sha, Sha256Hex(permanent)) << "the permanently failing question has a sample line";
      EXPECT_EQ(s["response"], kGood) << "scored from a faulty reply: " << s.dump().substr(0, 300);
      EXPECT_EQ(s["extracted"], "B");
      const bool is_transient = sha == Sha256Hex(transient);
      saw_transient |= is_transient;
      EXPECT_EQ(s["attempts"], is_transient ? transient_failures + 1 : 1) << s["id"];
    }
    EXPECT_TRUE(saw_transient);
    EXPECT_EQ(ids.size(), samples.size());

    // The failure: one line naming the question, the error and the attempts.
    auto failed = Lines(PartDir("f") + "/failed.jsonl");
    ASSERT_EQ(failed.size(), 1u);
    const std::string failed_id = failed[0]["id"].get<std::string>();
    EXPECT_EQ(ids.count(failed_id), 0u);
    EXPECT_NE(failed[0]["error"].get<std::string>().find(expect.error), std::string::npos) << failed[0].dump();
    EXPECT_EQ(failed[0]["http_status"], expect.http_status) << failed[0].dump();
    EXPECT_EQ(failed[0]["attempts"], expect.attempts);
    EXPECT_TRUE(failed[0]["time_utc"].is_string());

    auto results = Results("f");
    const auto& p = results["parts"]["mmlupro"];
    EXPECT_EQ(p["n"], c.questions - 1);
    EXPECT_EQ(p["failed"], 1);
    EXPECT_EQ(p["complete"], false);
    std::set<std::string> all = ids;
    all.insert(failed_id);
    EXPECT_EQ(all, PlannedIds(results));

    ResumeAsksExactly(&server, card, "f", {permanent}, c.questions);
    auto resumed = Samples("f", "mmlupro");
    ASSERT_FALSE(resumed.empty());
    EXPECT_EQ(resumed.back()["id"], failed_id);
  }
};

TEST_F(E2eFaults, Http500) {
  PlayFault(WithFault(Fault::kHttp500), 1, CardOptions{},
            {"HTTP 500: Internal server error", 500, 2});
}

TEST_F(E2eFaults, Http503TwiceThenAnswer) {
  CardOptions c;
  c.retries = 2;
  PlayFault(WithFault(Fault::kHttp503), 2, c, {"HTTP 503: Loading model", 503, 3});
}

TEST_F(E2eFaults, Http429) {
  PlayFault(WithFault(Fault::kHttp429), 1, CardOptions{}, {"HTTP 429: Too many requests", 429, 2});
}

TEST_F(E2eFaults, ConnectionResetMidBody) {
  PlayFault(WithFault(Fault::kResetMidBody), 1, CardOptions{},
            {"connection closed or reset while reading the reply", 0, 2});
}

TEST_F(E2eFaults, MalformedJsonIn200) {
  PlayFault(WithFault(Fault::kMalformedJson), 1, CardOptions{},
            {"HTTP 200 but reply is not valid JSON", 200, 2});
}

TEST_F(E2eFaults, EmptyChoicesIn200) {
  PlayFault(WithFault(Fault::kEmptyChoices), 1, CardOptions{}, {"HTTP 200 but reply has no choices", 200, 2});
}

TEST_F(E2eFaults, ErrorObjectIn200) {
  PlayFault(WithFault(Fault::kErrorIn200), 1, CardOptions{},
            {"HTTP 200 but reply carries an error: slot failed", 200, 2});
}

// A 4xx other than 429 is the request's fault: never asked again within the
// run (one attempt), but asked again on resume.
TEST_F(E2eFaults, Http400IsNotRetried) {
  CardOptions c;
  c.retries = 2;
  // No transient role: a 400 is never retried, so it cannot be transient.
  PlayFault(WithFault(Fault::kHttp400), 0, c, {"HTTP 400: bad request", 400, 1});
}

// A server that accepts the request and never answers: the client gives up
// after its per-request timeout (base + max_tokens / min_decode_tps + the
// prompt at 50 tokens/s, ~4 bytes a token). The card makes the first two
// terms small (0.3 s + 64/1000 s); the roles go to questions whose prompt is
// at most 400 bytes (4 of the 30 seeded ones), so each attempt times out
// within ~2.4 s. The hung handlers are released when the fake server stops.
TEST_F(E2eFaults, HangPastTheTimeout) {
  FakeReply hang = WithFault(Fault::kHang);
  hang.hang_ms = 120000;
  CardOptions c;
  c.questions = 30;
  c.request_timeout_base_s = 0.3;
  c.min_decode_tps = 1000;
  PlayFault(hang, 1, c, {"no reply within", 0, 2}, 400);
}

// All running requests fail with llama-server's shared-context 500 when one
// of them overflows the context. The fourth question triggers it once all
// four are in their slots: every one of them fails once, goes back to the
// queue (a capacity failure is not an attempt) and is answered when asked
// again, with fewer beside it (admission tightened).
TEST_F(E2eFaults, ContextOverflowFailsAllRunningThenRetried) {
  FakeServerOptions o;
  o.slots = 4;
  // Declared before the server: its handlers use them until it stops.
  std::mutex mu;
  std::map<std::string, int> attempts;
  int distinct = 0;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder([&](const nlohmann::json& req) {
    const std::string prompt = PromptOf(req);
    int attempt, order;
    {
      std::lock_guard<std::mutex> l(mu);
      attempt = ++attempts[prompt];
      order = attempt == 1 ? ++distinct : 0;
    }
    if (attempt > 1) return Good();
    FakeReply r{kBad, "", "stop"};
    if (order < 4) {
      r.delay_ms = 20000;  // cut short by the overflow
      return r;
    }
    // Overflow once the other three hold their slots.
    for (int i = 0; i < 2000 && server.max_running() < 3; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    r.fault = Fault::kContextOverflow;
    return r;
  });
  CardOptions c;
  c.slots = 4;
  const std::string card = WriteFaultCard(server.base_url(), c);
  BinaryResult r = Run({"--card", card, "--job", "o"}, 60);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Samples("o", "mmlupro");
  ASSERT_EQ(samples.size(), 4u);
  for (const auto& s : samples) {
    EXPECT_EQ(s["attempts"], 1) << s["id"];
    EXPECT_EQ(s["response"], kGood);
  }
  EXPECT_EQ(server.chat_requests(), 8);
  EXPECT_EQ(ReadFile(PartDir("o") + "/failed.jsonl"), "") << "a request failed";
  const auto part = Results("o")["parts"]["mmlupro"];
  EXPECT_EQ(part["failed"], 0);
  EXPECT_EQ(part["admission"]["capacity_returns"], 4) << part["admission"].dump();
  EXPECT_EQ(part["admission"]["capacity_tightenings"], 1) << part["admission"].dump();
}

// One question overflows the context every time it runs. It goes back to
// the queue until its limit of returns and then fails for good, with
// llama-server's message; the admission tightens until it runs alone, so
// the questions beside it are answered. Whatever failed is asked again on
// resume, and only that.
TEST_F(E2eFaults, ContextOverflowPermanent) {
  FakeServerOptions o;
  o.slots = 4;
  // Declared before the server: its handlers use them until it stops.
  std::mutex mu;
  std::string culprit;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  server.SetResponder([&](const nlohmann::json& req) {
    const std::string prompt = PromptOf(req);
    FakeReply r = Good();
    r.delay_ms = 100;
    std::lock_guard<std::mutex> l(mu);
    if (culprit.empty()) culprit = prompt;
    if (prompt == culprit) r.fault = Fault::kContextOverflow;
    return r;
  });
  CardOptions c;
  c.slots = 4;
  c.questions = 6;
  const std::string card = WriteFaultCard(server.base_url(), c);
  BinaryResult r = Run({"--card", card, "--job", "p"}, 60);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 3) << r.err;

  auto failed = Lines(PartDir("p") + "/failed.jsonl");
  ASSERT_GE(failed.size(), 1u);
  std::set<std::string> failed_ids;
  for (const auto& f : failed) {
    failed_ids.insert(f["id"].get<std::string>());
    EXPECT_EQ(f["error"], "the server had no room for this request 8 times (last: POST /v1/chat/completions: "
                          "HTTP 500: Context size has been exceeded.)");
    EXPECT_EQ(f["http_status"], 500);
    EXPECT_EQ(f["attempts"], 9);
  }
  EXPECT_EQ(failed_ids.size(), failed.size());
  auto samples = Samples("p", "mmlupro");
  std::set<std::string> answered;
  for (const auto& s : samples) {
    answered.insert(s["id"].get<std::string>());
    EXPECT_NE(s["prompt_sha256"], Sha256Hex(culprit));
    EXPECT_EQ(s["response"], kGood);
  }
  EXPECT_EQ(answered.size() + failed_ids.size(), 6u);
  std::set<std::string> all = answered;
  all.insert(failed_ids.begin(), failed_ids.end());
  EXPECT_EQ(all, PlannedIds(Results("p")));
  EXPECT_EQ(Results("p")["parts"]["mmlupro"]["failed"], static_cast<int>(failed_ids.size()));

  // The prompts of the failed ids, as the server saw them.
  std::set<std::string> failed_prompts;
  for (const auto& req : server.requests()) {
    const std::string p = PromptOf(req);
    bool answered_prompt = false;
    for (const auto& s : samples) answered_prompt |= s["prompt_sha256"] == Sha256Hex(p);
    if (!answered_prompt) failed_prompts.insert(p);
  }
  EXPECT_EQ(failed_prompts.size(), failed_ids.size());
  EXPECT_EQ(failed_prompts.count(culprit), 1u);
  ResumeAsksExactly(&server, card, "p", failed_prompts, 6);
}

// A 20 MB answer is a valid (huge) answer: recorded whole and scored.
TEST_F(E2eFaults, TwentyMegabyteAnswerIsRecordedAndScored) {
  // Declared before the server: its handlers use them until it stops.
  std::mutex mu;
  std::string huge_prompt;
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([&](const nlohmann::json& req) {
    std::lock_guard<std::mutex> l(mu);
    if (huge_prompt.empty()) huge_prompt = PromptOf(req);
    if (PromptOf(req) != huge_prompt) return Good();
    FakeReply r{"Answer: D", "", "stop"};
    r.fault = Fault::kHugeBody;
    return r;
  });
  CardOptions c;
  c.questions = 3;
  const std::string card = WriteFaultCard(server.base_url(), c);
  BinaryResult r = Run({"--card", card, "--job", "h"}, 60);
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Samples("h", "mmlupro");
  ASSERT_EQ(samples.size(), 3u);
  int huge = 0;
  for (const auto& s : samples) {
    const std::string response = s["response"].get<std::string>();
    EXPECT_EQ(s["attempts"], 1);
    if (s["prompt_sha256"] == Sha256Hex(huge_prompt)) {
      ++huge;
      EXPECT_EQ(response.size(), 20u * 1024 * 1024 + 10);
      EXPECT_EQ(response.substr(response.size() - 10), "\nAnswer: D");
      EXPECT_EQ(s["extracted"], "D");
      EXPECT_EQ(s["correct"], s["gold"] == "D");
    } else {
      EXPECT_EQ(response, kGood);
    }
  }
  EXPECT_EQ(huge, 1);
  EXPECT_EQ(Results("h")["parts"]["mmlupro"]["n"], 3);
  EXPECT_EQ(server.chat_requests(), 3);
}

// Failures up to the card's max_failed are tolerated: exit 0, still recorded.
TEST_F(E2eFaults, FailuresWithinMaxFailedExitZero) {
  // Declared before the server: its handlers use them until it stops.
  FaultScript script(WithFault(Fault::kHttp500), 0);
  FakeServer server;
  ASSERT_TRUE(server.Start());
  server.SetResponder([&](const nlohmann::json& req) { return script.Reply(req); });
  CardOptions c;
  c.questions = 3;
  c.retries = 0;
  c.max_failed = 1;
  const std::string card = WriteFaultCard(server.base_url(), c);
  BinaryResult r = Run({"--card", card, "--job", "m"}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto failed = Lines(PartDir("m") + "/failed.jsonl");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["attempts"], 1);
  EXPECT_EQ(Samples("m", "mmlupro").size(), 2u);
  EXPECT_EQ(Results("m")["parts"]["mmlupro"]["failed"], 1);
  EXPECT_EQ(server.chat_requests(), 3);
}

}  // namespace
}  // namespace evalrun::testing
