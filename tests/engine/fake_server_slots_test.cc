// The fake llama-server's slots, KV cache and metrics against the real
// one's (../shared/reference/llama-server: slots.body, slots_busy.body,
// metrics.body, and what the README says was seen with 6 requests on 4
// slots and with a unified cache outgrown). Loopback only; bounded loops.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fake_server.h"
#include "tests/support/raw_http.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"
#include "tests/support/json_key_paths.h"

namespace evalrun::testing {
namespace {

using nlohmann::json;

std::string Ref(const std::string& name) { return ReadFile(ReferenceDir() + "/" + name); }


std::map<std::string, double> MetricValues(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.find(' ');
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

std::vector<std::string> CommentLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '#') out.push_back(line);
  return out;
}

std::string Chat(const std::string& content, int max_tokens) {
  return json{{"messages", {{{"role", "user"}, {"content", content}}}}, {"max_tokens", max_tokens}}.dump();
}

// Requests sent at once, each on its own connection; their replies.
class Burst {
 public:
  Burst(int port, const std::vector<std::string>& bodies) {
    replies_.resize(bodies.size());
    done_at_.resize(bodies.size());
    for (size_t i = 0; i < bodies.size(); ++i)
      threads_.emplace_back([this, port, i, b = bodies[i]] {
        RawHttp c;
        if (c.Connect(port)) replies_[i] = c.Request("POST", "/v1/chat/completions", b, 30);
        done_at_[i] = std::chrono::steady_clock::now();
      });
  }
  // Waits for every reply (each bounded by its 30 s read timeout).
  const std::vector<RawReply>& Join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
    return replies_;
  }
  const std::vector<std::chrono::steady_clock::time_point>& done_at() const { return done_at_; }
  ~Burst() { Join(); }

 private:
  std::vector<std::thread> threads_;
  std::vector<RawReply> replies_;
  std::vector<std::chrono::steady_clock::time_point> done_at_;
};

class FakeSlotsTest : public ::testing::Test {
 protected:
  void StartServer(const FakeServerOptions& o) {
    server_ = std::make_unique<FakeServer>(o);
    ASSERT_TRUE(server_->Start());
  }
  RawReply Get(const std::string& path) {
    RawHttp c;
    EXPECT_TRUE(c.Connect(server_->port()));
    return c.Request("GET", path);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  std::unique_ptr<FakeServer> server_;
};

TEST_F(FakeSlotsTest, SlotsIdleAndBusyAsTheReference) {
  FakeServerOptions o;
  o.slots = 4;
  o.n_ctx = 2048;
  StartServer(o);
  EXPECT_EQ(Get("/slots").body, Ref("slots.body"));  // byte for byte

  server_->SetResponder([](const json&) {
    FakeReply r;
    r.content = "Once upon a time";
    r.finish_reason = "length";  // never ends: runs to max_tokens
    r.delay_ms = 800;
    return r;
  });
  std::vector<std::string> bodies;
  for (int i = 0; i < 4; ++i) bodies.push_back(Chat("Tell story number " + std::to_string(i), 900));
  Burst burst(server_->port(), bodies);
  json busy;
  for (int i = 0; i < 100; ++i) {  // up to ~2 s
    busy = json::parse(Get("/slots").body);
    bool all = true;
    for (const auto& s : busy) all = all && s["is_processing"] == true && s["next_token"][0]["n_decoded"] > 0;
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const json ref = json::parse(Ref("slots_busy.body"));
  EXPECT_EQ(JsonKeyPaths(busy), JsonKeyPaths(ref));
  for (const auto& s : busy) {
    EXPECT_EQ(s["is_processing"], true);
    EXPECT_EQ(s["n_ctx"], 2048);
    EXPECT_EQ(s["params"]["max_tokens"], 900);
    EXPECT_EQ(s["params"]["chat_format"], ref[0]["params"]["chat_format"]);
    EXPECT_EQ(s["params"]["generation_prompt"], ref[0]["params"]["generation_prompt"]);
    const auto& nt = s["next_token"][0];
    EXPECT_EQ(nt["n_remain"].get<int>() + nt["n_decoded"].get<int>(), 900);
    EXPECT_EQ(nt["has_next_token"], true);
  }
  std::set<int> prompts;
  for (const auto& r : burst.Join()) {
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    EXPECT_EQ(j["usage"]["completion_tokens"], 900);
    prompts.insert(j["usage"]["prompt_tokens"].get<int>());
  }
  for (const auto& s : busy) EXPECT_EQ(prompts.count(s["n_prompt_tokens"].get<int>()), 1u);
  for (const auto& s : json::parse(Get("/slots").body)) EXPECT_EQ(s["is_processing"], false);
}

TEST_F(FakeSlotsTest, MetricsNamesAndLiveGaugesAsTheReference) {
  FakeServerOptions o;
  o.slots = 4;
  o.metrics = true;
  StartServer(o);
  RawReply first = Get("/metrics");
  EXPECT_EQ(first.body, Ref("metrics.body"));  // a fresh server: byte for byte
  EXPECT_EQ(first.Header("Content-Type"), "text/plain; version=0.0.4");
  EXPECT_FALSE(first.Header("Process-Start-Time-Unix").empty());

  server_->SetResponder([](const json&) {
    FakeReply r;
    r.content = "The answer is (B) because it is.";
    r.delay_ms = 600;
    return r;
  });
  std::vector<std::string> bodies;
  for (int i = 0; i < 6; ++i) bodies.push_back(Chat("Question " + std::to_string(i) + ": what is it?", 64));
  Burst burst(server_->port(), bodies);
  std::map<std::string, double> live;
  for (int i = 0; i < 100; ++i) {  // up to ~2 s: 6 requests on 4 slots
    live = MetricValues(Get("/metrics").body);
    if (live["llamacpp:requests_processing"] == 4 && live["llamacpp:requests_deferred"] == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(live["llamacpp:requests_processing"], 4);
  EXPECT_EQ(live["llamacpp:requests_deferred"], 2);  // as the README saw on the real one
  int prompt_sum = 0, completion_sum = 0, longest = 0;
  for (const auto& r : burst.Join()) {
    ASSERT_EQ(r.status, 200);
    const json u = json::parse(r.body)["usage"];
    prompt_sum += u["prompt_tokens"].get<int>();
    completion_sum += u["completion_tokens"].get<int>();
    longest = std::max(longest, u["total_tokens"].get<int>());
  }
  EXPECT_EQ(server_->max_running(), 4);
  EXPECT_EQ(server_->max_waiting(), 2);
  const std::string after = Get("/metrics").body;
  EXPECT_EQ(CommentLines(after), CommentLines(Ref("metrics.body")));  // names, HELP and TYPE lines
  auto m = MetricValues(after);
  EXPECT_EQ(m.size(), MetricValues(Ref("metrics.body")).size());
  EXPECT_EQ(m["llamacpp:requests_processing"], 0);
  EXPECT_EQ(m["llamacpp:requests_deferred"], 0);
  EXPECT_EQ(m["llamacpp:tokens_predicted_total"], completion_sum);
  EXPECT_EQ(m["llamacpp:prompt_tokens_total"] + m["llamacpp:prompt_tokens_cached_total"], prompt_sum);
  EXPECT_EQ(m["llamacpp:n_tokens_max"], longest);
  EXPECT_GT(m["llamacpp:n_decode_total"], 0);
  EXPECT_LT(m["llamacpp:n_decode_total"], completion_sum);  // busy slots share decode calls
  EXPECT_GT(m["llamacpp:n_busy_slots_per_decode"], 1);
  EXPECT_GT(m["llamacpp:tokens_predicted_seconds_total"], 0);
}

TEST_F(FakeSlotsTest, AnOutgrownUnifiedCacheFailsEveryRunningRequestAtOnce) {
  // The real one, -c 1024 --kv-unified -np 4, four ~225-token prompts with
  // max_tokens 400: all four got this 500 together (measured).
  FakeServerOptions o;
  o.slots = 4;
  o.n_ctx = 1024;
  o.kv_unified = true;
  o.kv_size = 1024;
  StartServer(o);
  server_->SetResponder([](const json&) {
    FakeReply r;
    r.finish_reason = "length";
    r.delay_ms = 400;
    return r;
  });
  std::string words;
  for (int i = 0; i < 100; ++i) words += " cat";
  std::vector<std::string> bodies;
  for (int i = 0; i < 4; ++i) bodies.push_back(Chat(std::to_string(i) + words, 400));
  Burst burst(server_->port(), bodies);
  const auto& replies = burst.Join();
  for (const auto& r : replies) {
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(r.body, R"({"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}})");
    EXPECT_EQ(r.Header("Connection"), "close");
  }
  auto [lo, hi] = std::minmax_element(burst.done_at().begin(), burst.done_at().end());
  EXPECT_LT(std::chrono::duration<double>(*hi - *lo).count(), 0.3) << "they did not fail together";
  // The pool is free again: one request alone fits.
  RawHttp c;
  ASSERT_TRUE(c.Connect(server_->port()));
  RawReply alone = c.Request("POST", "/v1/chat/completions", bodies[0]);
  EXPECT_EQ(alone.status, 200);
  EXPECT_EQ(json::parse(alone.body)["usage"]["completion_tokens"], 400);

  // Without a unified cache each slot has its own context: the same load fits.
  o.kv_unified = false;
  server_->SetOptions(o);
  Burst separate(server_->port(), bodies);
  for (const auto& r : separate.Join()) EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(FakeSlotsTest, WaitersAreNotServedInArrivalOrder) {
  FakeServerOptions o;
  o.slots = 1;
  StartServer(o);
  std::mutex mu;
  std::vector<int> served;
  server_->SetResponder([](const json& r) {
    FakeReply reply;
    reply.content = r["messages"][0]["content"];
    reply.delay_ms = r["messages"][0]["content"] == "first" ? 300 : 10;
    return reply;
  });
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    RawHttp c;
    if (c.Connect(server_->port())) c.Request("POST", "/v1/chat/completions", Chat("first", 8));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      RawHttp c;
      if (!c.Connect(server_->port())) return;
      RawReply r = c.Request("POST", "/v1/chat/completions", Chat(std::to_string(i), 8));
      std::lock_guard<std::mutex> l(mu);
      if (r.status == 200) served.push_back(std::stoi(json::parse(r.body)["choices"][0]["message"]["content"].get<std::string>()));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // arrival order 0, 1, 2, ...
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(served.size(), 6u);
  EXPECT_EQ(server_->max_waiting(), 6);
  EXPECT_NE(served, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST_F(FakeSlotsTest, AClientThatLeavesIsCancelledAndFreesItsSlot) {
  // The real one cancels the task of a closed connection ("stop: cancel
  // task"), a non-streamed one within its 1 s polling interval.
  FakeServerOptions o;
  o.slots = 1;
  StartServer(o);
  server_->SetResponder([](const json& r) {
    FakeReply reply;
    reply.content = "ok";
    reply.delay_ms = r["messages"][0]["content"] == "slow" ? 20000 : 0;
    return reply;
  });
  for (bool stream : {false, true}) {
    SCOPED_TRACE(stream ? "stream" : "plain");
    RawHttp slow;
    ASSERT_TRUE(slow.Connect(server_->port()));
    json body = json::parse(Chat("slow", 64));
    body["stream"] = stream;
    ASSERT_TRUE(slow.Send("POST", "/v1/chat/completions", body.dump()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(json::parse(Get("/slots").body)[0]["is_processing"], true);
    slow.Close();
    const auto t0 = std::chrono::steady_clock::now();
    RawHttp next;
    ASSERT_TRUE(next.Connect(server_->port()));
    EXPECT_EQ(next.Request("POST", "/v1/chat/completions", Chat("quick", 8), 5).status, 200);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.5);
  }
}

}  // namespace
}  // namespace evalrun::testing
