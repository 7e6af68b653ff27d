// The fake llama-server against the real one's replies
// (../shared/reference/llama-server, captured from llama-server b10470):
// status codes, the headers that matter, the recursive key sets of the
// bodies, the values that mean something, and the connection behaviour
// (Keep-Alive, closes after errors and streams, the 5 s idle close, 100
// replies per connection). Loopback only; every loop is bounded.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
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

std::string Ref(const std::string& name) {
  std::string text = ReadFile(ReferenceDir() + "/" + name);
  EXPECT_FALSE(text.empty()) << "missing reference reply " << name;
  return text;
}

// JsonKeyPaths of a reply's text, or of a value.
std::set<std::string> KeyPaths(const std::string& text) { return JsonKeyPaths(json::parse(text)); }
std::set<std::string> KeyPaths(const json& j) { return JsonKeyPaths(j); }

// The JSON events of an SSE body ("data: {...}"), and whether it ended with [DONE].
std::vector<json> Events(const std::string& body, bool* done) {
  std::vector<json> out;
  *done = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    std::string ev = body.substr(pos, end - pos);
    pos = end + 2;
    if (ev.rfind("data: ", 0) != 0) continue;
    ev.erase(0, 6);
    if (ev == "[DONE]") *done = true;
    else out.push_back(json::parse(ev));
  }
  return out;
}

// A user message whose chat prompt costs exactly `tokens` tokens (BOS included).
json MessagesOfPromptTokens(int tokens) {
  const int base = FakeTokenCount(FakeApplyTemplate(json::array({{{"role", "user"}, {"content", ""}}}))) + 1;
  std::string content;
  for (int i = 0; i < tokens - base; ++i) content += (i ? " w" : "w") + std::to_string(i);
  json m = json::array({{{"role", "user"}, {"content", content}}});
  EXPECT_EQ(FakeTokenCount(FakeApplyTemplate(m)) + 1, tokens);
  return m;
}

std::string Chat(const json& messages, const json& extra = json::object()) {
  json b = {{"messages", messages}};
  b.update(extra);
  return b.dump();
}

const json kHello = json::array({{{"role", "user"}, {"content", "Hello there"}}});

class FakeServerTest : public ::testing::Test {
 protected:
  void StartServer(FakeServerOptions o = {}) {
    server_ = std::make_unique<FakeServer>(o);
    ASSERT_TRUE(server_->Start());
    ASSERT_TRUE(conn_.Connect(server_->port()));
  }
  void TearDown() override {
    conn_.Close();
    if (server_) server_->Stop();
  }
  // The reply's headers: the reference's names in the reference's order,
  // and the same values where they matter.
  void ExpectHeadersAsReference(const RawReply& r, const std::string& ref_name) {
    RawReply ref = ParseHeadersFile(Ref(ref_name + ".headers"));
    EXPECT_EQ(r.status, ref.status) << ref_name;
    EXPECT_EQ(r.HeaderNames(), ref.HeaderNames()) << ref_name;
    for (const char* h : {"Server", "Content-Type", "Keep-Alive", "Connection", "Transfer-Encoding",
                          "X-Accel-Buffering", "Access-Control-Allow-Origin"})
      EXPECT_EQ(r.Header(h), ref.Header(h)) << ref_name << ": " << h;
    if (!r.Header("Content-Length").empty()) {
      EXPECT_EQ(r.Header("Content-Length"), std::to_string(r.body.size())) << ref_name;
    }
  }

  std::unique_ptr<FakeServer> server_;
  RawHttp conn_;
};

TEST_F(FakeServerTest, HeadersAndStatusesAsTheReference) {
  FakeServerOptions o;
  o.metrics = true;
  StartServer(o);
  struct Case {
    const char* ref;
    const char* method;
    const char* path;
    std::string body;
  } cases[] = {
      {"health", "GET", "/health", ""},
      {"props", "GET", "/props", ""},
      {"slots", "GET", "/slots", ""},
      {"metrics", "GET", "/metrics", ""},
      {"models", "GET", "/models", ""},
      {"v1_models", "GET", "/v1/models", ""},
      {"tokenize", "POST", "/tokenize", R"({"content": "Once upon a time"})"},
      {"detokenize", "POST", "/detokenize", R"({"tokens": [3, 4]})"},
      {"chat_nonstream", "POST", "/v1/chat/completions", Chat(kHello, {{"max_tokens", 16}})},
      {"err_badjson", "POST", "/v1/chat/completions", "{bad"},
      {"err_nomsg", "POST", "/v1/chat/completions", "{}"},
      {"err_toolong", "POST", "/v1/chat/completions", Chat(MessagesOfPromptTokens(9000))},
      {"chat_stream", "POST", "/v1/chat/completions", Chat(kHello, {{"max_tokens", 16}, {"stream", true}})},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.ref);
    ASSERT_TRUE(conn_.Connect(server_->port()));
    RawReply r = conn_.Request(c.method, c.path, c.body);
    ExpectHeadersAsReference(r, c.ref);
    // Closed after an error or a stream, kept open otherwise.
    const bool closes = r.status >= 400 || r.Header("Transfer-Encoding") == "chunked";
    EXPECT_EQ(conn_.ClosedWithin(closes ? 2.0 : 0.2), closes);
  }
}

TEST_F(FakeServerTest, ErrorBodiesAsTheReference) {
  StartServer();
  EXPECT_EQ(conn_.Request("POST", "/v1/chat/completions", "{bad").body, Ref("err_badjson.body"));
  ASSERT_TRUE(conn_.Connect(server_->port()));
  EXPECT_EQ(conn_.Request("POST", "/v1/chat/completions", "{}").body, Ref("err_nomsg.body"));
  // As the real binary answers (llama-server b10470, measured).
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    int status;
    const char* reply;
  } cases[] = {
      {"GET", "/nope", "", 404, R"({"error":{"message":"File Not Found","type":"not_found_error","code":404}})"},
      {"GET", "/v1/chat/completions", "", 404,
       R"({"error":{"message":"File Not Found","type":"not_found_error","code":404}})"},
      {"GET", "/metrics", "", 501,
       R"({"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with `--metrics`","type":"not_supported_error"}})"},
      {"POST", "/v1/chat/completions", R"({"messages": "x"})", 400,
       R"({"error":{"code":400,"message":"Expected 'messages' to be an array","type":"invalid_request_error"}})"},
      {"POST", "/v1/chat/completions", R"({"messages": [{"role": "user"}]})", 400,
       R"({"error":{"code":400,"message":"All non-assistant messages must contain 'content'","type":"invalid_request_error"}})"},
      {"POST", "/v1/chat/completions", R"({"messages": [], "max_tokens": -5})", 400,
       R"({"error":{"code":400,"message":"Field 'max_tokens': Value must be between -1 <= value <= 2147483647, but got -5","type":"invalid_request_error"}})"},
      {"POST", "/v1/chat/completions", R"({"messages": [], "max_tokens": "7"})", 400,
       R"({"error":{"code":400,"message":"Field 'max_tokens': [json.exception.type_error.302] type must be number, but is string","type":"invalid_request_error"}})"},
      {"POST", "/v1/chat/completions", R"({"messages": [], "stream": "yes"})", 400,
       R"({"error":{"code":400,"message":"Field 'stream': [json.exception.type_error.302] type must be boolean, but is string","type":"invalid_request_error"}})"},
      {"POST", "/v1/chat/completions", R"({"messages": [], "stream": true, "stream_options": {"include_usage": "x"}})", 400,
       R"({"error":{"code":400,"message":"Field 'include_usage': [json.exception.type_error.302] type must be boolean, but is string","type":"invalid_request_error"}})"},
      {"POST", "/v1/chat/completions", "[1, 2]", 400,
       R"({"error":{"code":400,"message":"'messages' is required","type":"invalid_request_error"}})"},
      {"POST", "/tokenize", R"({"content": 5})", 500,
       R"({"error":{"code":500,"message":"[json.exception.type_error.302] type must be string, but is number","type":"server_error"}})"},
      {"POST", "/tokenize", R"({"other": 1})", 200, R"({"tokens":[]})"},
      {"POST", "/detokenize", R"({"tokens": "x"})", 500,
       R"({"error":{"code":500,"message":"[json.exception.type_error.302] type must be array, but is string","type":"server_error"}})"},
      {"POST", "/apply-template", R"({"x": 1})", 400,
       R"({"error":{"code":400,"message":"'messages' is required","type":"invalid_request_error"}})"},
      {"POST", "/apply-template", R"({"messages": "x"})", 400,
       R"({"error":{"code":400,"message":"Expected 'messages' to be an array","type":"invalid_request_error"}})"},
      {"POST", "/completion", "{}", 400,
       R"({"error":{"code":400,"message":"[json.exception.out_of_range.403] key 'prompt' not found","type":"invalid_request_error"}})"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.path + " " + c.body);
    ASSERT_TRUE(conn_.Connect(server_->port()));
    RawReply r = conn_.Request(c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status);
    EXPECT_EQ(r.body, c.reply);
    EXPECT_EQ(r.Header("Connection"), c.status >= 400 ? "close" : "");
  }
}

TEST_F(FakeServerTest, ApiKeyNoSlotsAndPostProps) {
  // As the real one started with --api-key sekret --no-slots (measured).
  FakeServerOptions o;
  o.api_key = "sekret";
  o.slots_endpoint = false;
  StartServer(o);
  const std::string denied = R"({"error":{"message":"Invalid API Key","type":"authentication_error","code":401}})";
  struct Case {
    const char* method;
    const char* path;
    const char* header;
    int status;
  } cases[] = {{"GET", "/health", "", 200},     {"GET", "/v1/models", "", 200},
               {"GET", "/props", "", 401},      {"POST", "/tokenize", "", 401},
               {"POST", "/v1/chat/completions", "Authorization: Bearer wrong\r\n", 401},
               {"GET", "/props", "Authorization: Bearer sekret\r\n", 200},
               {"GET", "/slots", "X-Api-Key: sekret\r\n", 501}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.path + " " + c.header);
    ASSERT_TRUE(conn_.Connect(server_->port()));
    RawReply r = conn_.Request(c.method, c.path, "", 10,
                               std::string(c.header) + (std::string(c.method) == "POST" ? "Content-Length: 0\r\n" : ""));
    EXPECT_EQ(r.status, c.status);
    if (c.status == 401) {
      EXPECT_EQ(r.body, denied);
    }
  }
  ASSERT_TRUE(conn_.Connect(server_->port()));
  RawReply slots = conn_.Request("GET", "/slots", "", 10, "Authorization: Bearer sekret\r\n");
  EXPECT_EQ(slots.body,
            R"({"error":{"code":501,"message":"This server does not support slots endpoint. Start it with `--slots`","type":"not_supported_error"}})");
  ASSERT_TRUE(conn_.Connect(server_->port()));
  RawReply props = conn_.Request("POST", "/props", "", 10, "Authorization: Bearer sekret\r\nContent-Length: 0\r\n");
  EXPECT_EQ(props.status, 501);
  EXPECT_EQ(props.body,
            R"({"error":{"code":501,"message":"This server does not support changing global properties. Start it with `--props`","type":"not_supported_error"}})");
  ASSERT_TRUE(conn_.Connect(server_->port()));
  EXPECT_EQ(json::parse(conn_.Request("GET", "/props", "", 10, "Authorization: Bearer sekret\r\n").body)["endpoint_slots"],
            false);
}

TEST_F(FakeServerTest, AStopStringEndsTheAnswerBeforeIt) {
  // chat_stopword.body: finish_reason "stop", the text cut before the stop
  // string, the tokens up to the one that completed it counted.
  StartServer();
  server_->SetResponder([](const json&) { return FakeReply{"Here is the answer: B. Done", "", "length"}; });
  json r = json::parse(
      conn_.Request("POST", "/v1/chat/completions", Chat(kHello, {{"max_tokens", 30}, {"stop", {"B.", "zzz"}}})).body);
  EXPECT_EQ(KeyPaths(r), KeyPaths(Ref("chat_stopword.body")));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Here is the answer: ");
  EXPECT_EQ(r["usage"]["completion_tokens"], 7);  // Here is the answer : B .
  // Beyond the limit the limit wins.
  r = json::parse(conn_.Request("POST", "/v1/chat/completions", Chat(kHello, {{"max_tokens", 3}, {"stop", "B."}})).body);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Here is the");
}

TEST_F(FakeServerTest, PropsHasEveryKeyAndTheValuesThatMatter) {
  FakeServerOptions o;
  o.slots = 4;
  o.n_ctx = 2048;
  o.model_path = "models/stories260K.gguf";
  StartServer(o);
  const json ref = json::parse(Ref("props.body"));
  json p = json::parse(conn_.Request("GET", "/props").body);
  EXPECT_EQ(KeyPaths(p), KeyPaths(ref));
  EXPECT_EQ(p.size(), 19u);
  // The reference server ran -np 4 -c 8192 --kv-unified --metrics on a
  // 2048-token model, no alias: its values, and the sampling defaults.
  for (const char* k : {"total_slots", "model_alias", "model_path", "build_info", "chat_template", "bos_token",
                        "eos_token", "endpoint_slots", "endpoint_props", "modalities", "chat_template_caps", "ui",
                        "is_sleeping", "model_ftype", "media_marker"})
    EXPECT_EQ(p[k], ref[k]) << k;
  EXPECT_EQ(p["default_generation_settings"], ref["default_generation_settings"]);
  EXPECT_EQ(p["endpoint_metrics"], false);  // true only with --metrics

  o.metrics = true;
  o.alias = "fakealias";
  server_->SetOptions(o);
  p = json::parse(conn_.Request("GET", "/props").body);
  EXPECT_EQ(p["endpoint_metrics"], true);
  EXPECT_EQ(p["model_alias"], "fakealias");
  EXPECT_EQ(p["model_path"], "models/stories260K.gguf");
}

TEST_F(FakeServerTest, ModelsTokenizeDetokenizeAndCompletionsKeySets) {
  FakeServerOptions o;
  o.n_ctx = 2048;
  o.n_ctx_train = 2048;
  o.model_path = "models/stories260K.gguf";
  StartServer(o);
  const json models = json::parse(conn_.Request("GET", "/v1/models").body);
  EXPECT_EQ(KeyPaths(models), KeyPaths(Ref("v1_models.body")));
  EXPECT_EQ(models["data"][0]["meta"], json::parse(Ref("v1_models.body"))["data"][0]["meta"]);
  EXPECT_EQ(KeyPaths(conn_.Request("GET", "/models").body), KeyPaths(Ref("models.body")));

  const std::string text = " Once upon a time, there was a little girl.";
  json pieces = json::parse(
      conn_.Request("POST", "/tokenize", json{{"content", text}, {"add_special", true}, {"with_pieces", true}}.dump())
          .body);
  EXPECT_EQ(KeyPaths(pieces), KeyPaths(Ref("tokenize_pieces.body")));
  EXPECT_EQ(pieces["tokens"][0], json::parse(Ref("tokenize_pieces.body"))["tokens"][0]);  // {"id":1,"piece":"<s>"}
  json ids = json::array();
  for (const auto& t : pieces["tokens"]) ids.push_back(t["id"]);
  EXPECT_EQ(ids.size(), static_cast<size_t>(FakeTokenCount(text) + 1));
  const json detok = json::parse(conn_.Request("POST", "/detokenize", json{{"tokens", ids}}.dump()).body);
  EXPECT_EQ(KeyPaths(detok), KeyPaths(Ref("detokenize.body")));
  EXPECT_EQ(detok["content"], text);  // the pieces put back together

  EXPECT_EQ(KeyPaths(conn_.Request("POST", "/v1/completions", R"({"prompt": "Once", "max_tokens": 8})").body),
            KeyPaths(Ref("v1_completions.body")));
  const json c = json::parse(conn_.Request("POST", "/completion", R"({"prompt": "Once", "n_predict": 400})").body);
  EXPECT_EQ(KeyPaths(c), KeyPaths(Ref("completion_400.body")));
  EXPECT_EQ(c["tokens_predicted"], 400);  // the reference model never stops; neither does the fake's
  EXPECT_EQ(c["stop_type"], "limit");
}

TEST_F(FakeServerTest, UsagePromptTokensIsApplyTemplateThenTokenizeWithSpecial) {
  StartServer();
  const json messages = json::array({{{"role", "system"}, {"content", "Be brief."}},
                                     {{"role", "user"}, {"content", "What is 2+2? Answer: (A) 4 (B) 5"}}});
  const std::string prompt =
      json::parse(conn_.Request("POST", "/apply-template", json{{"messages", messages}}.dump()).body)["prompt"];
  EXPECT_EQ(prompt, FakeApplyTemplate(messages));
  auto count = [&](bool add_special) {
    return json::parse(conn_.Request("POST", "/tokenize", json{{"content", prompt}, {"add_special", add_special}}.dump())
                           .body)["tokens"]
        .size();
  };
  const json chat = json::parse(conn_.Request("POST", "/v1/chat/completions", Chat(messages)).body);
  EXPECT_EQ(chat["usage"]["prompt_tokens"], count(true));  // BOS added, as the real one counts
  EXPECT_EQ(count(false) + 1, count(true));
  // add_special is off by default (llama-server's /tokenize).
  EXPECT_EQ(json::parse(conn_.Request("POST", "/tokenize", json{{"content", prompt}}.dump()).body)["tokens"].size(),
            count(false));
}

TEST_F(FakeServerTest, ChatUnderAndOverMaxTokens) {
  FakeServerOptions o;
  o.alias = "stories260K";
  StartServer(o);
  const std::string long_answer = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                                  "fifteen sixteen seventeen eighteen nineteen twenty";
  server_->SetResponder([&](const json& r) {
    FakeReply reply;
    reply.content = r["messages"][0]["content"] == "short" ? "Four." : long_answer;
    return reply;
  });
  const json shortq = json::array({{{"role", "user"}, {"content", "short"}}});
  // The request's model is ignored; the alias answers (chat_unknown_model.body).
  json r = json::parse(
      conn_.Request("POST", "/v1/chat/completions", Chat(shortq, {{"max_tokens", 16}, {"model", "gpt-4"}})).body);
  EXPECT_EQ(KeyPaths(r), KeyPaths(Ref("chat_nonstream.body")));
  EXPECT_EQ(r["model"], "stories260K");
  EXPECT_EQ(r["system_fingerprint"], "b10470-34af94c");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Four.");
  EXPECT_EQ(r["usage"]["completion_tokens"], 3);  // "Four", "." and the end-of-sequence token
  EXPECT_EQ(r["usage"]["total_tokens"], r["usage"]["prompt_tokens"].get<int>() + 3);

  const json longq = json::array({{{"role", "user"}, {"content", "long"}}});
  r = json::parse(conn_.Request("POST", "/v1/chat/completions", Chat(longq, {{"max_tokens", 16}})).body);
  EXPECT_EQ(KeyPaths(r), KeyPaths(Ref("chat_nonstream.body")));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["completion_tokens"], 16);
  EXPECT_EQ(r["timings"]["predicted_n"], 16);
  EXPECT_EQ(r["choices"][0]["message"]["content"], FakeFirstTokens(long_answer, 16));
  // n_predict wins over max_tokens; max_completion_tokens is an alias; 0 still makes one token.
  for (auto [extra, n] : std::vector<std::pair<json, int>>{{{{"max_tokens", 3}, {"n_predict", 5}}, 5},
                                                           {{{"max_completion_tokens", 4}}, 4},
                                                           {{{"max_tokens", 0}}, 1}}) {
    r = json::parse(conn_.Request("POST", "/chat/completions", Chat(longq, extra)).body);
    EXPECT_EQ(r["usage"]["completion_tokens"], n) << extra;
    EXPECT_EQ(r["choices"][0]["finish_reason"], "length") << extra;
  }
  // Exactly the answer and no room for the end-of-sequence token: "length".
  r = json::parse(conn_.Request("POST", "/v1/chat/completions", Chat(shortq, {{"max_tokens", 2}})).body);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Four.");
}

TEST_F(FakeServerTest, AnAnswerThatFillsTheSlotEndsWithLength) {
  // chat_slot_ctx_overflow_nokvu.body: without a unified cache, a long
  // answer stops at the slot context with 200 and "length".
  FakeServerOptions o;
  o.slots = 4;
  o.n_ctx = 128;
  StartServer(o);
  server_->SetResponder([](const json&) { return FakeReply{"Once upon a time", "", "length"}; });
  json r = json::parse(conn_.Request("POST", "/v1/chat/completions", Chat(MessagesOfPromptTokens(50))).body);
  EXPECT_EQ(KeyPaths(r), KeyPaths(Ref("chat_slot_ctx_overflow_nokvu.body")));
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["prompt_tokens"], 50);
  EXPECT_EQ(r["usage"]["completion_tokens"], 78);
  EXPECT_EQ(r["usage"]["total_tokens"], 128);  // prompt + answer = the slot context, as the real one
  EXPECT_EQ(FakeTokenCount(r["choices"][0]["message"]["content"].get<std::string>()), 78);
}

TEST_F(FakeServerTest, APromptOfTheSlotContextOrMoreIs400AndCloses) {
  // llama-server: slot.task->n_tokens() >= slot.n_ctx (the prompt alone;
  // max_tokens does not count), measured on the real binary at 1023/1024.
  FakeServerOptions o;
  o.n_ctx = 256;
  StartServer(o);
  for (int max_tokens : {5, 5000}) {
    ASSERT_TRUE(conn_.Connect(server_->port()));
    RawReply ok =
        conn_.Request("POST", "/v1/chat/completions", Chat(MessagesOfPromptTokens(255), {{"max_tokens", max_tokens}}));
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(json::parse(ok.body)["usage"]["total_tokens"], 256);  // one token fits
    RawReply no =
        conn_.Request("POST", "/v1/chat/completions", Chat(MessagesOfPromptTokens(256), {{"max_tokens", max_tokens}}));
    EXPECT_EQ(no.status, 400);
    EXPECT_EQ(no.body,
              R"({"error":{"code":400,"message":"request (256 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":256,"n_ctx":256}})");
    EXPECT_EQ(KeyPaths(no.body), KeyPaths(Ref("err_toolong.body")));
    EXPECT_EQ(no.Header("Connection"), "close");
    EXPECT_TRUE(conn_.ClosedWithin(2));
  }
  // Streamed: the error comes before the first token, so it is a plain reply.
  ASSERT_TRUE(conn_.Connect(server_->port()));
  RawReply s = conn_.Request("POST", "/v1/chat/completions", Chat(MessagesOfPromptTokens(300), {{"stream", true}}));
  EXPECT_EQ(s.status, 400);
  EXPECT_EQ(s.Header("Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(json::parse(s.body)["error"]["n_prompt_tokens"], 300);
}

TEST_F(FakeServerTest, StreamingAsTheReference) {
  StartServer();
  server_->SetResponder([](const json&) { return FakeReply{"Hello brave new world, this is a long answer", "", "stop"}; });
  for (bool usage : {false, true}) {
    SCOPED_TRACE(usage ? "include_usage" : "plain");
    ASSERT_TRUE(conn_.Connect(server_->port()));
    json extra = {{"max_tokens", 6}, {"stream", true}};
    if (usage) extra["stream_options"] = {{"include_usage", true}};
    RawReply r = conn_.Request("POST", "/v1/chat/completions", Chat(kHello, extra));
    ExpectHeadersAsReference(r, "chat_stream");
    EXPECT_TRUE(conn_.ClosedWithin(2)) << "llama-server closes the connection after a stream";
    bool done = false, ref_done = false;
    const std::vector<json> ev = Events(r.body, &done);
    const std::vector<json> ref = Events(Ref(usage ? "chat_stream_usage.body" : "chat_stream.body"), &ref_done);
    EXPECT_TRUE(done);
    EXPECT_TRUE(ref_done);
    const size_t tail = usage ? 2 : 1;  // the finish chunk, and the usage chunk
    ASSERT_EQ(ev.size(), 1 + 6 + tail);  // the role chunk, one chunk per token
    EXPECT_EQ(ev[0], [&] {
      json e = ref[0];
      for (const char* k : {"created", "id", "model"}) e[k] = ev[0][k];
      return e;
    }());
    std::string text;
    for (size_t i = 1; i <= 6; ++i) {
      EXPECT_EQ(KeyPaths(ev[i]), KeyPaths(ref[1])) << i;
      text += ev[i]["choices"][0]["delta"]["content"].get<std::string>();
      EXPECT_EQ(ev[i]["id"], ev[0]["id"]);
    }
    EXPECT_EQ(text, FakeFirstTokens("Hello brave new world, this is a long answer", 6));
    EXPECT_EQ(KeyPaths(ev[7]), KeyPaths(ref[ref.size() - tail]));
    EXPECT_EQ(ev[7]["choices"][0]["finish_reason"], "length");
    if (usage) {
      EXPECT_EQ(KeyPaths(ev[8]), KeyPaths(ref.back()));
      EXPECT_EQ(ev[8]["usage"]["completion_tokens"], 6);
    }
  }
  // An answer that ends: "stop", and no chunk for the end-of-sequence token.
  server_->SetResponder([](const json&) { return FakeReply{"Hi.", "", "stop"}; });
  ASSERT_TRUE(conn_.Connect(server_->port()));
  RawReply r = conn_.Request("POST", "/v1/chat/completions", Chat(kHello, {{"stream", true}}));
  bool done = false;
  auto ev = Events(r.body, &done);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[3]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(ev[3]["timings"]["predicted_n"], 3);
}

TEST_F(FakeServerTest, AnIdleConnectionIsClosedAfterFiveSeconds) {
  StartServer();
  ASSERT_EQ(conn_.Request("GET", "/health").Header("Keep-Alive"), "timeout=5, max=100");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(conn_.ClosedWithin(4.0)) << "closed before the keep-alive timeout";
  EXPECT_TRUE(conn_.ClosedWithin(2.5)) << "still open 6.5 s after the last reply";
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(s, 4.9);
  EXPECT_LE(s, 6.5);
  // A request within the timeout keeps the connection.
  ASSERT_TRUE(conn_.Connect(server_->port()));
  conn_.Request("GET", "/health");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(conn_.Request("GET", "/health").status, 200);
}

TEST_F(FakeServerTest, AConnectionServesAHundredRepliesThenCloses) {
  StartServer();
  int connections = 0;
  for (int i = 1; i <= 100; ++i) {
    RawReply r = conn_.Request("GET", i % 2 ? "/health" : "/props");
    ASSERT_EQ(r.status, 200) << i;
    if (i == 1) connections = server_->connections();
    if (i < 100) {
      ASSERT_EQ(r.Header("Keep-Alive"), "timeout=5, max=100") << i;
      ASSERT_EQ(r.Header("Connection"), "") << i;
    } else {
      EXPECT_EQ(r.Header("Connection"), "close");  // as the real one's 100th
      EXPECT_EQ(r.Header("Keep-Alive"), "");
    }
  }
  EXPECT_TRUE(conn_.ClosedWithin(2));
  EXPECT_EQ(server_->connections(), connections);  // all on one connection
}

TEST_F(FakeServerTest, EveryEndpointAnswers503WhileLoading) {
  FakeServerOptions o;
  o.load_ms = 400;
  StartServer(o);
  const std::string loading = R"({"error":{"message":"Loading model","type":"unavailable_error","code":503}})";
  for (const char* path : {"/health", "/props", "/slots", "/v1/models"}) {
    ASSERT_TRUE(conn_.Connect(server_->port()));
    RawReply r = conn_.Request("GET", path);
    EXPECT_EQ(r.status, 503) << path;
    EXPECT_EQ(r.body, loading) << path;
  }
  ASSERT_TRUE(conn_.Connect(server_->port()));
  EXPECT_EQ(conn_.Request("POST", "/v1/chat/completions", Chat(kHello)).status, 503);
  RawReply r;
  for (int i = 0; i < 40; ++i) {  // up to 2 s
    ASSERT_TRUE(conn_.Connect(server_->port()));
    r = conn_.Request("GET", "/health");
    if (r.status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, Ref("health.body"));
}

}  // namespace
}  // namespace evalrun::testing
