// The shared fakes of tests/support: FakeClient, FlakyClient, FakeClock.
#include "tests/support/fake_client.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/support/fake_clock.h"

namespace evalrun {
namespace {

using testing::Fault;
using testing::FakeClient;
using testing::FlakyClient;

Prompt Say(const std::string& text) {
  Prompt p;
  p.messages.push_back({"user", text});
  return p;
}

TEST(FakeClientTest, AnswersFromItsScriptWithTheCallNumber) {
  FakeClient c([](const Prompt& p, int call) { return testing::Answer(p.messages[0].content + std::to_string(call)); });
  EXPECT_EQ(c.Complete(Say("a")).completion.content, "a0");
  CallResult r = c.Complete(Say("b"));
  EXPECT_EQ(r.status, CallStatus::kOk);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.completion.content, "b1");
  EXPECT_EQ(c.calls(), 2);
  FakeClient echo(FakeClient::Echo());
  EXPECT_EQ(echo.Complete(Say("same")).completion.content, "same");
}

TEST(FakeClientTest, ClientsOfOneFactoryShareTheCount) {
  std::shared_ptr<std::atomic<int>> calls;
  ClientFactory make = testing::FakeClientFactory(FakeClient::Echo(), &calls);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&] {
      auto c = make();
      for (int i = 0; i < 25; ++i) c->Complete(Say("x"));
    });
  for (auto& t : workers) t.join();
  EXPECT_EQ(calls->load(), 100);
}

TEST(FlakyClientTest, FaultsBySchedulePassTheRestThrough) {
  FlakyClient c(std::make_unique<FakeClient>(FakeClient::Echo()), {Fault::kNone, Fault::kBusy503, Fault::kReset});
  EXPECT_EQ(c.Complete(Say("one")).completion.content, "one");
  CallResult busy = c.Complete(Say("two"));
  EXPECT_EQ(busy.status, CallStatus::kFailed);
  EXPECT_EQ(busy.http_status, 503);
  EXPECT_EQ(c.Complete(Say("three")).status, CallStatus::kUnreachable);
  EXPECT_EQ(c.Complete(Say("four")).completion.content, "four");  // past the schedule
  EXPECT_EQ(c.calls(), 4);
  EXPECT_EQ(c.faults(), 2);

  FlakyClient every_other(std::make_unique<FakeClient>(FakeClient::Echo()),
                          [](int call) { return call % 2 ? Fault::kTimeout : Fault::kNone; });
  EXPECT_EQ(every_other.Complete(Say("a")).status, CallStatus::kOk);
  EXPECT_EQ(every_other.Complete(Say("b")).status, CallStatus::kFailed);
  EXPECT_EQ(every_other.Complete(Say("c")).status, CallStatus::kOk);
}

TEST(FakeClockTest, SleepsReturnAtOnceAndMoveTheTime) {
  testing::FakeClock clock;
  EXPECT_EQ(clock.MonotonicSeconds(), 0);
  EXPECT_EQ(clock.UtcIso8601(), "2025-11-30T04:10:00.000Z");
  EXPECT_TRUE(clock.SleepFor(1.5, nullptr));
  clock.Advance(0.25);
  EXPECT_EQ(clock.MonotonicSeconds(), 1.75);
  EXPECT_EQ(clock.UtcIso8601(), "2025-11-30T04:10:01.750Z");
  Stopwatch w(&clock);
  EXPECT_TRUE(clock.SleepFor(2, nullptr));
  EXPECT_EQ(w.Seconds(), 2);

  CancelToken cancel;
  int hooked = 0;
  clock.set_sleep_hook([&](double s) {
    ++hooked;
    if (s > 5) cancel.Cancel();
  });
  EXPECT_TRUE(clock.SleepFor(1, &cancel));
  EXPECT_FALSE(clock.SleepFor(10, &cancel));  // cancelled during it
  EXPECT_FALSE(clock.SleepFor(1, &cancel));   // and before it: time stands
  EXPECT_EQ(hooked, 2);
  EXPECT_EQ(clock.sleeps(), (std::vector<double>{1.5, 2, 1, 10}));
  EXPECT_EQ(clock.slept(), 14.5);
  EXPECT_EQ(clock.MonotonicSeconds(), 14.75);  // 1.5 + 0.25 + 2 + 1 + 10
}

}  // namespace
}  // namespace evalrun
