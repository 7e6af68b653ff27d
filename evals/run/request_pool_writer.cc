// The request pool's writer thread (evals/run/request_pool.h): on_done for
// each answer in arrival order, on_batch_end once per batch with a group
// commit lingering for answers that finish together, and the malloc arenas
// trimmed now and then.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "evals/base/thread_name.h"
#include "evals/run/request_pool_internal.h"

namespace evalrun {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Free bytes the malloc arenas may keep before the writer trims them.
constexpr size_t kTrimAboveBytes = size_t{64} << 20;

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

namespace pool_internal {

// Group commit: answers that arrive within the linger of one another share
// one on_batch_end (the caller's fdatasync). A sync costs the writer most of
// its CPU (0.15-0.25 ms each on a virtual disk, against ~0.05 ms for a wait
// that catches nothing), and answers come close together: slots of one
// server given like prompts finish in one decode batch, and their replies
// reach us a few ms apart. How long to wait is bounded by what a machine
// crash in it would cost: a tenth of the answers' own time (a moving
// average), at least 4 ms (a decode batch's replies) and at most 50 ms. On
// llama-server with stories260K at max_tokens 8 (~0.4 s an answer) that is
// ~40 ms: 600 answers took 244-292 syncs, against 406-538 with a fixed 4 ms.
// Lingering happens only while other requests are in flight, and only while
// it pays: when fewer than 1 in 10 recent lingers caught an answer, only
// every 16th batch lingers (to notice when it would pay again). Every line
// is written (write(2)) before the linger: a killed evalrun loses nothing;
// only a machine crash within the linger could.
class GroupCommit {
 public:
  static constexpr auto kMinLinger = std::chrono::microseconds(4000);
  static constexpr auto kMaxLinger = std::chrono::microseconds(50000);
  static constexpr double kShareOfAnswer = 0.1;

  bool Wanted(int in_flight) {
    if (in_flight <= 0) return false;
    return catch_rate_ >= 0.1 || ++skipped_ % 16 == 0;
  }
  void Caught(bool any) { catch_rate_ = 0.9 * catch_rate_ + (any ? 0.1 : 0.0); }
  // An answer that took `latency_ms` (0: none measured, not counted).
  void Answered(double latency_ms) {
    if (latency_ms <= 0) return;
    answer_ms_ = answer_ms_ < 0 ? latency_ms : 0.9 * answer_ms_ + 0.1 * latency_ms;
  }
  std::chrono::microseconds Linger() const {
    const auto share = std::chrono::microseconds(static_cast<int64_t>(kShareOfAnswer * answer_ms_ * 1000));
    return std::clamp(share, kMinLinger, kMaxLinger);
  }

 private:
  double catch_rate_ = 1.0;  // moving average over ~10 lingers
  int skipped_ = 0;
  double answer_ms_ = -1;    // moving average of the answers' latency
};

}  // namespace pool_internal

// The writer: on_done for every answer, one at a time, in arrival order,
// then on_batch_end once for all that were waiting together (the caller's
// group commit).
void RequestPool::Pass::WriteAnswers() {
  NameThisThread("evalrun-writer");
  std::vector<std::pair<size_t, CallResult>> batch;
  auto last_trim = SteadyClock::now();
  pool_internal::GroupCommit group;
  while (answers_.PopAll(&batch)) {
    int answers = Hand(&batch, &group);
    if (group.Wanted(sched_.InFlight())) {
      const auto until = SteadyClock::now() + group.Linger();
      bool caught = false;
      while (answers_.PopUntil(&batch, until)) {
        answers += Hand(&batch, &group);
        caught = true;
      }
      group.Caught(caught);
    }
    if (on_batch_end_) on_batch_end_();
    pool_.stats_.done += answers;
    // Every request builds its body afresh (up to megabytes at 128K) on
    // its worker's malloc arena; what glibc keeps of those arenas grows
    // with the run (measured: 526 MB of RSS over 5,000 long-context prompts at
    // 128K, 30 MB of it live). Every 10 s, when the arenas keep more than
    // kTrimAboveBytes free, hand the free pages back: trimming every second
    // regardless cost a madvise per free range and a page fault per page
    // taken again (measured: 8,600 madvise calls for 600 short prompts),
    // and asking mallinfo2 every second (it walks every arena's bins) cost
    // the writer a tenth of its CPU on short answers.
    if (SecondsBetween(last_trim, SteadyClock::now()) >= 10.0) {
      if (mallinfo2().fordblks > kTrimAboveBytes) malloc_trim(0);
      last_trim = SteadyClock::now();
    }
  }
}

// on_done for each answer of *batch, which is emptied; how many there were.
// Each answer's latency goes to `group`.
int RequestPool::Pass::Hand(std::vector<std::pair<size_t, CallResult>>* batch,
                             pool_internal::GroupCommit* group) {
  for (auto& [i, r] : *batch) {
    if (r.status == CallStatus::kOk) group->Answered(r.latency_ms);
    results_[i] = std::move(r);
    if (on_done_) on_done_(i, results_[i]);
  }
  const int n = static_cast<int>(batch->size());
  batch->clear();
  return n;
}

}  // namespace evalrun
