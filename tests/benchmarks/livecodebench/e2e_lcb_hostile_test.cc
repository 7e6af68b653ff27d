// A LiveCodeBench run whose model answers like a hostile one, end to end:
// the real evalrun against the fake server, at every sandbox level (the
// card's sandbox_max_level; rlimits with unsafe_exec). One answer forges result frames on every descriptor and
// exits; one exits out of its method (SystemExit); beside them an honest
// answer. The run exits 0, the two hostile answers are graded failed and
// the honest one passed (as the official grader grades it).
#include "tests/support/e2e.h"
#include "tests/support/fake_server.h"
#include "tests/support/lcb_fixtures.h"

namespace evalrun::testing {
namespace {

const std::string kFix = LcbFixtureDir();

std::string Fence(const std::string& code) { return "Here you go.\n\n```python\n" + code + "\n```\n"; }

class E2eLcbHostile : public E2eTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(E2eLcbHostile, HostileAnswersFailTheirNeighbourPassesAndTheRunEndsWell) {
  const std::string level = GetParam();
  FakeServer server{{.slots = 3}};
  ASSERT_TRUE(server.Start());
  server.SetResponder([](const nlohmann::json& req) {
    const std::string user = req["messages"][1]["content"].get<std::string>();
    if (user.find("Print their sum") != std::string::npos)  // abc900_a: forge frames everywhere, then exit
      return FakeReply{Fence("import os\nfor fd in range(64):\n    for line in (b'{\"frame\": \"test\", \"test\": 0, "
                             "\"printed\": \"6\"}\\n', b'@@evalrun-lcb-result {\"results\": [true, true, true]}\\n'):\n"
                             "        try:\n            os.write(fd, line)\n        except OSError:\n"
                             "            pass\nos._exit(0)"),
                       "", "stop"};
    if (user.find("Return the indices") != std::string::npos)  // 3900: SystemExit out of the method
      return FakeReply{Fence("class Solution:\n    def pairSum(self, nums, target):\n        raise SystemExit(0)"), "",
                       "stop"};
    return FakeReply{Fence("a, b = map(int, input().split())\nprint('%.10f' % ((a + b) / 2))\nprint('done')"), "",
                     "stop"};
  });
  const std::string card = WriteCard(server.base_url(), "3",
                                     R"({"livecodebench": {"data_file": ")" + kFix +
                                         R"(test.jsonl", "test_timeout_s": 3, "sandbox_max_level": ")" + level +
                                         R"(", "unsafe_exec": )" + (level == "rlimits" ? "true" : "false") + "}}",
                                     R"("scoring": {"concurrency": 3},)");
  BinaryResult r = Run({"--card", card, "--job", "h"}, 240);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json res = Results("h")["parts"]["livecodebench"];
  if (res["sandbox"]["probe"].value(level, std::string()) != "ok")
    GTEST_SKIP() << level << " cannot be made on this machine: " << res["sandbox"]["probe"].dump();
  EXPECT_EQ(res["sandbox"]["level"], level);
  EXPECT_EQ(res["n"], 3);
  EXPECT_NEAR(res["score"].get<double>(), 1.0 / 3, 1e-6);  // results.json rounds
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& s : Samples("h", "livecodebench")) by_id[s["id"].get<std::string>()] = s;
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_FALSE(by_id["abc900_a"]["passed"].get<bool>()) << by_id["abc900_a"].dump();
  EXPECT_FALSE(by_id["3900"]["passed"].get<bool>()) << by_id["3900"].dump();
  EXPECT_TRUE(by_id["1900A"]["passed"].get<bool>()) << by_id["1900A"].dump();
}

INSTANTIATE_TEST_SUITE_P(Levels, E2eLcbHostile, ::testing::Values("namespaces", "unshare", "seccomp", "rlimits"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace evalrun::testing
