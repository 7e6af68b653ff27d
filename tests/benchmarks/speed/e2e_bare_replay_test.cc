// The GPU lane's bare streaming client (scripts/bare_stream_client.py) on the
// speed part's own requests: evalrun's speed part against the fake
// llama-server (4 slots; C1 and C8, so that 4 requests queue), then `replay`
// sends speed/requests.jsonl again and `compare` pairs the two clients'
// TTFTs. What is checked is the plumbing, never a speed: every measured
// request is replayed once with the same body, after the warm-up's (the
// server sees each of those prompts twice), every replayed request has a first token, C1 is
// paired request by request and C8 rank by rank (8 pairs), and the summary
// says its rule and verdict. The `tap` (a loopback proxy in front of the
// server) logs each of evalrun's requests, and `compare --tap` pairs every
// measured request with the tap's timing of the very same one. A replayed
// chain (a refused chat stream and /apply-template before the timed request)
// is sent in its order and timed at its timed line.
// /usr/bin/python3 (Debian 12's 3.11), loopback.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "evals/base/sha256.h"

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"
#include "tests/support/test_paths.h"

namespace evalrun::testing {
namespace {

class E2eBareReplay : public E2eTest {
 protected:
  std::string Script() const { return SourceDir() + "/scripts/bare_stream_client.py"; }
  // 4 slots with planted prefill and decode times.
  static FakeServerOptions PacedFourSlots() {
    FakeServerOptions fo;
    fo.slots = 4;
    fo.n_ctx = 8192;
    fo.prefill_ms_per_token = 0.2;
    fo.ms_per_token = 5;
    return fo;
  }
};

TEST_F(E2eBareReplay, TheSpeedPartsRequestsAreSentAgainAndPairedByClient) {
  FakeServer server(PacedFourSlots());
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "4", R"({"speed": {"guard_threshold_pct": 99999,
      "steps": ["decode", "conc"], "prompt_ids": ["code"], "decode_prompt_tokens": 300, "runs": 2, "warmups": 1,
      "max_tokens": 16, "conc_levels": [1, 8], "conc_rounds": 1}})");
  BinaryResult r = Run({"--card", card, "--job", "b", "--parts", "speed"}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string speed = dir_ + "/runs/b/speed";
  const size_t sent_by_evalrun = server.requests().size();  // cold, warm-up, 2 decode, C1, 8 of C8
  ASSERT_EQ(sent_by_evalrun, 1u + 1 + 2 + 1 + 8);

  const std::string script = Script();
  BinaryResult rep = RunBinary({"/usr/bin/python3", script, "replay", "--requests", speed + "/requests.jsonl", "--port",
                                std::to_string(server.port()), "--out", dir_ + "/bare.jsonl"},
                               120);
  ASSERT_EQ(rep.exit_code, 0) << rep.out << rep.err;
  // evalrun's whole sequence again (the cold row and the warm-up unmeasured),
  // so that each measured request meets the server in evalrun's state.
  ASSERT_EQ(server.requests().size(), 2 * sent_by_evalrun);
  std::map<std::string, int> seen;
  for (const auto& body : server.requests()) ++seen[body["messages"].dump()];
  const auto bare = Lines(dir_ + "/bare.jsonl");
  ASSERT_EQ(bare.size(), 11u);
  for (const auto& b : bare) {
    EXPECT_EQ(b["http_status"], 200) << b;
    EXPECT_TRUE(b["ttft_s"].is_number()) << b;
    EXPECT_TRUE(b["error"].is_null()) << b;
  }
  int twice = 0;
  for (const auto& [messages, n] : seen) twice += n == 2;
  // Every prompt: once from evalrun, once from the bare client.
  EXPECT_EQ(twice, 13);

  BinaryResult cmp = RunBinary({"/usr/bin/python3", script, "compare", "--samples", speed + "/samples.jsonl", "--bare",
                                dir_ + "/bare.jsonl", "--out", dir_ + "/cmp.json"},
                               60);
  ASSERT_TRUE(cmp.exit_code == 0 || cmp.exit_code == 1) << cmp.out << cmp.err;  // the verdict is the machine's
  const nlohmann::json sum = nlohmann::json::parse(ReadFile(dir_ + "/cmp.json"));
  EXPECT_EQ(sum["compared"], 11);
  EXPECT_TRUE(sum["unpaired"].empty()) << sum["unpaired"];
  EXPECT_EQ(sum["verdict"], cmp.exit_code == 0 ? "PASS" : "FAIL");
  int ranks = 0, singles = 0;
  for (const auto& row : sum["rows"]) {
    if (row["step"] == "conc/C8") {
      ++ranks;
      EXPECT_EQ(row["concurrency"], 8);
    } else {
      ++singles;
      EXPECT_EQ(row["concurrency"], 1);
    }
    EXPECT_DOUBLE_EQ(row["allowed_s"].get<double>(), std::max(0.02 * row["bare_ttft_s"].get<double>(), 0.020));
  }
  EXPECT_EQ(ranks, 8);
  EXPECT_EQ(singles, 3);
  EXPECT_NE(cmp.out.find(sum["verdict"].get<std::string>() + ": "), std::string::npos) << cmp.out;
}

// evalrun's speed part through the tap: the tap logs every request it passed
// (joined by the body's sha256), the card's load_sampling.engine_port names
// the server behind it, and compare --tap pairs every measured request.
TEST_F(E2eBareReplay, TheTapTimesEvalrunsOwnRequestsAndComparePairsEveryOne) {
  FakeServer server(PacedFourSlots());
  ASSERT_TRUE(server.Start());
  const int tap = SpawnBinary({"/usr/bin/python3", Script(), "tap", "--listen", "0", "--port",
                               std::to_string(server.port()), "--out", dir_ + "/tap.jsonl"},
                              dir_ + "/tap.out", dir_ + "/tap.err");
  ASSERT_GT(tap, 0);
  std::string port;
  for (int i = 0; i < 100 && port.empty(); ++i) {  // "tap: 127.0.0.1:PORT -> ..."
    const std::string out = ReadFile(dir_ + "/tap.out");
    const auto at = out.find("tap: 127.0.0.1:");
    if (at != std::string::npos && out.find(" ->", at) != std::string::npos)
      port = out.substr(at + 15, out.find(" ->", at) - at - 15);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(port.empty()) << ReadFile(dir_ + "/tap.err");
  const std::string card = WriteCard("http://127.0.0.1:" + port, "4", R"({"speed": {"guard_threshold_pct": 99999,
      "steps": ["decode", "conc"], "prompt_ids": ["code"], "decode_prompt_tokens": 300, "runs": 2, "warmups": 1,
      "max_tokens": 16, "conc_levels": [1, 4], "conc_rounds": 1}})",
                                     R"("load_sampling": {"engine_port": )" + std::to_string(server.port()) + "},");
  BinaryResult r = Run({"--card", card, "--job", "t", "--parts", "speed"}, 120);
  ::kill(tap, SIGTERM);
  WaitBinary(tap, 10);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The engine is the fake server behind the tap, not the tap.
  EXPECT_NE(r.err.find("on port " + std::to_string(server.port())), std::string::npos) << r.err;

  const std::string speed = dir_ + "/runs/t/speed";
  std::map<std::string, nlohmann::json> tapped;  // by the body's sha256: /health, /props, /tokenize too
  for (const auto& t : Lines(dir_ + "/tap.jsonl")) tapped[t["sha256"].get<std::string>()] = t;
  const auto bodies = Lines(speed + "/requests.jsonl");
  ASSERT_EQ(bodies.size(), 1u + 1 + 2 + 1 + 4);  // cold, warm-up, 2 decode, C1, 4 of C4
  for (const auto& b : bodies) {
    EXPECT_EQ(b["timed"], true) << b;
    const auto t = tapped.find(Sha256Hex(b["body"].get<std::string>()));
    ASSERT_NE(t, tapped.end()) << "not seen by the tap: seq " << b["seq"];
    EXPECT_EQ(t->second["path"], b["path"]);
    EXPECT_EQ(t->second["http_status"], 200) << t->second;
    ASSERT_TRUE(t->second["ttft_s"].is_number()) << t->second;
    EXPECT_LE(t->second["ttft_s"].get<double>(), t->second["done_s"].get<double>()) << t->second;
  }

  BinaryResult cmp = RunBinary({"/usr/bin/python3", Script(), "compare", "--samples", speed + "/samples.jsonl", "--tap",
                                dir_ + "/tap.jsonl", "--requests", speed + "/requests.jsonl", "--out",
                                dir_ + "/cmp.json"},
                               60);
  ASSERT_TRUE(cmp.exit_code == 0 || cmp.exit_code == 1) << cmp.out << cmp.err;  // the verdict is the machine's
  const nlohmann::json sum = nlohmann::json::parse(ReadFile(dir_ + "/cmp.json"));
  EXPECT_EQ(sum["compared"], 7);  // every measured request, C4's four too
  EXPECT_TRUE(sum["unpaired"].empty()) << sum["unpaired"];
  for (const auto& row : sum["rows"]) {
    EXPECT_EQ(row["source"], "tap");
    EXPECT_EQ(row["judged"], true);
  }
}

// A seq's lines are sent in file order (a refused chat stream, the raw
// route's /apply-template, then the timed request) and only the timed one is
// in the output; a file without "timed" times the last line of each seq.
TEST_F(E2eBareReplay, AChainIsSentInItsOrderAndTimedAtItsTimedLine) {
  FakeServer server(FakeServerOptions{});
  ASSERT_TRUE(server.Start());
  auto chat = [](const std::string& text) {
    return nlohmann::json{{"messages", {{{"role", "user"}, {"content", text}}}}, {"max_tokens", 4}, {"stream", true},
                          {"stream_options", {{"include_usage", true}}}}
        .dump();
  };
  auto line = [](int seq, const std::string& role, const std::string& path, const std::string& body,
                 nlohmann::json timed, bool streamed) {
    nlohmann::json j = {{"seq", seq}, {"step", seq == 1 ? "cold" : "decode/code"}, {"role", role}, {"attempt", 1},
                        {"round", 1}, {"concurrency", 1}, {"path", path}, {"body", body}, {"streamed", streamed}};
    if (!timed.is_null()) j["timed"] = timed;
    return j.dump() + "\n";
  };
  const std::string apply = nlohmann::json{{"messages", {{{"role", "user"}, {"content", "b"}}}}}.dump();
  WriteFile(dir_ + "/requests.jsonl",
            line(1, "cold", "/v1/chat/completions", chat("a"), nullptr, true) +
                line(2, "measured", "/v1/chat/completions", chat("b refused"), false, true) +
                line(2, "measured", "/apply-template", apply, false, false) +
                line(2, "measured", "/v1/chat/completions", chat("b timed"), true, true) +
                line(3, "measured", "/v1/chat/completions", chat("c first"), nullptr, true) +
                line(3, "measured", "/v1/chat/completions", chat("c last"), nullptr, true));
  const int tokenize_before = server.tokenize_requests();
  BinaryResult rep = RunBinary({"/usr/bin/python3", Script(), "replay", "--requests", dir_ + "/requests.jsonl",
                                "--port", std::to_string(server.port()), "--out", dir_ + "/bare.jsonl"},
                               60);
  ASSERT_EQ(rep.exit_code, 0) << rep.out << rep.err;
  EXPECT_EQ(server.tokenize_requests(), tokenize_before + 1);  // /apply-template, once
  std::vector<std::string> order;
  for (const auto& body : server.requests()) order.push_back(body["messages"][0]["content"]);
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b refused", "b timed", "c first", "c last"}));
  const auto bare = Lines(dir_ + "/bare.jsonl");
  ASSERT_EQ(bare.size(), 2u);  // the measured seqs, once each
  EXPECT_EQ(bare[0]["seq"], 2);
  EXPECT_EQ(bare[1]["seq"], 3);
  for (const auto& b : bare) EXPECT_TRUE(b["ttft_s"].is_number()) << b;
}

}  // namespace
}  // namespace evalrun::testing
