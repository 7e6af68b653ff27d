// The test server and the real llama-server side by side: the same
// requests to both (the real binary and evalrun-fake-server started with
// the same flags), compared on status codes, the headers that matter, the
// recursive key sets of the bodies and the finish reasons, so that the
// imitation cannot drift from the real one again.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "evals/server/http.h"
#include "tests/real/real_lane.h"
#include "tests/support/raw_http.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

// "a.b[].c" paths of every key in a JSON value (arrays merged).
void Keys(const nlohmann::json& j, const std::string& at, std::set<std::string>* out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string p = at.empty() ? it.key() : at + "." + it.key();
      out->insert(p);
      Keys(*it, p, out);
    }
  } else if (j.is_array()) {
    for (const auto& e : j) Keys(e, at + "[]", out);
  }
}
std::set<std::string> KeysOf(const std::string& body) {
  std::set<std::string> k;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded()) Keys(j, "", &k);
  return k;
}
std::set<std::string> MetricNames(const std::string& text) {
  std::set<std::string> names;
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    const std::string line = text.substr(p, e - p);
    if (!line.empty() && line[0] != '#') names.insert(line.substr(0, line.find(' ')));
    p = e + 1;
  }
  return names;
}

// The fake program with llama-server's flags, stopped by its PID.
class FakeProgram {
 public:
  ~FakeProgram() { Stop(); }
  bool Start(std::vector<std::string> flags, const std::string& log) {
    port_ = FreeLoopbackPort();
    std::vector<std::string> argv = {FakeServerBinary(), "--host", "127.0.0.1", "--port",
                                     std::to_string(port_), "--never-stop"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    pid_ = SpawnBinary(argv, log, log + ".err");
    if (pid_ <= 0) return false;
    auto t = MakeHttpTransport("http://127.0.0.1:" + std::to_string(port_), "");
    for (int i = 0; i < 300; ++i) {
      if (t->Get("/health", 1).status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    WaitBinary(pid_, 10);
    pid_ = -1;
  }
  int port() const { return port_; }

 private:
  int pid_ = -1, port_ = 0;
};

struct Both {
  RawReply real, fake;
};

class RealDifferential : public RealLaneTest {
 protected:
  // Starts both with the same llama-server flags (model for the real one).
  void StartBoth(const LlamaServerArgs& args, std::vector<std::string> fake_only = {}) {
    real_ = StartServer(args);
    std::vector<std::string> flags = {"-c", std::to_string(args.ctx)};
    if (args.parallel > 0) flags.insert(flags.end(), {"-np", std::to_string(args.parallel)});
    if (args.kv_unified) flags.push_back("--kv-unified");
    if (args.metrics) flags.push_back("--metrics");
    flags.insert(flags.end(), {"-m", ModelPath(args.model)});
    flags.insert(flags.end(), fake_only.begin(), fake_only.end());
    ASSERT_TRUE(fake_.Start(flags, dir_ + "/fake.log")) << ReadFile(dir_ + "/fake.log.err");
  }
  Both Ask(const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& fake_body = "") {
    Both b;
    RawHttp r, f;
    EXPECT_TRUE(r.Connect(real_->port()));
    EXPECT_TRUE(f.Connect(fake_.port()));
    b.real = r.Request(method, path, body, 120);
    b.fake = f.Request(method, path, fake_body.empty() ? body : fake_body, 120);
    return b;
  }
  // A user message of about `tokens` chat tokens on the server at `port`,
  // counted by that server (the two tokenizers differ: the same situation,
  // not the same bytes).
  static std::string MessageOfTokens(int port, int tokens) {
    auto t = MakeHttpTransport("http://127.0.0.1:" + std::to_string(port), "");
    auto count = [&](int words) {
      std::string text;
      for (int i = 0; i < words; ++i) text += "word ";
      nlohmann::json msgs = {{{"role", "user"}, {"content", text}}};
      auto prompt = nlohmann::json::parse(t->Post("/apply-template", nlohmann::json{{"messages", msgs}}.dump(), 30).body);
      auto toks = nlohmann::json::parse(
          t->Post("/tokenize", nlohmann::json{{"content", prompt["prompt"]}, {"add_special", true}}.dump(), 30).body);
      return std::make_pair(static_cast<int>(toks["tokens"].size()), text);
    };
    int lo = 1, hi = 1;
    while (count(hi).first < tokens && hi < (1 << 20)) hi *= 2;
    while (lo < hi) {  // the fewest words reaching `tokens`
      const int mid = (lo + hi) / 2;
      if (count(mid).first < tokens) lo = mid + 1;
      else hi = mid;
    }
    return count(lo).second;
  }
  static std::string ChatBody(const std::string& message, int max_tokens) {
    return nlohmann::json{{"messages", {{{"role", "user"}, {"content", message}}}}, {"max_tokens", max_tokens},
                          {"temperature", 0}}.dump();
  }
  void ExpectSameShape(const Both& b, const std::string& what) {
    EXPECT_EQ(b.real.status, b.fake.status) << what;
    EXPECT_EQ(b.real.Header("Connection"), b.fake.Header("Connection")) << what;
    EXPECT_EQ(b.real.Header("Keep-Alive"), b.fake.Header("Keep-Alive")) << what;
    EXPECT_EQ(b.real.Header("Content-Type"), b.fake.Header("Content-Type")) << what;
    EXPECT_EQ(KeysOf(b.real.body), KeysOf(b.fake.body)) << what << "\nreal: " << b.real.body.substr(0, 400)
                                                        << "\nfake: " << b.fake.body.substr(0, 400);
  }
  static std::string Finish(const std::string& body) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.contains("choices") || j["choices"].empty()) return "";
    return j["choices"][0].value("finish_reason", "");
  }

  LlamaServer* real_ = nullptr;
  FakeProgram fake_;
};

TEST_F(RealDifferential, EndpointsAnswerAlike) {
  StartBoth({.parallel = 4, .ctx = 8192});
  ExpectSameShape(Ask("GET", "/health"), "GET /health");
  ExpectSameShape(Ask("GET", "/props"), "GET /props");
  ExpectSameShape(Ask("GET", "/slots"), "GET /slots");
  ExpectSameShape(Ask("GET", "/v1/models"), "GET /v1/models");
  Both m = Ask("GET", "/metrics");
  EXPECT_EQ(m.real.status, m.fake.status);
  EXPECT_EQ(MetricNames(m.real.body), MetricNames(m.fake.body));
  ExpectSameShape(Ask("POST", "/tokenize", R"({"content":"Once upon a time"})"), "POST /tokenize");
  ExpectSameShape(Ask("POST", "/apply-template", R"({"messages":[{"role":"user","content":"hi"}]})"),
                  "POST /apply-template");
  ExpectSameShape(Ask("GET", "/no-such-endpoint"), "GET /no-such-endpoint");
  ExpectSameShape(Ask("POST", "/v1/chat/completions", "{not json"), "malformed JSON");
  ExpectSameShape(Ask("POST", "/v1/chat/completions", R"({"max_tokens":4})"), "no messages");
}

TEST_F(RealDifferential, ChatUnderAndOverMaxTokens) {
  StartBoth({.parallel = 4, .ctx = 8192});
  // Over: the answer is cut at max_tokens.
  const std::string over = R"({"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":8,
                              "temperature":0})";
  Both o = Ask("POST", "/v1/chat/completions", over);
  ExpectSameShape(o, "chat over max_tokens");
  EXPECT_EQ(Finish(o.real.body), "length");
  EXPECT_EQ(Finish(o.fake.body), "length");
  // Under: a stop string ends it first.
  const std::string under = R"({"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":256,
                               "temperature":0,"stop":[" and"]})";
  Both u = Ask("POST", "/v1/chat/completions", under);
  ExpectSameShape(u, "chat under max_tokens");
  EXPECT_EQ(Finish(u.real.body), "stop") << u.real.body;
  EXPECT_EQ(Finish(u.fake.body), "stop") << u.fake.body;
  // The same on the plain completion endpoint.
  ExpectSameShape(Ask("POST", "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":8})"),
                  "v1 completions");
}

TEST_F(RealDifferential, APromptOverTheSlotContextIsRefusedAlike) {
  StartBoth({.parallel = 4, .ctx = 8192});  // 2048 a slot
  Both b = Ask("POST", "/v1/chat/completions", ChatBody(MessageOfTokens(real_->port(), 2100), 8),
               ChatBody(MessageOfTokens(fake_.port(), 2100), 8));
  ExpectSameShape(b, "prompt over the slot context");
  EXPECT_EQ(b.real.status, 400);
  EXPECT_EQ(b.real.Header("Connection"), "close");
  auto j = nlohmann::json::parse(b.real.body);
  EXPECT_EQ(j["error"]["type"], "exceed_context_size_error");
  EXPECT_EQ(nlohmann::json::parse(b.fake.body)["error"]["type"], "exceed_context_size_error");
}

TEST_F(RealDifferential, ASharedPoolOverflowFailsEveryRunningRequestAlike) {
  // 4 slots sharing 4096 tokens: four ~700-token prompts with 600 tokens to
  // write cannot all fit.
  // The fake writes 5 ms a token (the real one takes its own time), so the
  // four run together as they do on the real server.
  StartBoth({.parallel = 4, .ctx = 4096, .kv_unified = true}, {"--ms-per-token", "5"});
  for (int port : {real_->port(), fake_.port()}) {
    const std::string body = ChatBody(MessageOfTokens(port, 700), 600);
    std::vector<RawReply> replies(4);
    std::vector<std::thread> t;
    for (int i = 0; i < 4; ++i)
      t.emplace_back([&, i] {
        RawHttp c;
        ASSERT_TRUE(c.Connect(port));
        replies[i] = c.Request("POST", "/v1/chat/completions", body, 300);
      });
    for (auto& th : t) th.join();
    const char* who = port == real_->port() ? "real" : "fake";
    for (const auto& r : replies) {
      EXPECT_EQ(r.status, 500) << who << ": " << r.body.substr(0, 300);
      EXPECT_NE(r.body.find("Context size has been exceeded."), std::string::npos) << who << ": " << r.body;
      EXPECT_EQ(r.Header("Connection"), "close") << who;
    }
  }
}

}  // namespace
}  // namespace evalrun::testing
