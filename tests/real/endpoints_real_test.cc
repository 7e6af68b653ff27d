// One card, several real llama-servers (server.endpoints): two servers of 2
// slots each never see more than 2 requests at once nor one deferred
// (polled from each /metrics), and together they answer every item once;
// one killed mid-run leaves the other to finish the work; two servers of
// different models stop the run (exit 1) before any request.
#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "tests/real/counting_proxy.h"
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealEndpoints : public RealLaneTest {
 protected:
  static nlohmann::json TwoEndpoints(const LlamaServer* a, const LlamaServer* b) {
    return {{"endpoints", {{{"base_url", a->base_url()}}, {{"base_url", b->base_url()}}}}, {"slots", "auto"}};
  }
};

TEST_F(RealEndpoints, TwoServersOfTwoSlotsEachAtMostTwoAndEveryItemOnce) {
  LlamaServer* a = StartServer({.parallel = 2, .ctx = 16384});
  LlamaServer* b = StartServer({.parallel = 2, .ctx = 16384});
  ASSERT_TRUE(a->running() && b->running());
  MetricsPoller pa(a->origin()), pb(b->origin());
  pa.Start();
  pb.Start();
  const std::string card =
      WriteCardJson(Card(TwoEndpoints(a, b), {{"mmlupro", {{"questions", 40}, {"max_tokens", 256}}}}));
  BinaryResult r = Run({"--card", card, "--job", "two"});
  pa.Stop();
  pb.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::printf("[ metrics ] a: max processing %d, max deferred %d (%d polls); b: %d, %d (%d polls)\n",
              pa.max_processing(), pa.max_deferred(), pa.polls(), pb.max_processing(), pb.max_deferred(), pb.polls());
  for (const MetricsPoller* p : {&pa, &pb}) {
    EXPECT_GT(p->polls(), 10);
    EXPECT_LE(p->max_processing(), 2);
    EXPECT_GE(p->max_processing(), 1);
    EXPECT_EQ(p->max_deferred(), 0) << "a request waited inside a server";
  }
  std::set<std::string> ids;
  std::set<std::string> endpoints;
  for (const auto& l : Samples("two", "mmlupro")) {
    EXPECT_TRUE(ids.insert(l["id"]).second) << "answered twice: " << l["id"];
    endpoints.insert(l["endpoint"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_EQ(endpoints, (std::set<std::string>{a->base_url(), b->base_url()}));
  const auto p = Results("two")["parts"]["mmlupro"];
  EXPECT_EQ(p["n"], 40);
  EXPECT_EQ(p["slots"], 4);
  ASSERT_EQ(p["endpoints"].size(), 2u);
  EXPECT_EQ(p["endpoints"][0]["n"].get<int>() + p["endpoints"][1]["n"].get<int>(), 40);
  for (const auto& e : p["endpoints"]) EXPECT_LE(e["max_in_flight"].get<int>(), 2) << e.dump();
}

TEST_F(RealEndpoints, OneKilledMidRunTheOtherFinishes) {
  LlamaServer* a = StartServer({.parallel = 2, .ctx = 16384});
  LlamaServer* b = StartServer({.parallel = 2, .ctx = 16384});
  ASSERT_TRUE(a->running() && b->running());
  nlohmann::json c = Card(TwoEndpoints(a, b), {{"mmlupro", {{"questions", 40}, {"max_tokens", 512}}}});
  c["server"]["ready_timeout_s"] = 5;  // a's wait, once it is gone
  const std::string card = WriteCardJson(c);
  std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "kill",
                                   "--out", dir_ + "/runs", "--data-dir", DatasetsDir()};
  const int pid = SpawnBinary(argv, dir_ + "/kill.out", dir_ + "/kill.err");
  ASSERT_GT(pid, 0);
  const std::string samples = JobDir("kill") + "/mmlupro/samples.jsonl";
  for (int i = 0; i < 1200; ++i) {
    const std::string text = ReadFile(samples);
    if (std::count(text.begin(), text.end(), '\n') >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  a->Kill();
  BinaryResult r = WaitBinary(pid, 600);
  const std::string err = ReadFile(dir_ + "/kill.err");
  ASSERT_EQ(r.exit_code, 0) << err;
  std::set<std::string> ids;
  int on_b = 0;
  for (const auto& l : Samples("kill", "mmlupro")) {
    EXPECT_TRUE(ids.insert(l["id"]).second) << "answered twice: " << l["id"];
    on_b += l["endpoint"] == b->base_url();
  }
  EXPECT_EQ(ids.size(), 40u) << err;
  const auto p = Results("kill")["parts"]["mmlupro"];
  EXPECT_EQ(p["failed"], 0);
  std::printf("[ kill ] answered by b (before and after a was killed): %d of 40; a dropped: %s; outages: %s\n", on_b,
              p["endpoints"][0]["dropped"].dump().c_str(), p["outages"].dump().c_str());
  EXPECT_GT(on_b, 20);
  ASSERT_GE(p["outages"].size(), 1u) << p.dump();
  EXPECT_EQ(p["outages"][0]["endpoint"], a->base_url());
}

TEST_F(RealEndpoints, TwoModelsExitOneBeforeAnyRequest) {
  LlamaServer* a = StartServer({.model = "stories260K.gguf", .parallel = 2, .ctx = 4096});
  LlamaServer* b = StartServer({.model = "stories260K-ctx128k.gguf", .parallel = 2, .ctx = 4096});
  ASSERT_TRUE(a->running() && b->running());
  // Every request to either server is counted on its way (CountingProxy).
  CountingProxy pa(a->origin()), pb(b->origin());
  ASSERT_TRUE(pa.Start() && pb.Start());
  nlohmann::json server = {{"endpoints", {{{"base_url", pa.base_url()}}, {{"base_url", pb.base_url()}}}},
                           {"slots", "auto"}};
  const std::string card = WriteCardJson(Card(server, {{"mmlupro", {{"questions", 8}, {"max_tokens", 64}}}}));
  BinaryResult r = Run({"--card", card, "--job", "mixed"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::printf("[ mixed ] %s\n", r.err.c_str());
  for (const char* s : {"model_path", "stories260K.gguf", "stories260K-ctx128k.gguf", "endpoints_differ"})
    EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << r.err;
  EXPECT_GE(pa.Count("GET /props") + pb.Count("GET /props"), 2) << "the identity check did not read /props";
  EXPECT_EQ(pa.Count("POST /v1/chat/completions") + pb.Count("POST /v1/chat/completions"), 0);
  EXPECT_EQ(pa.Count("POST /tokenize") + pb.Count("POST /tokenize"), 0);
}

}  // namespace
}  // namespace evalrun::testing
