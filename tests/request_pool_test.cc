#include "evals/request_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace evalrun {
namespace {

// A fake client: answers "<index>" after a short, varying service time, and
// tracks how many calls run at once across all clients.
struct Shared {
  std::atomic<int> running{0}, max_running{0}, calls{0};
};

class FakeClient : public Client {
 public:
  explicit FakeClient(Shared* s) : s_(s) {}
  CallResult Complete(const Prompt& p) override {
    int now = ++s_->running;
    int m = s_->max_running.load();
    while (now > m && !s_->max_running.compare_exchange_weak(m, now)) {
    }
    int n = ++s_->calls;
    std::this_thread::sleep_for(std::chrono::microseconds(200 + (n * 7919) % 1500));
    --s_->running;
    CallResult r;
    r.status = CallStatus::kOk;
    r.attempts = 1;
    r.completion.content = p.messages[0].content;
    return r;
  }

 private:
  Shared* s_;
};

std::vector<Prompt> MakePrompts(int n) {
  std::vector<Prompt> v(n);
  for (int i = 0; i < n; ++i) v[i].messages.push_back({"user", std::to_string(i)});
  return v;
}

TEST(RequestPoolTest, NeverAboveSlotsAndOrderKept) {
  for (int slots : {1, 3, 8}) {
    Shared s;
    RequestPool pool(slots, [&] { return std::make_unique<FakeClient>(&s); });
    auto prompts = MakePrompts(200);
    std::vector<size_t> order(200);
    for (size_t i = 0; i < 200; ++i) order[i] = i;
    std::vector<size_t> done;
    auto results = pool.Run(prompts, order, [&](size_t i, const CallResult&) { done.push_back(i); }, nullptr);
    EXPECT_EQ(s.max_running.load(), slots);
    EXPECT_EQ(pool.stats().max_in_flight.load(), slots);
    ASSERT_EQ(results.size(), 200u);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(results[i].completion.content, std::to_string(i));
    EXPECT_EQ(done.size(), 200u);
  }
}

TEST(RequestPoolTest, OnlyTheOrderedSubsetAndFewerItemsThanSlots) {
  Shared s;
  RequestPool pool(8, [&] { return std::make_unique<FakeClient>(&s); });
  auto prompts = MakePrompts(10);
  auto results = pool.Run(prompts, {3, 7}, {}, nullptr);
  EXPECT_EQ(s.calls.load(), 2);
  EXPECT_EQ(results[3].completion.content, "3");
  EXPECT_EQ(results[7].completion.content, "7");
  EXPECT_EQ(results[0].attempts, 0);
  EXPECT_LE(s.max_running.load(), 2);
}

TEST(RequestPoolTest, CancelStopsNewRequests) {
  Shared s;
  CancelToken cancel;
  RequestPool pool(2, [&] { return std::make_unique<FakeClient>(&s); });
  auto prompts = MakePrompts(100);
  std::vector<size_t> order(100);
  for (size_t i = 0; i < 100; ++i) order[i] = i;
  int seen = 0;
  pool.Run(prompts, order, [&](size_t, const CallResult&) {
    if (++seen == 10) cancel.Cancel();
  }, &cancel);
  EXPECT_LE(s.calls.load(), 12);  // at most the ones in flight finish
  EXPECT_GE(s.calls.load(), 10);
}

TEST(RequestPoolTest, PauseHoldsNewRequests) {
  Shared s;
  std::atomic<int> asks{0};
  RequestPool pool(1, [&] { return std::make_unique<FakeClient>(&s); });
  auto prompts = MakePrompts(3);
  pool.Run(prompts, {0, 1, 2}, {}, nullptr, [&] { return ++asks <= 2; });  // paused for two checks
  EXPECT_EQ(s.calls.load(), 3);
  EXPECT_GE(asks.load(), 5);
}

}  // namespace
}  // namespace evalrun
