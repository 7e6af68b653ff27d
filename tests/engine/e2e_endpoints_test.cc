// End to end: one card, several servers (server.endpoints). The real
// evalrun binary against two fake llama-servers: each keeps at most its own
// slots busy with nothing queued, together they answer every item once,
// each sample says which answered, results.json and run.json have every
// endpoint; a server that goes away mid-run leaves its work to the other;
// two servers serving different things stop the run before any request
// unless the card says they differ on purpose.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

class E2eEndpoints : public E2eTest {
 protected:
  // The fake server's card (test_card.h) with server.endpoints in place of
  // server.base_url, "auto" slots and no retries.
  std::string WriteCard(const std::vector<std::string>& base_urls, int questions,
                        const nlohmann::json& extra_server = nlohmann::json::object(), double ready_timeout_s = 20) {
    nlohmann::json card = TestCard("", {{"mmlupro", {{"questions", questions}, {"max_tokens", 64}}}});
    card["name"] = "e2e-endpoints";
    nlohmann::json& server = card["server"];
    server.erase("base_url");
    for (const auto& u : base_urls) server["endpoints"].push_back({{"base_url", u}});
    server["slots"] = "auto";
    server["ready_timeout_s"] = ready_timeout_s;
    server["retries"] = 0;
    server.update(extra_server);
    return E2eTest::WriteCard(card);
  }
  static FakeReply Answer(int delay_ms) {
    FakeReply r;
    r.content = "**B**";
    r.delay_ms = delay_ms;
    return r;
  }
};

TEST_F(E2eEndpoints, TwoServersEachAtItsSlotsEveryItemOnce) {
  FakeServerOptions o;
  o.slots = 2;
  FakeServer a(o), b(o);
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  a.SetResponder([](const nlohmann::json&) { return Answer(20); });
  b.SetResponder([](const nlohmann::json&) { return Answer(35); });
  const std::string card = WriteCard({a.base_url(), b.base_url()}, 40);
  BinaryResult r = Run({"--card", card, "--job", "two"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(a.max_running(), 2);
  EXPECT_EQ(b.max_running(), 2);
  EXPECT_EQ(a.max_waiting(), 0) << "a request waited in a's queue";
  EXPECT_EQ(b.max_waiting(), 0) << "a request waited in b's queue";
  EXPECT_EQ(a.chat_requests() + b.chat_requests(), 40);

  std::map<std::string, int> by_endpoint;
  std::set<std::string> ids;
  for (const auto& s : Samples("two", "mmlupro")) {
    ids.insert(s["id"].get<std::string>());
    ASSERT_TRUE(s.contains("endpoint")) << s.dump();
    ++by_endpoint[s["endpoint"].get<std::string>()];
  }
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_EQ(by_endpoint[a.base_url()], a.chat_requests());
  EXPECT_EQ(by_endpoint[b.base_url()], b.chat_requests());

  const nlohmann::json p = Results("two")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 40);
  EXPECT_EQ(p["slots"], 4);
  EXPECT_EQ(p["max_in_flight"], 4);
  ASSERT_EQ(p["endpoints"].size(), 2u);
  for (int e = 0; e < 2; ++e) {
    const nlohmann::json& ep = p["endpoints"][e];
    const FakeServer& s = e == 0 ? a : b;
    EXPECT_EQ(ep["base_url"], s.base_url());
    EXPECT_EQ(ep["slots"], 2);
    EXPECT_EQ(ep["n"], s.chat_requests());
    EXPECT_EQ(ep["answered_this_run"], s.chat_requests());
    EXPECT_LE(ep["max_in_flight"].get<int>(), 2);
    EXPECT_TRUE(ep["latency_ms"]["p50"].is_number());
    EXPECT_TRUE(ep["speeds"]["decode_tokens_per_s"].is_number());
    EXPECT_TRUE(ep["dropped"].is_null());
  }
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/two/run.json"));
  ASSERT_EQ(run["endpoints"].size(), 2u);
  EXPECT_EQ(run["endpoints"][1]["base_url"], b.base_url());
  EXPECT_EQ(run["endpoints"][1]["build_info"], "b10470-34af94c");
  EXPECT_EQ(run["slots"], 4);
  ASSERT_EQ(run["run_key"]["endpoints"].size(), 2u);
  EXPECT_EQ(run["run_key"]["endpoints"][0]["model_path"], "models/fake.gguf");
}

TEST_F(E2eEndpoints, ServerGoneMidRunLeavesItsWorkToTheOther) {
  FakeServerOptions o;
  o.slots = 2;
  FakeServer a(o), b(o);
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  std::atomic<int> a_seen{0};
  a.SetResponder([&](const nlohmann::json&) {
    ++a_seen;
    return Answer(40);
  });
  b.SetResponder([](const nlohmann::json&) { return Answer(40); });
  // a goes away for good after a few answers; its wait is short.
  std::thread killer([&] {
    while (a_seen < 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    a.Stop();
  });
  const std::string card = WriteCard({a.base_url(), b.base_url()}, 60, nlohmann::json::object(), 2);
  BinaryResult r = Run({"--card", card, "--job", "kill"});
  killer.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> ids;
  int on_a = 0;
  for (const auto& s : Samples("kill", "mmlupro")) {
    ids.insert(s["id"].get<std::string>());
    on_a += s["endpoint"] == a.base_url();
  }
  EXPECT_EQ(ids.size(), 60u) << "b did not finish a's work";
  EXPECT_LE(on_a, 4);
  const nlohmann::json p = Results("kill")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 60);
  EXPECT_EQ(p["failed"], 0);
  const nlohmann::json& ea = p["endpoints"][0];
  if (ea["dropped"].is_null()) {
    // b finished before a's wait ran out: the wait was cut short.
    ASSERT_FALSE(p["outages"].empty());
    EXPECT_EQ(p["outages"][0]["endpoint"], a.base_url());
  } else {
    EXPECT_NE(ea["dropped"]["reason"].get<std::string>().find("did not come back"), std::string::npos);
    EXPECT_NE(r.err.find("dropping endpoint " + a.base_url()), std::string::npos) << r.err;
  }
}

TEST_F(E2eEndpoints, DifferentModelsExitOneBeforeAnyRequest) {
  FakeServerOptions oa, ob;
  oa.slots = ob.slots = 2;
  ob.model_path = "models/other.gguf";
  ob.n_ctx = 4096;
  FakeServer a(oa), b(ob);
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  const std::string card = WriteCard({a.base_url(), b.base_url()}, 8);
  BinaryResult r = Run({"--card", card, "--job", "mixed"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const char* s : {"model_path", "models/fake.gguf", "models/other.gguf", "n_ctx", "endpoints_differ"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << r.err;
  EXPECT_NE(r.err.find(a.base_url()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(b.base_url()), std::string::npos) << r.err;
  EXPECT_EQ(a.chat_requests() + b.chat_requests(), 0);
  EXPECT_EQ(a.tokenize_requests() + b.tokenize_requests(), 0);
}

TEST_F(E2eEndpoints, DifferentBuildsOnPurposeRunAndRecordTheirEndpoint) {
  FakeServerOptions oa, ob;
  oa.slots = ob.slots = 2;
  ob.build_info = "b9999-0000000";
  FakeServer a(oa), b(ob);
  ASSERT_TRUE(a.Start());
  ASSERT_TRUE(b.Start());
  a.SetResponder([](const nlohmann::json&) { return Answer(10); });
  b.SetResponder([](const nlohmann::json&) { return Answer(10); });
  const std::string card = WriteCard({a.base_url(), b.base_url()}, 20, {{"endpoints_differ", true}});
  BinaryResult r = Run({"--card", card, "--job", "differ"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("build_info"), std::string::npos) << r.err;
  std::set<std::string> endpoints;
  for (const auto& s : Samples("differ", "mmlupro")) endpoints.insert(s.value("endpoint", ""));
  EXPECT_EQ(endpoints, (std::set<std::string>{a.base_url(), b.base_url()}));
  const nlohmann::json run = nlohmann::json::parse(ReadFile(dir_ + "/runs/differ/run.json"));
  EXPECT_EQ(run["endpoints_differ"], true);
  EXPECT_EQ(run["run_key"]["endpoints"][1]["build_info"], "b9999-0000000");
}

TEST_F(E2eEndpoints, OneEndpointSamplesHaveNoEndpointField) {
  FakeServerOptions o;
  o.slots = 2;
  FakeServer a(o);
  ASSERT_TRUE(a.Start());
  a.SetResponder([](const nlohmann::json&) { return Answer(5); });
  const std::string card = E2eTest::WriteCard(a.base_url(), "\"auto\"", R"({"mmlupro": {"questions": 6, "max_tokens": 64}})");
  BinaryResult r = Run({"--card", card, "--job", "one"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& s : Samples("one", "mmlupro")) EXPECT_FALSE(s.contains("endpoint")) << s.dump();
  EXPECT_FALSE(Results("one")["parts"]["mmlupro"].contains("endpoints"));
  EXPECT_FALSE(nlohmann::json::parse(ReadFile(dir_ + "/runs/one/run.json"))["run_key"].contains("endpoints"));
}

}  // namespace
}  // namespace evalrun::testing
