#include "evals/run/request_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "tests/engine/request_pool_fixture.h"

namespace evalrun {
namespace {

// A good answer whose text is the prompt's ("<index>").
CallResult EchoAnswer(const Prompt& p) {
  CallResult r;
  r.status = CallStatus::kOk;
  r.attempts = 1;
  r.completion.content = p.messages[0].content;
  return r;
}

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
    return EchoAnswer(p);
  }

 private:
  Shared* s_;
};

using pool_testing::AllIndices;
using pool_testing::MakePrompts;

TEST(RequestPoolTest, NeverAboveSlotsAndOrderKept) {
  for (int slots : {1, 3, 8}) {
    Shared s;
    RequestPool pool(slots, [&] { return std::make_unique<FakeClient>(&s); });
    auto prompts = MakePrompts(200);
    const std::vector<size_t> order = AllIndices(200);
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
  const std::vector<size_t> order = AllIndices(100);
  int seen = 0;
  pool.Run(prompts, order, [&](size_t, const CallResult&) {
    if (++seen == 10) cancel.Cancel();
  }, &cancel);
  // After the cancel only what was in flight (2) or waiting for the writer
  // (at most 4 x slots) was asked; every answer that came still reached
  // on_done: nothing answered is dropped.
  EXPECT_LE(s.calls.load(), 10 + 2 + 8);
  EXPECT_GE(s.calls.load(), 10);
  EXPECT_EQ(seen, s.calls.load());
  EXPECT_EQ(pool.stats().done.load(), s.calls.load());
}

// Calls counted across the clients of one pool, with a condition variable
// a test can wait on (bounded waits only).
struct CallCounter {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  // Waits until pred(calls) or the timeout; returns pred(calls) and sets
  // *seen to the count then.
  template <typename Pred>
  bool WaitFor(std::chrono::milliseconds timeout, Pred pred, int* seen = nullptr) {
    std::unique_lock<std::mutex> l(mu);
    const bool ok = cv.wait_for(l, timeout, [&] { return pred(calls); });
    if (seen) *seen = calls;
    return ok;
  }
};

// A client that answers at once with the prompt's text and counts its calls.
class CountingClient : public Client {
 public:
  explicit CountingClient(CallCounter* counter) : counter_(counter) {}
  CallResult Complete(const Prompt& p) override {
    {
      std::lock_guard<std::mutex> l(counter_->mu);
      ++counter_->calls;
    }
    counter_->cv.notify_all();
    return EchoAnswer(p);
  }

 private:
  CallCounter* counter_;
};

TEST(RequestPoolTest, WorkerSendsNextRequestWhileTheAnswerIsBeingWritten) {
  // One slot. on_done for the first answer waits (up to 10 s) until the
  // client has been called again: the slot is not held while the caller
  // persists an answer (an fsync). Were on_done on the worker's path, the
  // second call could only come after it returned.
  CallCounter counter;
  RequestPool pool(1, [&] { return std::make_unique<CountingClient>(&counter); });
  auto prompts = MakePrompts(3);
  bool second_call_during_first_write = false;
  std::vector<size_t> done;
  auto results = pool.Run(prompts, {0, 1, 2}, [&](size_t i, const CallResult&) {
    if (done.empty())
      second_call_during_first_write = counter.WaitFor(std::chrono::seconds(10), [](int c) { return c >= 2; });
    done.push_back(i);
  }, nullptr);
  EXPECT_TRUE(second_call_during_first_write);
  EXPECT_EQ(done, (std::vector<size_t>{0, 1, 2}));  // arrival order, all of them
  EXPECT_EQ(results[2].completion.content, "2");
  EXPECT_EQ(pool.stats().done.load(), 3);
}

TEST(RequestPoolTest, SlowWriterHoldsWorkersBackWithinBound) {
  // on_done of the first answer blocks for a while: the workers may go on
  // only while at most 4 x slots answers wait for the writer.
  const int slots = 2;
  CallCounter counter;
  RequestPool pool(slots, [&] { return std::make_unique<CountingClient>(&counter); });
  auto prompts = MakePrompts(50);
  const std::vector<size_t> order = AllIndices(50);
  int calls_while_blocked = -1;
  size_t done = 0;
  pool.Run(prompts, order, [&](size_t, const CallResult&) {
    if (done++ == 0) {
      // Give the workers time to run ahead as far as they can.
      counter.WaitFor(std::chrono::milliseconds(300), [&](int c) { return c > 4 * slots + slots; },
                      &calls_while_blocked);
    }
  }, nullptr);
  // The batch in the writer (at most 2 x slots) + 2 x slots queued + one
  // more in each worker, blocked on the full queue.
  EXPECT_GE(calls_while_blocked, 2);
  EXPECT_LE(calls_while_blocked, 4 * slots + slots);
  EXPECT_EQ(done, 50u);
}

TEST(RequestPoolTest, AnswersWaitingTogetherShareOneBatchEnd) {
  // 4 slots, instant answers; on_done of the first answer waits until the
  // workers have run ahead (bounded wait), so the answers queued meanwhile
  // come to the writer together: on_batch_end (the caller's fsync) runs
  // fewer times than there are answers. Every on_done is followed by an
  // on_batch_end before Run returns, and stats().done counts only answers
  // whose batch has ended.
  const int slots = 4;
  CallCounter counter;
  RequestPool pool(slots, [&] { return std::make_unique<CountingClient>(&counter); });
  auto prompts = MakePrompts(60);
  const std::vector<size_t> order = AllIndices(60);
  int answered = 0, since_batch_end = 0, batches = 0, largest = 0;
  bool done_counted_early = false;
  pool.Run(prompts, order, [&](size_t, const CallResult&) {
    if (answered++ == 0) counter.WaitFor(std::chrono::seconds(10), [&](int c) { return c >= 1 + 2 * slots; });
    ++since_batch_end;
    if (pool.stats().done.load() > answered - since_batch_end) done_counted_early = true;
  }, nullptr, {}, [&] {
    ++batches;
    largest = std::max(largest, since_batch_end);
    since_batch_end = 0;
  });
  EXPECT_EQ(answered, 60);
  EXPECT_EQ(since_batch_end, 0);
  EXPECT_EQ(pool.stats().done.load(), 60);
  EXPECT_FALSE(done_counted_early);
  EXPECT_GT(largest, 1);
  EXPECT_LT(batches, 60);
}

// Slots that finish together (llama-server decodes one batch for all of
// them): each round's 4 answers come within ~0.6 ms of one another, rounds
// 15 ms apart. The writer's group commit gives each round about one
// on_batch_end, where one per answer would be 40; nothing is lost.
class LockstepClient : public Client {
 public:
  explicit LockstepClient(std::barrier<>* round) : round_(round) {}
  CallResult Complete(const Prompt& p) override {
    round_->arrive_and_wait();
    const int k = std::stoi(p.messages[0].content) % 4;
    std::this_thread::sleep_for(std::chrono::milliseconds(15) + std::chrono::microseconds(200 * k));
    return EchoAnswer(p);
  }

 private:
  std::barrier<>* round_;
};

TEST(RequestPoolTest, AnswersFinishingTogetherShareOneSync) {
  std::barrier<> round(4);
  RequestPool pool(4, [&] { return std::make_unique<LockstepClient>(&round); });
  auto prompts = MakePrompts(40);
  int answered = 0, batches = 0, since_batch_end = 0;
  auto results = pool.Run(prompts, AllIndices(40), [&](size_t, const CallResult&) { ++answered, ++since_batch_end; },
                          nullptr, {}, [&] { ++batches, since_batch_end = 0; });
  EXPECT_EQ(answered, 40);
  EXPECT_EQ(since_batch_end, 0);  // the last answers' batch ended too
  EXPECT_EQ(pool.stats().done.load(), 40);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(results[i].completion.content, std::to_string(i));
  // 10 rounds; a round split in two by a late thread is allowed for.
  EXPECT_LE(batches, 20);
}

// Four slots' answers come 8 ms apart after each barrier, each saying it
// took `latency_ms`.
class StaggeredClient : public Client {
 public:
  StaggeredClient(std::barrier<>* round, double latency_ms) : round_(round), latency_ms_(latency_ms) {}
  CallResult Complete(const Prompt& p) override {
    round_->arrive_and_wait();
    const int k = std::stoi(p.messages[0].content) % 4;
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + 8 * k));
    CallResult r = EchoAnswer(p);
    r.latency_ms = latency_ms_;
    return r;
  }

 private:
  std::barrier<>* round_;
  double latency_ms_;
};

int BatchEndsOfStaggeredAnswers(double latency_ms) {
  std::barrier<> round(4);
  RequestPool pool(4, [&] { return std::make_unique<StaggeredClient>(&round, latency_ms); });
  int answered = 0, batches = 0;
  pool.Run(MakePrompts(40), AllIndices(40), [&](size_t, const CallResult&) { ++answered; }, nullptr, {},
           [&] { ++batches; });
  EXPECT_EQ(answered, 40);
  return batches;
}

// The group commit waits for more answers as long as a tenth of the
// answers' own time (at most 50 ms): answers of half a second each, 8 ms
// apart, share one sync a round; answers of 20 ms each are not held for
// longer than 4 ms, so 8 ms apart each gets its own.
TEST(RequestPoolTest, TheGroupCommitWaitsLongerForLongerAnswers) {
  EXPECT_LE(BatchEndsOfStaggeredAnswers(500), 15);  // 10 rounds
  EXPECT_GE(BatchEndsOfStaggeredAnswers(20), 25);
}

std::string ThisThreadName() {
  char name[16] = {0};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

class NameRecordingClient : public Client {
 public:
  explicit NameRecordingClient(std::vector<std::string>* names, std::mutex* mu) : names_(names), mu_(mu) {}
  CallResult Complete(const Prompt&) override {
    std::lock_guard<std::mutex> l(*mu_);
    names_->push_back(ThisThreadName());
    CallResult r;
    r.status = CallStatus::kOk;
    return r;
  }

 private:
  std::vector<std::string>* names_;
  std::mutex* mu_;
};

TEST(RequestPoolTest, ThreadsAreNamedForTopAndPs) {
  std::vector<std::string> client_names;
  std::mutex mu;
  RequestPool pool(2, [&] { return std::make_unique<NameRecordingClient>(&client_names, &mu); });
  std::set<std::string> writer_names;
  pool.Run(MakePrompts(6), {0, 1, 2, 3, 4, 5},
           [&](size_t, const CallResult&) { writer_names.insert(ThisThreadName()); }, nullptr);
  EXPECT_EQ(writer_names, std::set<std::string>{"evalrun-writer"});
  std::set<std::string> slots(client_names.begin(), client_names.end());
  for (const auto& n : slots) EXPECT_TRUE(n == "evalrun-slot0" || n == "evalrun-slot1") << n;
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
