// The request pool over several endpoints (evals/run/request_pool.h): one
// queue, each endpoint at most its own slots in flight, a failing
// endpoint's requests taken by the others, an endpoint that stays down (or
// changed model) dropped, and the run stopped only when none is left.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "evals/run/progress.h"
#include "evals/run/request_pool.h"
#include "tests/engine/request_pool_fixture.h"

namespace evalrun {
namespace {

using pool_testing::AllIndices;
using pool_testing::MakePrompts;

// One endpoint's server as its clients see it: how many run at once, and
// whether it is up (down: every call is kUnreachable).
struct FakeEndpoint {
  std::atomic<int> running{0}, max_running{0}, calls{0}, answered{0};
  std::atomic<bool> down{false};
  int service_us = 300;
};

class EndpointClient : public Client {
 public:
  explicit EndpointClient(FakeEndpoint* e) : e_(e) {}
  CallResult Complete(const Prompt& p) override {
    const int now = ++e_->running;
    int m = e_->max_running.load();
    while (now > m && !e_->max_running.compare_exchange_weak(m, now)) {
    }
    ++e_->calls;
    std::this_thread::sleep_for(std::chrono::microseconds(e_->service_us));
    --e_->running;
    CallResult r;
    if (e_->down) {
      r.status = CallStatus::kUnreachable;
      r.error = "connection refused";
      return r;
    }
    ++e_->answered;
    r.status = CallStatus::kOk;
    // As after a reconnect: the pool checks the endpoint (CheckSame) first.
    r.new_connection = true;
    r.attempts = 1;
    r.completion.content = p.messages[0].content;
    return r;
  }

 private:
  FakeEndpoint* e_;
};

// A watch whose server is down while `down` says so; AwaitRecovery waits
// up to `wait_s` for it, then Unavailable (or `changed`: Changed).
class FakeWatch : public ServerWatch {
 public:
  FakeWatch(FakeEndpoint* e, double wait_s) : e_(e), wait_s_(wait_s) {}
  Status AwaitRecovery(CancelToken* cancel, bool* was_down) override {
    ++awaits;
    *was_down = false;
    const auto start = std::chrono::steady_clock::now();
    while (e_->down) {
      *was_down = true;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > wait_s_)
        return Status::Unavailable("fake endpoint did not come back");
      if (cancel && !cancel->SleepFor(0.01)) return Status::Cancelled("cancelled");
    }
    return CheckSame();
  }
  Status CheckSame() override { return changed ? Status::Changed("model_path: \"a\" -> \"b\"") : Status::Ok(); }
  std::atomic<int> awaits{0};
  std::atomic<bool> changed{false};

 private:
  FakeEndpoint* e_;
  double wait_s_;
};

PoolEndpoint Endpoint(const std::string& name, int slots, FakeEndpoint* e, ServerWatch* watch = nullptr) {
  PoolEndpoint p;
  p.name = name;
  p.slots = slots;
  p.make_client = [e] { return std::make_unique<EndpointClient>(e); };
  p.watch = watch;
  return p;
}

TEST(RequestPoolEndpoints, EachEndpointAtMostItsSlotsAndEveryItemOnce) {
  FakeEndpoint a, b;
  b.service_us = 900;  // slower: takes less of the queue, holds nothing back
  RequestPool pool({Endpoint("http://a/v1", 2, &a), Endpoint("http://b/v1", 3, &b)});
  EXPECT_EQ(pool.slots(), 5);
  const auto prompts = MakePrompts(300);
  std::multiset<size_t> seen;
  std::vector<int> by_endpoint(2, 0);
  auto results = pool.Run(prompts, AllIndices(300), [&](size_t i, const CallResult& r) {
    seen.insert(i);
    ++by_endpoint.at(r.endpoint);
  }, nullptr);
  ASSERT_EQ(seen.size(), 300u);
  for (size_t i = 0; i < 300; ++i) {
    EXPECT_EQ(seen.count(i), 1u) << i;
    EXPECT_EQ(results[i].completion.content, std::to_string(i));
  }
  EXPECT_EQ(a.max_running.load(), 2);
  EXPECT_EQ(b.max_running.load(), 3);
  EXPECT_LE(pool.endpoint_stats(0).max_in_flight.load(), 2);
  EXPECT_LE(pool.endpoint_stats(1).max_in_flight.load(), 3);
  EXPECT_EQ(a.calls + b.calls, 300);
  EXPECT_EQ(by_endpoint[0], a.answered.load());
  EXPECT_EQ(by_endpoint[1], b.answered.load());
  EXPECT_EQ(pool.endpoint_stats(0).answered + pool.endpoint_stats(1).answered, 300);
  EXPECT_GT(by_endpoint[0], 0);
  EXPECT_GT(by_endpoint[1], 0);
  EXPECT_TRUE(pool.stop_status().ok());
  EXPECT_TRUE(pool.drops().empty());
}

TEST(RequestPoolEndpoints, KvAdmissionIsPerEndpoint) {
  // Endpoint a's cache holds one request of 100 tokens at a time; b has no
  // shared cache and runs its 3 slots.
  FakeEndpoint a, b;
  std::vector<PoolEndpoint> eps = {Endpoint("http://a/v1", 3, &a), Endpoint("http://b/v1", 3, &b)};
  eps[0].kv_capacity_tokens = 150;
  PoolOptions o;
  o.reserve_tokens.assign(120, 100);
  RequestPool pool(std::move(eps), o);
  std::atomic<int> n{0};
  pool.Run(MakePrompts(120), AllIndices(120), [&](size_t, const CallResult&) { ++n; }, nullptr);
  EXPECT_EQ(n.load(), 120);
  EXPECT_EQ(a.max_running.load(), 1) << "a's shared cache admits one request of 100 tokens within 150";
  EXPECT_EQ(b.max_running.load(), 3);
}

TEST(RequestPoolEndpoints, DownEndpointsWorkMovesAndItIsDropped) {
  FakeEndpoint a, b;
  a.down = true;  // refuses everything; never comes back within its wait
  FakeWatch wa(&a, 0.1), wb(&b, 0.1);
  std::vector<std::string> notes;
  std::mutex mu;
  PoolOptions o;
  o.note = [&](const std::string& line) {
    std::lock_guard<std::mutex> l(mu);
    notes.push_back(line);
  };
  b.service_us = 3000;  // slow enough that a's wait ends while work is left
  RequestPool pool({Endpoint("http://a/v1", 2, &a, &wa), Endpoint("http://b/v1", 2, &b, &wb)}, o);
  std::multiset<size_t> seen;
  int failed = 0;
  pool.Run(MakePrompts(400), AllIndices(400), [&](size_t i, const CallResult& r) {
    seen.insert(i);
    failed += r.status != CallStatus::kOk;
    EXPECT_EQ(r.endpoint, 1);
  }, nullptr);
  EXPECT_EQ(seen.size(), 400u);
  EXPECT_EQ(failed, 0) << "a request refused by a was failed instead of moved to b";
  for (size_t i = 0; i < 400; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
  EXPECT_TRUE(pool.stop_status().ok()) << pool.stop_status().message();
  ASSERT_EQ(pool.drops().size(), 1u);
  EXPECT_EQ(pool.drops()[0].name, "http://a/v1");
  EXPECT_NE(pool.drops()[0].reason.find("did not come back"), std::string::npos);
  EXPECT_EQ(pool.endpoint_stats(0).answered.load(), 0);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("dropping endpoint http://a/v1"), std::string::npos) << notes[0];
  EXPECT_EQ(wa.awaits.load(), 1) << "a's workers waited for it once, together";
}

TEST(RequestPoolEndpoints, WaitEndsWhenTheOthersFinishTheWork) {
  // a is down with a wait far longer than the work: the run must not wait it out.
  FakeEndpoint a, b;
  a.down = true;
  FakeWatch wa(&a, 600);
  b.service_us = 5000;  // a's workers start (and find a down) well before the work is done
  RequestPool pool({Endpoint("http://a/v1", 2, &a, &wa), Endpoint("http://b/v1", 2, &b)});
  const auto t0 = std::chrono::steady_clock::now();
  int n = 0;
  pool.Run(MakePrompts(50), AllIndices(50), [&](size_t, const CallResult& r) { n += r.status == CallStatus::kOk; },
           nullptr);
  EXPECT_EQ(n, 50);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30);
  ASSERT_EQ(pool.outages().size(), 1u);
  EXPECT_EQ(pool.outages()[0].endpoint_name, "http://a/v1");
  EXPECT_FALSE(pool.outages()[0].recovered);
  EXPECT_EQ(pool.outages()[0].error, "the other endpoints finished the work meanwhile");
  EXPECT_TRUE(pool.drops().empty());
  EXPECT_TRUE(pool.stop_status().ok());
}

TEST(RequestPoolEndpoints, RunStopsWhenNoEndpointIsLeft) {
  FakeEndpoint a, b;
  a.down = true;
  b.down = true;
  FakeWatch wa(&a, 0.2), wb(&b, 0.2);
  RequestPool pool({Endpoint("http://a/v1", 2, &a, &wa), Endpoint("http://b/v1", 2, &b, &wb)});
  int n = 0;
  pool.Run(MakePrompts(20), AllIndices(20), [&](size_t, const CallResult&) { ++n; }, nullptr);
  EXPECT_EQ(n, 0) << "nothing answered, nothing failed for good: the job can be resumed";
  EXPECT_EQ(pool.stop_status().code(), Status::Code::kUnavailable);
  EXPECT_NE(pool.stop_status().message().find("no endpoint is left"), std::string::npos)
      << pool.stop_status().message();
  EXPECT_EQ(pool.drops().size(), 2u);
}

TEST(RequestPoolEndpoints, EndpointThatComesBackServingAnotherModelIsDropped) {
  // a goes down briefly and comes back "changed": dropped; b does the rest.
  FakeEndpoint a, b;
  FakeWatch wa(&a, 5), wb(&b, 5);
  wa.changed = true;
  a.down = true;
  std::thread up([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    a.down = false;
  });
  b.service_us = 1000;
  RequestPool pool({Endpoint("http://a/v1", 2, &a, &wa), Endpoint("http://b/v1", 2, &b, &wb)});
  std::set<size_t> seen;
  pool.Run(MakePrompts(200), AllIndices(200), [&](size_t i, const CallResult& r) {
    if (r.status == CallStatus::kOk) seen.insert(i);
    EXPECT_EQ(r.endpoint, 1) << "an answer of the changed endpoint was kept";
  }, nullptr);
  up.join();
  EXPECT_EQ(seen.size(), 200u);
  ASSERT_EQ(pool.drops().size(), 1u);
  EXPECT_NE(pool.drops()[0].reason.find("model_path"), std::string::npos);
  EXPECT_TRUE(pool.stop_status().ok());
}

TEST(RequestPoolEndpoints, OneEndpointKeepsTheOldStop) {
  // With one endpoint, a server that stays down stops the run as before
  // (no "no endpoint is left" wording, no drop list).
  FakeEndpoint a;
  a.down = true;
  FakeWatch wa(&a, 0.2);
  PoolOptions o;
  o.watch = &wa;
  RequestPool pool(2, [&] { return std::make_unique<EndpointClient>(&a); }, o);
  pool.Run(MakePrompts(5), AllIndices(5), [&](size_t, const CallResult&) {}, nullptr);
  EXPECT_EQ(pool.stop_status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(pool.stop_status().message(), "fake endpoint did not come back");
  EXPECT_TRUE(pool.drops().empty());
  ASSERT_EQ(pool.outages().size(), 1u);
  // Each request in flight then was sent back (the second worker's, unless
  // it began only after the outage did: then it waited instead).
  EXPECT_GE(pool.outages()[0].requeued, 1);
  EXPECT_LE(pool.outages()[0].requeued, 2);
}

// A request that fails as unreachable while its server answers /health at
// once failed on its own: failed after one try, never asked again by the
// same endpoint's other workers while the pool looked into it.
class OneBadPromptClient : public Client {
 public:
  explicit OneBadPromptClient(std::atomic<int>* bad_calls) : bad_calls_(bad_calls) {}
  CallResult Complete(const Prompt& p) override {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    CallResult r;
    if (p.messages[0].content == "3") {
      ++*bad_calls_;
      r.status = CallStatus::kUnreachable;
      r.error = "connection reset";
      return r;
    }
    r.status = CallStatus::kOk;
    r.completion.content = p.messages[0].content;
    return r;
  }

 private:
  std::atomic<int>* bad_calls_;
};

TEST(RequestPoolEndpoints, ARequestsOwnFailureIsNotAskedAgainByItsEndpoint) {
  FakeEndpoint up;  // never down: the watch finds the server at once
  FakeWatch watch(&up, 5);
  std::atomic<int> bad_calls{0};
  PoolOptions o;
  o.watch = &watch;
  RequestPool pool(4, [&] { return std::make_unique<OneBadPromptClient>(&bad_calls); }, o);
  int ok = 0, failed = 0;
  pool.Run(MakePrompts(60), AllIndices(60), [&](size_t i, const CallResult& r) {
    if (r.status == CallStatus::kOk) ++ok;
    if (r.status == CallStatus::kFailed) {
      ++failed;
      EXPECT_EQ(i, 3u);
    }
  }, nullptr);
  EXPECT_EQ(ok, 59);
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(bad_calls.load(), 1) << "the request was asked again after its own failure";
  EXPECT_TRUE(pool.outages().empty());
}

TEST(RequestPoolEndpoints, ProgressShowsEachEndpointsRequestsInFlight) {
  FakeEndpoint a, b;
  a.service_us = b.service_us = 20000;
  RequestPool pool({Endpoint("http://a/v1", 2, &a), Endpoint("http://b/v1", 3, &b)});
  Progress progress("mmlupro", 40, 0, pool.slots(), &pool.stats(), stderr, false);
  progress.ShowEndpoints(&pool);
  EXPECT_NE(progress.Line().find("in flight 0/5 [0/2 0/3]"), std::string::npos) << progress.Line();
  std::vector<std::string> lines;
  pool.Run(MakePrompts(40), AllIndices(40), [&](size_t, const CallResult&) { lines.push_back(progress.Line()); },
           nullptr);
  // Read as answers arrive: "in flight N/5 [x/2 y/3]", never above an
  // endpoint's slots, and each endpoint seen busy.
  int max_x = 0, max_y = 0;
  for (const auto& line : lines) {
    const size_t open = line.find('[');
    ASSERT_NE(open, std::string::npos) << line;
    int x = -1, y = -1;
    ASSERT_EQ(std::sscanf(line.c_str() + open, "[%d/2 %d/3]", &x, &y), 2) << line;
    EXPECT_LE(x, 2) << line;
    EXPECT_LE(y, 3) << line;
    max_x = std::max(max_x, x);
    max_y = std::max(max_y, y);
  }
  EXPECT_GE(max_x, 1);
  EXPECT_GE(max_y, 1);
}

}  // namespace
}  // namespace evalrun
