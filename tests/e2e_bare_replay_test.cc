// The GPU lane's bare streaming client (scripts/bare_stream_client.py) on the
// speed part's own requests (issue 38): evalrun's speed part against the fake
// llama-server (4 slots; C1 and C8, so that 4 requests queue), then `replay`
// sends speed/requests.jsonl again and `compare` pairs the two clients'
// TTFTs. What is checked is the plumbing, never a speed: every measured
// request is replayed once with the same body, after the warm-up's (the
// server sees each of those prompts twice), every replayed request has a first token, C1 is
// paired request by request and C8 rank by rank (8 pairs), and the summary
// says its rule and verdict. /usr/bin/python3 (Debian 12's 3.11), loopback.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::testing {
namespace {

class E2eBareReplay : public E2eTest {};

TEST_F(E2eBareReplay, TheSpeedPartsRequestsAreSentAgainAndPairedByClient) {
  FakeServerOptions fo;
  fo.slots = 4;
  fo.n_ctx = 8192;
  fo.prefill_ms_per_token = 0.2;
  fo.ms_per_token = 5;
  FakeServer server(fo);
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "4", R"({"speed": {"guard_threshold_pct": 99999,
      "steps": ["decode", "conc"], "prompt_ids": ["code"], "decode_prompt_tokens": 300, "runs": 2, "warmups": 1,
      "max_tokens": 16, "conc_levels": [1, 8], "conc_rounds": 1}})");
  BinaryResult r = Run({"--card", card, "--job", "b", "--parts", "speed"}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string speed = dir_ + "/runs/b/speed";
  const size_t sent_by_evalrun = server.requests().size();  // cold, warm-up, 2 decode, C1, 8 of C8
  ASSERT_EQ(sent_by_evalrun, 1u + 1 + 2 + 1 + 8);

  const std::string script = std::string(EVALRUN_SOURCE_DIR) + "/scripts/bare_stream_client.py";
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

}  // namespace
}  // namespace evalrun::testing
