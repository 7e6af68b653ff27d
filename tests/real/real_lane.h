// The fixture of the real-server lane: a temp folder, real llama-server
// processes, cards as JSON, and the real evalrun binary (tests/support/e2e.h).
// Registered only when EVALRUN_LLAMA_SERVER names a llama-server binary
// (tests/real/CMakeLists.txt); `ctest -L real` without it fails saying so.
#ifndef EVALRUN_TESTS_REAL_REAL_LANE_H_
#define EVALRUN_TESTS_REAL_REAL_LANE_H_

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/real/llama_server.h"
#include "tests/support/e2e.h"

namespace evalrun::testing {

class RealLaneTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    ASSERT_FALSE(LlamaServerBinary().empty()) << "set EVALRUN_LLAMA_SERVER to a llama-server binary";
  }
  void TearDown() override {
    for (auto& s : servers_) s->Stop();
    E2eTest::TearDown();
  }

  // Starts a llama-server (log <tmp>/server-N.log); fails the test if it
  // does not come up.
  LlamaServer* StartServer(LlamaServerArgs args, int port = 0) {
    servers_.push_back(std::make_unique<LlamaServer>(std::move(args)));
    LlamaServer* s = servers_.back().get();
    std::string err;
    const std::string log = dir_ + "/server-" + std::to_string(servers_.size()) + ".log";
    EXPECT_TRUE(s->Start(log, &err, port)) << err;
    return s;
  }

  // A card: greedy, thinking off, the given server object and parts.
  static nlohmann::json Card(nlohmann::json server, nlohmann::json parts) {
    nlohmann::json c = {{"name", "real"},
                        {"model", {{"name", "stories260K"}}},
                        {"engine", {{"name", "llama.cpp llama-server"}}},
                        {"server", server},
                        {"sampling", {{"temperature", 0}, {"top_k", 1}, {"top_p", 1}, {"seed", 42}}},
                        {"thinking", false},
                        {"load_sampling", {{"interval_s", 0.5}}},
                        {"parts", parts}};
    if (!c["server"].contains("ready_timeout_s")) c["server"]["ready_timeout_s"] = 60;
    if (!c["server"].contains("request_timeout_base_s")) c["server"]["request_timeout_base_s"] = 60;
    return c;
  }
  static nlohmann::json Server(const LlamaServer* s, nlohmann::json slots = "auto") {
    return {{"base_url", s->base_url()}, {"slots", slots}};
  }
  std::string WriteCardJson(const nlohmann::json& card, const std::string& name = "card.json") {
    return WriteCardFile(dir_ + "/" + name, card);
  }
  std::string JobDir(const std::string& job) const { return dir_ + "/runs/" + job; }

  std::vector<std::unique_ptr<LlamaServer>> servers_;
};

}  // namespace evalrun::testing

#endif  // EVALRUN_TESTS_REAL_REAL_LANE_H_
