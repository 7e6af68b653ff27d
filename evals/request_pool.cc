#include "evals/request_pool.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>

namespace evalrun {

RequestPool::RequestPool(int slots, ClientFactory make_client)
    : slots_(std::max(1, slots)), make_client_(std::move(make_client)) {}

std::vector<CallResult> RequestPool::Run(
    const std::vector<Prompt>& prompts, const std::vector<size_t>& order,
    const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
    const std::function<bool()>& should_pause) {
  std::vector<CallResult> results(prompts.size());
  const int workers = static_cast<int>(std::min<size_t>(slots_, order.size()));
  if (workers == 0) return results;
  std::vector<std::unique_ptr<Client>> clients;
  for (int w = 0; w < workers; ++w) clients.push_back(make_client_());

  std::atomic<size_t> next{0};
  std::mutex done_mu;
  auto work = [&](Client* client) {
    for (;;) {
      if (cancel && cancel->cancelled()) return;
      if (should_pause) {
        while (should_pause()) {
          if (cancel ? !cancel->SleepFor(0.2) : (std::this_thread::sleep_for(std::chrono::milliseconds(200)), false))
            return;
        }
      }
      size_t k = next.fetch_add(1);
      if (k >= order.size()) return;
      size_t i = order[k];
      int now = ++stats_.in_flight;
      int seen = stats_.max_in_flight.load();
      while (now > seen && !stats_.max_in_flight.compare_exchange_weak(seen, now)) {
      }
      CallResult r = client->Complete(prompts[i]);
      --stats_.in_flight;
      {
        std::lock_guard<std::mutex> l(done_mu);
        results[i] = r;
        ++stats_.done;
        if (on_done) on_done(i, results[i]);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work, clients[w].get());
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace evalrun
