// The evalrun-fake-server program takes llama-server's flags and sizes its
// slots as llama-server b10470 does (measured on the real binary: -c 2000
// -np 2 gives 1024 per slot; -c 8192 --kv-unified on a 2048-token model
// caps each slot at 2048 and says so). Each program started here is
// stopped by its PID.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/fake_engine.h"
#include "tests/support/raw_http.h"
#include "tests/support/run_binary.h"

namespace evalrun::testing {
namespace {

using nlohmann::json;

class FakeProgramTest : public FakeEngineTest {
 protected:
  FakeProgramTest() : FakeEngineTest("evalrun-fake-program") {}

  // Starts the program on port_ with `args`; true once /health answers 200
  // (at most 10 s).
  bool Start(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {FakeServerBinary(), "--port", std::to_string(port_)};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = SpawnBinary(argv, dir_ + "/out.log", dir_ + "/err.log");
    if (pid_ <= 0) return false;
    for (int i = 0; i < 200; ++i) {
      RawHttp c;
      if (c.Connect(port_) && c.Request("GET", "/health", "", 1).status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  void StopProgram() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    BinaryResult r = WaitBinary(pid_, 10);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 0);
    pid_ = -1;
  }
  void TearDown() override {
    StopProgram();
    FakeEngineTest::TearDown();
  }
  json Get(const std::string& path, int* status = nullptr) {
    RawHttp c;
    EXPECT_TRUE(c.Connect(port_));
    RawReply r = c.Request("GET", path);
    if (status) *status = r.status;
    return json::parse(r.body, nullptr, false);
  }
  std::string Log() { return ReadFile(dir_ + "/err.log"); }

  int pid_ = -1;
};

TEST_F(FakeProgramTest, HelpDocumentsItsOwnFlagsAndUnknownFlagsExitOne) {
  BinaryResult help = RunBinary({FakeServerBinary(), "--help"}, 10);
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--host", "--port", "-np, --parallel", "-c, --ctx-size", "-kvu, --kv-unified",
                           "-a, --alias", "--metrics", "-m, --model", "--threads", "--no-webui", "--chat-template",
                           "--n-ctx-train", "--load-ms", "--fail-load-above", "--ignore-sigterm", "--ms-per-token",
                           "--never-stop", "--crash-on-chat-above"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  BinaryResult bad = RunBinary({FakeServerBinary(), "--port", std::to_string(port_), "--bogus"}, 10);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("error: invalid argument: --bogus"), std::string::npos) << bad.err;
  EXPECT_EQ(RunBinary({FakeServerBinary(), "-c", "many"}, 10).exit_code, 1);
}

TEST_F(FakeProgramTest, SizesSlotsAsLlamaServer) {
  struct Case {
    std::vector<std::string> args;
    int slots, n_ctx_slot;
    const char* log;  // a line the real one prints too ("" for none)
  } cases[] = {
      {{}, 4, 131072, "initializing, n_slots = 4, n_ctx_slot = 131072, kv_unified = 'true'"},
      {{"-c", "8192"}, 4, 8192, "kv_unified = 'true'"},  // without -np: 4 slots, unified
      {{"-c", "8192", "-np", "4"}, 4, 2048, "kv_unified = 'false'"},
      {{"-c", "8192", "-np", "4", "-kvu"}, 4, 8192, ""},
      {{"-c", "2000", "-np", "2"}, 2, 1024, ""},  // padded to 256, as the real one
      {{"-c", "8192", "-np", "4", "--kv-unified", "--n-ctx-train", "2048"}, 4, 2048,
       "the slot context (8192) exceeds the training context of the model (2048) - capping"},
  };
  for (const auto& c : cases) {
    std::string name;
    for (const auto& a : c.args) name += a + " ";
    SCOPED_TRACE(name);
    ASSERT_TRUE(Start(c.args)) << Log();
    json props = Get("/props");
    EXPECT_EQ(props["total_slots"], c.slots);
    EXPECT_EQ(props["default_generation_settings"]["n_ctx"], c.n_ctx_slot);
    EXPECT_EQ(Get("/slots").size(), static_cast<size_t>(c.slots));
    EXPECT_NE(Log().find(c.log), std::string::npos) << Log();
    EXPECT_NE(Log().find("main: model loaded"), std::string::npos);
    StopProgram();
  }
}

TEST_F(FakeProgramTest, AliasModelMetricsAndTheIgnoredFlags) {
  ASSERT_TRUE(Start({"-m", "models/x.gguf", "-a", "xalias", "--metrics", "-t", "2", "--no-webui", "--chat-template",
                     "chatml", "-c", "4096", "-np", "1", "--host", "127.0.0.1"}))
      << Log();
  json props = Get("/props");
  EXPECT_EQ(props["model_alias"], "xalias");
  EXPECT_EQ(props["model_path"], "models/x.gguf");
  EXPECT_EQ(props["endpoint_metrics"], true);
  int status = 0;
  RawHttp c;
  ASSERT_TRUE(c.Connect(port_));
  EXPECT_EQ(c.Request("GET", "/metrics").status, 200);
  Get("/v1/models", &status);
  EXPECT_EQ(status, 200);
  json chat = json::parse(
      [&] {
        RawHttp k;
        EXPECT_TRUE(k.Connect(port_));
        return k.Request("POST", "/v1/chat/completions",
                         R"({"model": "other", "messages": [{"role": "user", "content": "The special magic number is 42."}]})")
            .body;
      }());
  EXPECT_EQ(chat["model"], "xalias");
  EXPECT_EQ(chat["choices"][0]["message"]["content"], "The special magic number is 42.");
}

TEST_F(FakeProgramTest, FourLongRequestsOutgrowAUnifiedCacheTogether) {
  // The brief's observation on the real one: four ~2,700-token prompts with
  // max_tokens 1,200 on -c 8192 -np 4 --kv-unified all failed together.
  ASSERT_TRUE(Start({"-c", "8192", "-np", "4", "--kv-unified", "--never-stop", "--ms-per-token", "1"})) << Log();
  std::string words;
  for (int i = 0; i < 2680; ++i) words += " w";
  std::vector<RawReply> replies(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      RawHttp c;
      if (!c.Connect(port_)) return;
      replies[i] = c.Request(
          "POST", "/v1/chat/completions",
          json{{"messages", {{{"role", "user"}, {"content", std::to_string(i) + words}}}}, {"max_tokens", 1200}}.dump(),
          30);
    });
  for (auto& t : threads) t.join();
  for (const auto& r : replies) {
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(r.body, R"({"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}})");
  }
  // One alone fits and runs to its limit (the model never stops).
  RawHttp c;
  ASSERT_TRUE(c.Connect(port_));
  RawReply alone = c.Request(
      "POST", "/v1/chat/completions",
      json{{"messages", {{{"role", "user"}, {"content", words}}}}, {"max_tokens", 1200}}.dump(), 30);
  ASSERT_EQ(alone.status, 200);
  EXPECT_EQ(json::parse(alone.body)["usage"]["completion_tokens"], 1200);
  EXPECT_EQ(json::parse(alone.body)["choices"][0]["finish_reason"], "length");
}

}  // namespace
}  // namespace evalrun::testing
