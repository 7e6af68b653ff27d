// The pool's admission into a shared KV cache, its handling of capacity
// failures (sent back, admission tightened), and of a server that goes away
// and comes back (the requests in flight asked again, once; an answer from a
// server that now serves another model dropped and the run stopped).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "evals/run/request_pool.h"
#include "tests/engine/request_pool_fixture.h"

namespace evalrun {
namespace {

using pool_testing::AllIndices;
using pool_testing::MakePrompts;

// A server model shared by the clients: a KV cache of `capacity` tokens
// that every running request holds `reserve[i]` of; a request that would
// overflow it makes every running request fail (as llama-server does), and
// optional outages.
struct Server {
  std::mutex mu;
  int64_t capacity = 0;                 // 0: no cache limit
  std::vector<int64_t> reserve;
  int64_t held = 0, max_held = 0;
  int running = 0, max_running = 0;
  uint64_t overflow_gen = 0;
  std::map<size_t, int> asked;          // prompt index -> times sent
  std::atomic<int> down{0};             // > 0: refuse the next N requests (the server is gone)
  bool model_changed = false;           // answers come from another model (CheckSame fails)
  int service_ms = 3;
};

class KvClient : public Client {
 public:
  explicit KvClient(Server* s) : s_(s) {}
  CallResult Complete(const Prompt& p) override {
    const size_t i = std::stoul(p.messages[0].content);
    CallResult r;
    r.attempts = 1;
    if (s_->down.load() > 0) {
      --s_->down;
      r.status = CallStatus::kUnreachable;
      r.error = "could not connect";
      return r;
    }
    uint64_t gen;
    {
      std::lock_guard<std::mutex> l(s_->mu);
      ++s_->asked[i];
      const int64_t need = s_->reserve.empty() ? 0 : s_->reserve[i];
      if (s_->capacity > 0 && s_->held + need > s_->capacity) {
        ++s_->overflow_gen;  // everybody running fails
        r.status = CallStatus::kCapacity;
        r.error = "HTTP 500: Context size has been exceeded.";
        r.http_status = 500;
        return r;
      }
      s_->held += need;
      s_->max_held = std::max(s_->max_held, s_->held);
      s_->max_running = std::max(s_->max_running, ++s_->running);
      gen = s_->overflow_gen;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(s_->service_ms));
    std::lock_guard<std::mutex> l(s_->mu);
    s_->held -= s_->reserve.empty() ? 0 : s_->reserve[i];
    --s_->running;
    if (s_->overflow_gen != gen) {
      r.status = CallStatus::kCapacity;
      r.error = "HTTP 500: Context size has been exceeded.";
      return r;
    }
    r.status = CallStatus::kOk;
    r.completion.content = p.messages[0].content;
    r.new_connection = s_->model_changed;
    return r;
  }

 private:
  Server* s_;
};

class FakeWatch : public ServerWatch {
 public:
  explicit FakeWatch(Server* s) : s_(s) {}
  Status AwaitRecovery(CancelToken*, bool* was_down) override {
    ++recoveries;
    *was_down = true;
    return Status::Ok();
  }
  Status CheckSame() override {
    ++checks;
    return s_->model_changed ? Status::Changed("model_path: \"a.gguf\" -> \"b.gguf\"") : Status::Ok();
  }
  std::atomic<int> recoveries{0}, checks{0};

 private:
  Server* s_;
};

TEST(RequestPoolAdmission, NeverMoreTokensInFlightThanTheSharedCache) {
  Server s;
  s.capacity = 8192;
  for (int i = 0; i < 40; ++i) s.reserve.push_back(i % 2 ? 4000 : 1000);
  PoolOptions o;
  o.reserve_tokens = s.reserve;
  o.kv_capacity_tokens = 8192;
  RequestPool pool(4, [&] { return std::make_unique<KvClient>(&s); }, o);
  int ok = 0;
  pool.Run(MakePrompts(40), AllIndices(40), [&](size_t, const CallResult& r) { ok += r.status == CallStatus::kOk; },
           nullptr);
  EXPECT_EQ(ok, 40);
  EXPECT_LE(s.max_held, 8192);
  EXPECT_EQ(pool.stats().capacity_returns.load(), 0);
  EXPECT_GT(pool.stats().admission_waits.load(), 0);
  EXPECT_LE(pool.stats().max_in_flight.load(), 4);
  for (const auto& [i, n] : s.asked) EXPECT_EQ(n, 1) << i;
}

TEST(RequestPoolAdmission, SmallRequestsStillFillEverySlot) {
  Server s;
  s.capacity = 8192;
  s.reserve.assign(40, 1024);
  s.service_ms = 30;
  PoolOptions o;
  o.reserve_tokens = s.reserve;
  o.kv_capacity_tokens = 8192;
  RequestPool pool(4, [&] { return std::make_unique<KvClient>(&s); }, o);
  pool.Run(MakePrompts(40), AllIndices(40), nullptr, nullptr);
  EXPECT_EQ(s.max_running, 4);
  EXPECT_EQ(pool.stats().admission_waits.load(), 0);
}

TEST(RequestPoolAdmission, CapacityFailuresGoBackAndAdmissionTightens) {
  // The pool does not know the cache (no capacity given): the first round
  // overflows, every running request comes back, and the pool then admits
  // only what fits beside half of what failed together.
  Server s;
  s.capacity = 8192;
  s.reserve.assign(24, 3000);
  PoolOptions o;
  o.reserve_tokens = s.reserve;
  RequestPool pool(4, [&] { return std::make_unique<KvClient>(&s); }, o);
  std::vector<CallStatus> final_status(24, CallStatus::kFailed);
  pool.Run(MakePrompts(24), AllIndices(24), [&](size_t i, const CallResult& r) { final_status[i] = r.status; },
           nullptr);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(final_status[i], CallStatus::kOk) << i;
  EXPECT_GE(pool.stats().capacity_returns.load(), 1);
  EXPECT_GE(pool.stats().tightenings.load(), 1);
  EXPECT_LE(pool.capacity_tokens(), 8192);
  EXPECT_GT(pool.capacity_tokens(), 0);
}

TEST(RequestPoolAdmission, ARequestThatNeverFitsFailsAfterItsReturns) {
  Server s;
  s.capacity = 1000;
  s.reserve = {500, 5000, 500};
  PoolOptions o;
  o.reserve_tokens = s.reserve;
  o.max_returns = 3;
  RequestPool pool(2, [&] { return std::make_unique<KvClient>(&s); }, o);
  std::map<size_t, CallResult> got;
  pool.Run(MakePrompts(3), AllIndices(3), [&](size_t i, const CallResult& r) { got[i] = r; }, nullptr);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].status, CallStatus::kOk);
  EXPECT_EQ(got[2].status, CallStatus::kOk);
  EXPECT_EQ(got[1].status, CallStatus::kFailed);
  EXPECT_EQ(got[1].attempts, 4);
  EXPECT_NE(got[1].error.find("no room for this request 3 times"), std::string::npos) << got[1].error;
}

TEST(RequestPoolAdmission, AServerThatWentAwayIsWaitedForAndNothingIsAskedTwice) {
  Server s;
  s.down = 3;  // the first three requests find nobody
  FakeWatch watch(&s);
  PoolOptions o;
  o.watch = &watch;
  RequestPool pool(3, [&] { return std::make_unique<KvClient>(&s); }, o);
  int ok = 0;
  pool.Run(MakePrompts(20), AllIndices(20), [&](size_t, const CallResult& r) { ok += r.status == CallStatus::kOk; },
           nullptr);
  EXPECT_EQ(ok, 20);
  EXPECT_GE(watch.recoveries.load(), 1);
  ASSERT_GE(pool.outages().size(), 1u);
  EXPECT_TRUE(pool.outages()[0].recovered);
  EXPECT_TRUE(pool.stop_status().ok());
  for (const auto& [i, n] : s.asked) EXPECT_EQ(n, 1) << "answered twice: " << i;
  EXPECT_EQ(s.asked.size(), 20u);
}

TEST(RequestPoolAdmission, AnAnswerFromAnotherModelIsDroppedAndTheRunStops) {
  Server s;
  s.model_changed = true;
  FakeWatch watch(&s);
  PoolOptions o;
  o.watch = &watch;
  RequestPool pool(2, [&] { return std::make_unique<KvClient>(&s); }, o);
  int answers = 0;
  pool.Run(MakePrompts(10), AllIndices(10), [&](size_t, const CallResult&) { ++answers; }, nullptr);
  EXPECT_EQ(answers, 0) << "an answer of the other model was kept";
  EXPECT_EQ(pool.stop_status().code(), Status::Code::kChanged);
  EXPECT_NE(pool.stop_status().message().find("b.gguf"), std::string::npos);
}

TEST(RequestPoolAdmission, WithoutAWatchUnreachableIsAFailure) {
  Server s;
  s.down = 1;
  RequestPool pool(1, [&] { return std::make_unique<KvClient>(&s); });
  std::map<size_t, CallStatus> got;
  pool.Run(MakePrompts(2), AllIndices(2), [&](size_t i, const CallResult& r) { got[i] = r.status; }, nullptr);
  EXPECT_EQ(got[0], CallStatus::kFailed);
  EXPECT_EQ(got[1], CallStatus::kOk);
}

}  // namespace
}  // namespace evalrun
