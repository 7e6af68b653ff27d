#include "evals/request_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "evals/thread_name.h"

namespace evalrun {

namespace {

// Answers that arrived and wait for on_done, in arrival order. Bounded, so
// that a writer slower than the server (a very slow disk) holds the workers
// back instead of growing without limit.
class AnswerQueue {
 public:
  explicit AnswerQueue(size_t capacity) : capacity_(capacity) {}

  void Push(size_t index, CallResult result) {
    std::unique_lock<std::mutex> l(mu_);
    not_full_.wait(l, [&] { return items_.size() < capacity_; });
    items_.emplace_back(index, std::move(result));
    not_empty_.notify_one();
  }

  // No more pushes will come; PopAll returns false once the queue is empty.
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    not_empty_.notify_one();
  }

  // Takes every answer waiting (at least one); false once the queue is
  // closed and empty.
  bool PopAll(std::vector<std::pair<size_t, CallResult>>* out) {
    out->clear();
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    for (auto& item : items_) out->push_back(std::move(item));
    items_.clear();
    not_full_.notify_all();
    return true;
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::pair<size_t, CallResult>> items_;
  bool closed_ = false;
};

}  // namespace

RequestPool::RequestPool(int slots, ClientFactory make_client)
    : slots_(std::max(1, slots)), make_client_(std::move(make_client)) {}

std::vector<CallResult> RequestPool::Run(
    const std::vector<Prompt>& prompts, const std::vector<size_t>& order,
    const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
    const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end) {
  std::vector<CallResult> results(prompts.size());
  const int workers = static_cast<int>(std::min<size_t>(slots_, order.size()));
  if (workers == 0) return results;
  std::vector<std::unique_ptr<Client>> clients;
  for (int w = 0; w < workers; ++w) clients.push_back(make_client_());

  AnswerQueue answers(2 * static_cast<size_t>(workers));
  // The writer: on_done for every answer, one at a time, in arrival order,
  // then on_batch_end once for all that were waiting together (the caller's
  // group commit). Only it touches `results` until it is joined.
  std::thread writer([&] {
    NameThisThread("evalrun-writer");
    std::vector<std::pair<size_t, CallResult>> batch;
    while (answers.PopAll(&batch)) {
      for (auto& [i, r] : batch) {
        results[i] = std::move(r);
        if (on_done) on_done(i, results[i]);
      }
      if (on_batch_end) on_batch_end();
      stats_.done += static_cast<int>(batch.size());
    }
  });

  std::atomic<size_t> next{0};
  auto work = [&](int slot, Client* client) {
    NameThisThread("evalrun-slot" + std::to_string(slot));
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
      answers.Push(i, std::move(r));
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work, w, clients[w].get());
  for (auto& t : threads) t.join();
  answers.Close();
  writer.join();
  return results;
}

}  // namespace evalrun
