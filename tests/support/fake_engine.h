// The fake llama-server program (tests/fake_llama_server_main.cc) run as a
// managed engine (evals/server/engine.h) by the engine and fit tests: where the
// program is, a free port for it, the options that start it, a look in /proc
// for copies left running, and a fixture that checks none is. Tests only.
//
//   class MyTest : public testing::FakeEngineTest {
//    protected:
//     MyTest() : FakeEngineTest("evalrun-mine") {}
//   };
//   TEST_F(MyTest, X) { ManagedEngine engine(Options({"--load-ms", "300"})); ... }
#ifndef EVALRUN_TESTS_SUPPORT_FAKE_ENGINE_H_
#define EVALRUN_TESTS_SUPPORT_FAKE_ENGINE_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "evals/server/engine.h"
#include "tests/support/loopback_port.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {


// Pids of running (not zombie) processes whose argv[0] contains
// "evalrun-fake-server" and whose arguments hold "--port <port>". Empty also
// when /proc cannot be read (FakeEngineTest checks that it can).
std::vector<int> FakeServersOnPort(int port);

// A temp folder (dir_) and a free port (port_) per test; after the test,
// fails it if a fake server is still running on port_, then removes dir_.
class FakeEngineTest : public ::testing::Test {
 protected:
  explicit FakeEngineTest(std::string temp_prefix) : temp_prefix_(std::move(temp_prefix)) {}

  void SetUp() override {
    ASSERT_TRUE(std::filesystem::is_directory("/proc")) << "the left-behind check reads /proc";
    dir_ = MakeTempDir(temp_prefix_);
    ASSERT_FALSE(dir_.empty());
    port_ = FreeLoopbackPort();
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    EXPECT_TRUE(FakeServersOnPort(port_).empty()) << "a fake server on port " << port_ << " was left behind";
    RemoveTree(dir_);
  }

  // Starts the program on port_ with the context and slots Start() is given
  // (plus `extra` arguments), logging to dir_/server.log; 30 s to get ready,
  // 10 s to stop.
  ManagedEngineOptions Options(const std::vector<std::string>& extra = {}) const {
    ManagedEngineOptions o;
    o.command = {FakeServerBinary(), "--port", "{port}", "-c", "{context}", "-np", "{slots}"};
    o.command.insert(o.command.end(), extra.begin(), extra.end());
    o.origin = "http://127.0.0.1:" + std::to_string(port_);
    o.log_path = dir_ + "/server.log";
    o.ready_timeout_s = 30;
    o.stop_grace_s = 10;
    return o;
  }

  std::string dir_;
  int port_ = 0;

 private:
  std::string temp_prefix_;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_SUPPORT_FAKE_ENGINE_H_
