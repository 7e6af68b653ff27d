#include "evals/run/scoring_stage.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include "evals/base/thread_name.h"

namespace evalrun {
namespace {

// Sets the nice value of each worker thread as it enters the arena (Linux
// nice is per thread), and names it for `top -H`.
class NiceObserver : public tbb::task_scheduler_observer {
 public:
  NiceObserver(tbb::task_arena& arena, int nice) : tbb::task_scheduler_observer(arena), nice_(nice) { observe(true); }
  ~NiceObserver() override { observe(false); }
  void on_scheduler_entry(bool worker) override {
    if (!worker) return;
    NameThisThread("evalrun-score");
    if (nice_ > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice_);
  }

 private:
  int nice_;
};

}  // namespace

// One scoring thread (the default) is a feeder thread of our own that
// enters an arena with one slot reserved for it and no worker: it runs each
// batch of answers as a task_group there and then sleeps on its queue. An
// arena worker would instead spin (sched_yield) for a while after every
// task before it sleeps; with answers arriving one at a time that spin was
// measured at a quarter of the runner's CPU. Several scoring threads are
// arena workers fed by enqueue (a slow answer then holds no other back).
//
// After a batch the feeder gathers: answers that come within kGather wait
// for its end and are scored together (Submit does not wake it; Wait and
// WaitFor do, at once). Nothing waits on a score but those two: the answer
// is already durable in the journal. A wake-up costs ~0.05 ms on a virtual
// machine; one per answer was a tenth of the runner's CPU on short answers.
// An answer that comes while the feeder sleeps with nothing to do wakes it
// at once (the first score of a run shows without delay).
struct ScoringStage::Arena {
  static constexpr auto kGather = std::chrono::milliseconds(500);

  explicit Arena(const ScoringOptions& o)
      // The process-wide worker pool must hold the arena's threads (oneTBB
      // sizes it to the cores minus one by default).
      : workers(tbb::global_control::max_allowed_parallelism,
                std::max<size_t>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism),
                                 static_cast<size_t>(o.concurrency) + 1)),
        arena(o.concurrency, /*reserved_for_masters=*/o.concurrency == 1 ? 1 : 0),
        observer(arena, o.nice),
        nice(o.nice) {}
  tbb::global_control workers;
  tbb::task_arena arena;
  NiceObserver observer;
  int nice;
  // The feeder (concurrency 1): its queue and thread.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool stop = false;
  bool gathering = false;  // the feeder waits out kGather: Submit leaves it be
  bool flush = false;      // Wait asks for what is queued now
  std::atomic<int> batches{0};
  std::thread feeder;

  // Queues `job`; wakes the feeder when it sleeps with nothing to do.
  void Push(std::function<void()> job) {
    bool wake;
    {
      std::lock_guard<std::mutex> l(mu);
      wake = queue.empty() && !gathering;
      queue.emplace_back(std::move(job));
    }
    if (wake) cv.notify_one();
  }

  // Ends a gathering now (Wait wants every answer scored); nothing without
  // a feeder.
  void Flush() {
    if (!feeder.joinable()) return;
    {
      std::lock_guard<std::mutex> l(mu);
      flush = true;
    }
    cv.notify_one();
  }

  void Feed() {
    NameThisThread("evalrun-score");
    if (nice > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
    std::unique_lock<std::mutex> l(mu);
    for (;;) {
      if (queue.empty()) {
        cv.wait(l, [this] { return stop || !queue.empty(); });
        if (queue.empty()) return;  // stopped with nothing left
      }
      std::deque<std::function<void()>> batch;
      batch.swap(queue);
      ++batches;
      l.unlock();
      arena.execute([&batch] {
        tbb::task_group group;
        for (auto& job : batch) group.run(std::move(job));
        group.wait();
      });
      l.lock();
      gathering = true;
      cv.wait_for(l, kGather, [this] { return stop || flush; });
      gathering = flush = false;
    }
  }
};

ScoringOptions ScoringOptionsFor(int concurrency, const int* nice, bool local) {
  ScoringOptions o;
  o.concurrency = std::max(1, concurrency);
  o.nice = nice ? *nice : (local ? 10 : 0);
  return o;
}

struct ScoringStage::Shared {
  ScoreFn score;
  SinkFn sink;
  const CancelToken* cancel = nullptr;
  std::atomic<bool> abandoned{false};
  std::mutex sink_mu, done_mu;
  std::condition_variable done_cv;
  std::atomic<int> submitted{0}, sunk{0}, skipped{0};
  std::atomic<int> ended{0};  // sunk (the sink returned) or skipped: what Wait waits for

  int backlog() const { return submitted.load() - sunk.load() - skipped.load(); }
  bool all_ended() const { return ended.load() == submitted.load(); }
  void ScoreOne(size_t index, UnscoredAnswer answer) {
    if ((cancel && cancel->cancelled()) || abandoned.load()) {
      ++skipped;
    } else {
      SampleRecord rec = score(index, std::move(answer));
      std::lock_guard<std::mutex> l(sink_mu);
      ++sunk;  // before the sink, so that it sees its own answer out of the backlog
      sink(index, std::move(rec));
    }
    std::lock_guard<std::mutex> l(done_mu);
    ++ended;  // after the sink returned: Wait never returns while a sink runs
    // Waiters wait for all to end: wake them only then (a wake per answer
    // cost two futex calls each).
    if (all_ended()) done_cv.notify_all();
  }
};

ScoringStage::ScoringStage(ScoringOptions options, ScoreFn score, SinkFn sink, const CancelToken* cancel)
    : shared_(std::make_shared<Shared>()) {
  shared_->score = std::move(score);
  shared_->sink = std::move(sink);
  shared_->cancel = cancel;
  options.concurrency = std::max(1, options.concurrency);
  arena_ = std::make_unique<Arena>(options);
  if (options.concurrency == 1) arena_->feeder = std::thread([a = arena_.get()] { a->Feed(); });
}

ScoringStage::~ScoringStage() {
  Wait();
  if (arena_->feeder.joinable()) {
    {
      std::lock_guard<std::mutex> l(arena_->mu);
      arena_->stop = true;
    }
    arena_->cv.notify_all();
    arena_->feeder.join();
  }
}

int ScoringStage::submitted() const { return shared_->submitted.load(); }
int ScoringStage::sunk() const { return shared_->sunk.load(); }
int ScoringStage::backlog() const { return shared_->backlog(); }
int ScoringStage::feeder_batches() const { return arena_->batches.load(); }

void ScoringStage::Submit(size_t index, UnscoredAnswer answer) {
  ++shared_->submitted;
  // enqueue, not execute: the caller (the pool's writer) never enters the
  // arena, so it never waits for a free scoring thread. Each task holds the
  // shared state, so its last unlock never outlives what it unlocks.
  // (oneTBB calls the functor as const: the answer travels by pointer.)
  auto a = std::make_shared<UnscoredAnswer>(std::move(answer));
  auto job = [s = shared_, index, a] { s->ScoreOne(index, std::move(*a)); };
  if (!arena_->feeder.joinable()) {
    arena_->arena.enqueue(std::move(job));
    return;
  }
  arena_->Push(std::move(job));
}

void ScoringStage::Wait() {
  arena_->Flush();
  std::unique_lock<std::mutex> l(shared_->done_mu);
  shared_->done_cv.wait(l, [this] { return shared_->all_ended(); });
}

bool ScoringStage::WaitFor(double seconds) {
  arena_->Flush();
  std::unique_lock<std::mutex> l(shared_->done_mu);
  return shared_->done_cv.wait_for(l, std::chrono::duration<double>(seconds),
                                   [this] { return shared_->all_ended(); });
}

void ScoringStage::Abandon() { shared_->abandoned = true; }

}  // namespace evalrun
