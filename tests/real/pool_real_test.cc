// The request pool against a real llama-server: exactly total_slots in
// flight and nothing deferred (polled from /metrics), cut-offs counted apart.
#include "tests/real/real_lane.h"

namespace evalrun::testing {
namespace {

class RealPool : public RealLaneTest {};

TEST_F(RealPool, SlotsMatchTheServerAndNothingWaits) {
  LlamaServer* s = StartServer({.parallel = 4, .ctx = 32768});
  ASSERT_TRUE(s->running());
  MetricsPoller poll(s->origin());
  poll.Start();
  const std::string card =
      WriteCardJson(Card(Server(s), {{"mmlupro", {{"questions", 32}, {"max_tokens", 256}}}}));
  BinaryResult r = Run({"--card", card, "--job", "pool"});
  poll.Stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = Results("pool")["parts"]["mmlupro"];
  EXPECT_EQ(m["slots"], 4);
  EXPECT_EQ(m["max_in_flight"], 4);
  EXPECT_EQ(m["n"], 32);
  EXPECT_GT(poll.polls(), 10);
  EXPECT_LE(poll.max_processing(), 4);
  EXPECT_GE(poll.max_processing(), 2) << "the pool never filled the server's slots";
  EXPECT_EQ(poll.max_deferred(), 0) << "a request waited inside the server";
  EXPECT_EQ(Samples("pool", "mmlupro").size(), 32u);
}

TEST_F(RealPool, AnswersCutAtTheLimitAreCountedApart) {
  // The tiny model almost never stops on its own: every answer ends at max_tokens.
  LlamaServer* s = StartServer({.parallel = 2, .ctx = 8192});
  const std::string card =
      WriteCardJson(Card(Server(s), {{"mmlupro", {{"questions", 10}, {"max_tokens", 8}}}}));
  BinaryResult r = Run({"--card", card, "--job", "cut"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int cut = 0;
  for (const auto& l : Samples("cut", "mmlupro")) {
    EXPECT_EQ(l["completion_tokens"], 8) << l.dump();
    if (l["finish_reason"] == "length") {
      ++cut;
      EXPECT_EQ(l["cut_off"], true);
      EXPECT_EQ(l["correct"], false);
    }
  }
  EXPECT_EQ(cut, 10);
  EXPECT_EQ(Results("cut")["parts"]["mmlupro"]["cut_off"], 10);
}

}  // namespace
}  // namespace evalrun::testing
