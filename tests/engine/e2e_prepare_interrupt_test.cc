// End to end: SIGTERM while RULER prepares its prompts
// stops the preparation within a second or two of the first signal, says
// so ("interrupted during preparation", not "waiting for the answers in
// flight": there are none) and exits 130 without sending a request.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <thread>

#include "tests/support/e2e.h"
#include "tests/support/wait_for.h"
#include "tests/support/fake_server.h"

namespace evalrun::testing {
namespace {

class E2ePrepareInterrupt : public E2eTest {};

TEST_F(E2ePrepareInterrupt, SigtermDuringRulerPreparationStopsAtOnce) {
  // Every tokenizer call takes 20 ms: 600 samples need well over 20 s of
  // counting, so a preparation that ignores the signal is seen at once.
  FakeServerOptions o;
  o.tokenize_delay_ms = 20;
  FakeServer server(o);
  ASSERT_TRUE(server.Start());
  const std::string card = WriteCard(server.base_url(), "2", R"({"ruler": {
      "lengths": [2048], "tasks": ["niah_single_1", "niah_multikey_1"], "samples_per_task": 300}})");
  const std::vector<std::string> argv = {EvalrunBinary(), "--card", card, "--job", "p", "--out", dir_ + "/runs",
                                         "--data-dir", DatasetsDir()};
  const std::string err_path = dir_ + "/err.txt";
  const int pid = SpawnBinary(argv, dir_ + "/out.txt", err_path);
  ASSERT_GT(pid, 0);
  // Preparation under way: the message, then some counting.
  const bool preparing = WaitFor(
      [&] { return ReadFile(err_path).find("preparing prompts") != std::string::npos && server.tokenize_requests() > 20; },
      60);
  const int counted_at_signal = server.tokenize_requests();
  const auto signalled = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  BinaryResult r = WaitBinary(pid, 60);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  const std::string err = ReadFile(err_path);
  ASSERT_TRUE(preparing) << err;
  ASSERT_FALSE(r.timed_out) << err;
  EXPECT_EQ(r.exit_code, 130) << err;
  EXPECT_LT(took, 2.0) << "preparation went on after SIGTERM\n" << err;
  EXPECT_LT(server.tokenize_requests() - counted_at_signal, 10) << "counting went on after SIGTERM";
  EXPECT_NE(err.find("stopping: preparation stops before any request is sent"), std::string::npos) << err;
  EXPECT_NE(err.find("interrupted during preparation (part ruler); no request was sent"), std::string::npos) << err;
  EXPECT_EQ(err.find("answers in flight"), std::string::npos) << err;
  EXPECT_EQ(server.chat_requests(), 0);
}

}  // namespace
}  // namespace evalrun::testing
