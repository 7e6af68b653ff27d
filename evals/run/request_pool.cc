// The request pool (evals/run/request_pool.h): its construction and
// accessors, and Run, which starts one pass (request_pool_internal.h): the
// workers, the writer and the watch monitor, joined before it returns.
#include "evals/run/request_pool.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "evals/base/thread_name.h"
#include "evals/run/request_pool_internal.h"

namespace evalrun {

RequestPool::RequestPool(int slots, ClientFactory make_client, PoolOptions options)
    : RequestPool(std::vector<PoolEndpoint>{{"", std::max(1, slots), std::move(make_client),
                                             options.kv_capacity_tokens, options.watch}},
                  std::move(options)) {}

RequestPool::RequestPool(std::vector<PoolEndpoint> endpoints, PoolOptions options)
    : endpoints_(std::move(endpoints)), options_(std::move(options)) {
  for (auto& e : endpoints_) {
    e.slots = std::max(1, e.slots);
    slots_ += e.slots;
    endpoint_stats_.push_back(std::make_unique<EndpointStats>());
  }
}

Status RequestPool::stop_status() const {
  std::lock_guard<std::mutex> l(mu_);
  return stop_;
}

std::vector<Outage> RequestPool::outages() const {
  std::lock_guard<std::mutex> l(mu_);
  return outages_;
}

std::vector<EndpointDrop> RequestPool::drops() const {
  std::lock_guard<std::mutex> l(mu_);
  return drops_;
}

std::vector<CallResult> RequestPool::Run(
    const std::vector<Prompt>& prompts, const std::vector<size_t>& order,
    const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
    const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end) {
  PromptSource source = [&prompts](size_t i, Prompt* out) {
    *out = prompts[i];
    return Status::Ok();
  };
  return Run(prompts.size(), source, order, on_done, cancel, should_pause, on_batch_end);
}

std::vector<CallResult> RequestPool::Run(
    size_t count, const PromptSource& prompts, const std::vector<size_t>& order,
    const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
    const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end) {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = Status::Ok();
    outages_.clear();
    drops_.clear();
  }
  mean_in_flight_ = 0;
  capacity_final_.clear();
  for (const auto& e : endpoints_) capacity_final_.push_back(e.kv_capacity_tokens);
  // Workers per endpoint: its slots, never more than the work.
  std::vector<int> workers;
  int total_workers = 0;
  for (const auto& e : endpoints_) {
    workers.push_back(static_cast<int>(std::min<size_t>(e.slots, order.size())));
    total_workers += workers.back();
  }
  if (total_workers == 0) return std::vector<CallResult>(count);
  Pass pass(this, count, prompts, order, on_done, cancel, should_pause, on_batch_end, workers,
            total_workers);
  return pass.Run();
}

std::vector<CallResult> RequestPool::Pass::Run() {
  std::thread writer([this] { WriteAnswers(); });
  std::thread monitor = StartMonitor();
  std::vector<std::thread> threads;
  for (size_t e = 0; e < clients_.size(); ++e)
    for (size_t w = 0; w < clients_[e].size(); ++w)
      threads.emplace_back([this, e, w] {
        Work(static_cast<int>(e), static_cast<int>(w), clients_[e][w].get());
      });
  for (auto& t : threads) t.join();
  sched_.Stop();
  if (monitor.joinable()) monitor.join();
  if (cancel_) cancel_->Unlink(&wait_cancel_);
  answers_.Close();
  writer.join();
  pool_.mean_in_flight_ = sched_.MeanInFlight();
  for (size_t e = 0; e < pool_.endpoints_.size(); ++e)
    pool_.capacity_final_[e] = sched_.capacity(static_cast<int>(e));
  return std::move(results_);
}

// Each worker's client, made on the caller's thread before any request.
std::vector<std::vector<std::unique_ptr<Client>>> RequestPool::Pass::MakeClients(
    RequestPool& pool, const std::vector<int>& workers) {
  std::vector<std::vector<std::unique_ptr<Client>>> clients(workers.size());
  for (size_t e = 0; e < workers.size(); ++e)
    for (int w = 0; w < workers[e]; ++w) clients[e].push_back(pool.endpoints_[e].make_client());
  return clients;
}

// With a watch on any endpoint: a thread that ends the endpoints' waits for
// their servers once the work is done or the run stops. Cancelling the run
// ends them at once (the run's token is linked to theirs until Run ends).
std::thread RequestPool::Pass::StartMonitor() {
  bool any_watch = false;
  for (const auto& e : pool_.endpoints_) any_watch |= e.watch != nullptr;
  if (!any_watch) return std::thread();
  if (cancel_) cancel_->Link(&wait_cancel_);
  return std::thread([this] {
    NameThisThread("evalrun-watch");
    sched_.WaitIdle(cancel_);
    wait_cancel_.Cancel();
  });
}

}  // namespace evalrun
