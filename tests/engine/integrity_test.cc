// in units: JSON depth and size bounds (json_bounds.h), the one
// redaction of the API key (redact.h), the key's own check, and admission
// that recovers after capacity failures (pool_scheduler.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "evals/base/json_bounds.h"
#include "evals/base/json_fields.h"
#include "evals/base/jsonl.h"
#include "evals/base/redact.h"
#include "evals/run/request_pool.h"
#include "evals/run/run_files.h"
#include "tests/support/run_binary.h"
#include "tests/engine/request_pool_fixture.h"

namespace evalrun {
namespace {

std::string Nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonBounds, DeepNestingIsRefusedNamingTheSourceBeforeAnyParse) {
  EXPECT_TRUE(CheckJsonBounds(Nested(kMaxJsonDepth), "x").ok());
  Status st = CheckJsonBounds(Nested(200000), "GET /v1/models: reply");
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(), "GET /v1/models: reply: JSON nested deeper than 128 levels (at byte 129)");
  // Brackets in strings, escaped quotes included, do not count.
  EXPECT_TRUE(CheckJsonBounds("[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]", "x").ok());
  EXPECT_FALSE(CheckJsonBounds("[\"\\\\\"" + Nested(200, '{', '}') + "]", "x").ok());
  EXPECT_FALSE(CheckJsonBounds(std::string(11, ' '), "x", 10).ok());
  // Every parse helper goes through it.
  nlohmann::json j;
  EXPECT_NE(ParseJsonText("{\"a\":" + Nested(200000) + "}", "card.json", &j).message().find("card.json: JSON nested"),
            std::string::npos);
  Status jl = ParseJsonl("{}\n" + Nested(200000) + "\n", "samples.jsonl", [](int, const nlohmann::json&) {
    return Status::Ok();
  });
  EXPECT_NE(jl.message().find("samples.jsonl:2: JSON nested deeper"), std::string::npos) << jl.message();
  EXPECT_TRUE(ParseJsonOrDiscarded(Nested(200000)).is_discarded());
  EXPECT_EQ(ParseJsonOrDiscarded("[1]"), nlohmann::json::array({1}));
}

TEST(JsonBounds, CopiesFromAServerAreBounded) {
  const nlohmann::json small = {{"data", {{{"id", "m"}}}}};
  EXPECT_EQ(BoundedCopy(small, "/v1/models"), small);
  const nlohmann::json big = {{"data", std::string(100000, 'x')}};
  const nlohmann::json copied = BoundedCopy(big, "/v1/models");
  ASSERT_TRUE(copied.is_string());
  EXPECT_NE(copied.get<std::string>().find("left out: 100011 bytes"), std::string::npos) << copied;
  EXPECT_EQ(BoundedString("h\xc3\xa9llo", 2), "h...");
}

TEST(Redact, TheKeyAndCommandLineSecretsNeverPass) {
  RegisterSecret("sk-unit-\"quoted\"-key");
  EXPECT_EQ(Redact("error: sk-unit-\"quoted\"-key was refused"), "error: [redacted] was refused");
  // As a JSON line holds it.
  EXPECT_EQ(Redact(R"({"e":"sk-unit-\"quoted\"-key"})"), R"({"e":"[redacted]"})");
  // Any key in another process's command line (load.jsonl) or quoted headers.
  EXPECT_EQ(Redact(R"({"cmd":"llama-server -m x.gguf --api-key other-key --port 8080"})"),
            R"({"cmd":"llama-server -m x.gguf --api-key [redacted] --port 8080"})");
  EXPECT_EQ(Redact("vllm serve --api-key=abc123 --x"), "vllm serve --api-key=[redacted] --x");
  EXPECT_EQ(Redact("--api-key-file /etc/k"), "--api-key-file /etc/k");
  EXPECT_EQ(Redact("got headers: Authorization: Bearer zz9; Host: h"), "got headers: Authorization: Bearer [redacted]; Host: h");
  EXPECT_EQ(Redact("x-api-key: q1\r\n"), "x-api-key: [redacted]\r\n");
  EXPECT_EQ(Redact("nothing secret here"), "nothing secret here");
}

TEST(Redact, AKeyWithControlCharactersIsRefusedNamingTheVariable) {
  EXPECT_TRUE(CheckApiKey("sk-plain", "card.json: server.api_key_env", "K").ok());
  Status crlf = CheckApiKey("abc\r\nX-Evil: injected", "card.json: server.api_key_env", "K");
  EXPECT_EQ(crlf.code(), Status::Code::kInvalidInput);
  EXPECT_NE(crlf.message().find("card.json: server.api_key_env: the environment variable K holds a control character"),
            std::string::npos)
      << crlf.message();
  Status newline = CheckApiKey("abc\n", "f", "K");
  EXPECT_NE(newline.message().find("the environment variable K ends with a newline"), std::string::npos)
      << newline.message();
  EXPECT_FALSE(CheckApiKey(std::string("a\0b", 3), "f", "K").ok());
  EXPECT_FALSE(CheckApiKey("tab\there", "f", "K").ok());
}

// A client whose first `failures` calls fail as a shared KV cache
// overflowing (kCapacity, no token counts), then answers after a service
// time; it records how many run at once from call `late_from` on.
class OverflowOnce : public Client {
 public:
  struct World {
    std::mutex mu;
    int calls = 0, running = 0, max_running_late = 0;
    int failures = 4, late_from = 120;
  };
  explicit OverflowOnce(World* w) : w_(w) {}
  CallResult Complete(const Prompt&) override {
    bool late = false;
    CallResult r;
    {
      std::lock_guard<std::mutex> l(w_->mu);
      const int n = w_->calls++;
      if (n < w_->failures) {
        r.status = CallStatus::kCapacity;
        r.error = "HTTP 500: Context size has been exceeded.";
      }
      late = n >= w_->late_from;
      ++w_->running;
      if (late) w_->max_running_late = std::max(w_->max_running_late, w_->running);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    std::lock_guard<std::mutex> l(w_->mu);
    --w_->running;
    if (r.status != CallStatus::kCapacity) r.status = CallStatus::kOk;
    return r;
  }

 private:
  World* w_;
};

// a short burst of capacity failures cut a 4-slot run to 1 in
// flight for the rest of the run. Admission recovers as answers succeed.
TEST(RequestPoolRecovery, AdmissionTightenedByABurstRecoversAsAnswersSucceed) {
  OverflowOnce::World w;
  RequestPool pool(4, [&] { return std::make_unique<OverflowOnce>(&w); }, PoolOptions{});
  int ok = 0;
  pool.Run(pool_testing::MakePrompts(200), pool_testing::AllIndices(200),
           [&](size_t, const CallResult& r) { ok += r.status == CallStatus::kOk; }, nullptr);
  EXPECT_EQ(ok, 200);
  EXPECT_GT(pool.stats().tightenings.load(), 0);
  EXPECT_EQ(w.max_running_late, 4) << "the slots never came back";
}

}  // namespace
}  // namespace evalrun

namespace evalrun::testing {
namespace {

// A model's answer is kept as the server gave it: code that builds an
// "Authorization: Bearer " header is an answer, not a secret. Only the
// registered key itself is taken out of the run files.
TEST(Redact, RunFilesKeepAnswersThatSayBearerAndLoseOnlyTheKey) {
  RegisterSecret("sk-run-files-key");
  const std::string dir = MakeTempDir();
  JsonlAppender out;
  ASSERT_TRUE(out.Open(dir + "/samples.jsonl").ok());
  const std::string code = "headers = {\"Authorization\": \"Bearer \" + token}  # --api-key x";
  ASSERT_TRUE(out.Append(nlohmann::json{{"id", "1"}, {"response", code}, {"error", "sk-run-files-key"}}).ok());
  out.Close();
  const nlohmann::json line = nlohmann::json::parse(ReadFile(dir + "/samples.jsonl"));
  EXPECT_EQ(line["response"], code);
  EXPECT_EQ(line["error"], kRedacted);
  RemoveTree(dir);
}

}  // namespace
}  // namespace evalrun::testing
