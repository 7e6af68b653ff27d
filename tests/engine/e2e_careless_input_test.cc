// End to end: a careless card or a boastful
// server is refused before any request, naming the key; a run that cannot
// write its files says so with its own exit code (5), not exit 3 (failed
// requests), and keeps the answers that reached the disk.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "evals/base/jsonl.h"
#include "tests/support/e2e.h"
#include "tests/support/fake_engine.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_server.h"
#include "tests/support/test_card.h"

namespace evalrun::testing {
namespace {

class E2eCarelessInput : public E2eTest {};

// fit restarts the engine at each of parts.fit.contexts: a command without
// {context} would run every step at the engine's default while the results
// name 4,096, 8,192, ... It is refused at the start, naming the key, and no
// engine is started.
TEST_F(E2eCarelessInput, AFitCommandWithoutContextIsRefusedNamingTheKey) {
  const int port = FreeLoopbackPort();
  ASSERT_GT(port, 0);
  nlohmann::json fit =
      BareCard("http://127.0.0.1:" + std::to_string(port) + "/v1", {{"fit", {{"contexts", {4096, 8192}}}}});
  fit["name"] = "fit";
  fit["model"] = {{"name", "fake"}};
  fit["server"]["command"] = {FakeServerBinary(), "--port", "{port}", "-np", "{slots}"};
  fit["server"]["ready_timeout_s"] = 20;
  const std::string card = WriteCardFile(dir_ + "/fit.json", fit);
  BinaryResult r = Run({"--card", card, "--job", "f"}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(card + ": server.command: has no {context}, but the fit part starts the engine at each of "
                              "parts.fit.contexts"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("starting the engine"), std::string::npos) << r.err;
  EXPECT_TRUE(FakeServersOnPort(port).empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/runs/f/server.log"));
}

// A server whose /props claims 1,000,000 slots is not followed to a million
// workers: with "slots": "auto" the card's bound (1..1024) holds, exit 1.
TEST_F(E2eCarelessInput, PropsClaimingAMillionSlotsIsRefused) {
  std::atomic<int> chats{0};
  FakeHttpServer server([&](const FakeHttpRequest& req, FakeHttpResponse* res) {
    if (req.path == "/health") {
      res->body = R"({"status":"ok"})";
    } else if (req.path == "/props") {
      res->body = R"({"total_slots": 1000000, "build_info": "b10470-34af94c", "model_path": "models/fake.gguf",
                      "default_generation_settings": {"n_ctx": 8192}})";
    } else if (req.path == "/v1/models" || req.path == "/models") {
      res->body = R"({"object": "list", "data": [{"id": "models/fake.gguf", "object": "model"}]})";
    } else {
      ++chats;
      res->status = 404;
      res->body = R"({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})";
    }
  });
  ASSERT_TRUE(server.Listen(0));
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port()) + "/v1";
  const std::string card = WriteCard(base, "\"auto\"", R"({"mmlupro": {"questions": 2}})");
  BinaryResult r = Run({"--card", card, "--job", "s"}, 60);
  server.Stop();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("server.slots is \"auto\" but http://127.0.0.1:" + std::to_string(server.port()) +
                       "/props claims 1000000 slots (total_slots), more than the 1024 a card allows"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(chats, 0);
}

// Disk full (here: a file size limit, RLIMIT_FSIZE with SIGXFSZ ignored, so
// a write fails as on a full disk) is exit 5 with the answers on disk kept,
// and the job resumes once there is room. Exit 3 stays for failed requests.
TEST_F(E2eCarelessInput, AFullDiskIsItsOwnExitCodeAndTheAnswersAreKept) {
  FakeServer server;
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "2", R"({"mmlupro": {"questions": 80, "max_tokens": 64}})");
  const std::string cmd = "ulimit -f 48; trap '' XFSZ; exec \"$0\" \"$@\"";  // 48 blocks of 512 bytes: 24 KiB a file
  BinaryResult r = RunBinary({"/bin/sh", "-c", cmd, EvalrunBinary(), "--card", card, "--job", "d", "--out",
                              dir_ + "/runs", "--data-dir", DatasetsDir()},
                             120);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  // Whichever of the answer journal and samples.jsonl reached the limit first.
  EXPECT_TRUE(r.err.find("answers.jsonl: write failed: File too large") != std::string::npos ||
              r.err.find("samples.jsonl: write failed: File too large") != std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the answers already on disk are kept"), std::string::npos) << r.err;
  size_t kept = 0;
  for (const char* f : {"answers.jsonl", "samples.jsonl"}) {
    const std::string path = dir_ + "/runs/d/mmlupro/" + f;
    const size_t size = std::filesystem::exists(path) ? std::filesystem::file_size(path) : 0;
    EXPECT_LE(size, 48u * 512) << f;
    kept += size;
  }
  EXPECT_GT(kept, 10000u);

  // With room again the same command finishes the job: nothing answered is lost.
  BinaryResult again = Run({"--card", card, "--job", "d"}, 120);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Samples("d", "mmlupro").size(), 80u);
}

}  // namespace
}  // namespace evalrun::testing
