#include "evals/run/request_pool.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "evals/base/thread_name.h"
#include "evals/run/pool_scheduler.h"
#include "evals/run/utc_now.h"

namespace evalrun {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Free bytes the malloc arenas may keep before the writer trims them.
constexpr size_t kTrimAboveBytes = size_t{64} << 20;

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

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

// Answers that arrived and wait for on_done, in arrival order. Bounded, so
// that a writer slower than the server (a very slow disk) holds the workers
// back instead of growing without limit.
class AnswerQueue {
 public:
  explicit AnswerQueue(size_t capacity) : capacity_(capacity) {}

  // The writer waits only on an empty queue, so only the first answer into
  // one wakes it; the wake-up comes after the lock is let go (else the
  // writer wakes only to wait for it: 4 slots answering together made that
  // a futex wait and wake each).
  void Push(size_t index, CallResult result) {
    bool was_empty = false;
    {
      std::unique_lock<std::mutex> l(mu_);
      not_full_.wait(l, [&] { return items_.size() < capacity_; });
      was_empty = items_.empty();
      items_.emplace_back(index, std::move(result));
    }
    if (was_empty) not_empty_.notify_one();
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
    return TakeLocked(out);
  }

  // Appends every answer waiting, waiting until `deadline` for one when
  // none is; false when none came (or the queue is closed and empty).
  bool PopUntil(std::vector<std::pair<size_t, CallResult>>* out, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait_until(l, deadline, [&] { return !items_.empty() || closed_; });
    return TakeLocked(out);
  }

 private:
  // Moves every waiting answer to *out (appended); false when there was none.
  bool TakeLocked(std::vector<std::pair<size_t, CallResult>>* out) {
    if (items_.empty()) return false;
    for (auto& item : items_) out->push_back(std::move(item));
    items_.clear();
    not_full_.notify_all();
    return true;
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::pair<size_t, CallResult>> items_;
  bool closed_ = false;
};

}  // namespace

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

// One Run: the state its threads share (the scheduler, the writer's queue,
// the results) and each thread's steps.
class RequestPool::Pass {
 public:
  Pass(RequestPool* pool, size_t count, const PromptSource& prompts, const std::vector<size_t>& order,
       const std::function<void(size_t, const CallResult&)>& on_done, CancelToken* cancel,
       const std::function<bool()>& should_pause, const std::function<void()>& on_batch_end,
       const std::vector<int>& workers, int total_workers)
      : pool_(*pool),
        prompts_(prompts),
        on_done_(on_done),
        cancel_(cancel),
        should_pause_(should_pause),
        on_batch_end_(on_batch_end),
        results_(count),
        asked_before_(count),
        forgiven_(count, 0),
        provisional_(count, 0),
        clients_(MakeClients(*pool, workers)),
        answers_(2 * static_cast<size_t>(total_workers)),
        sched_(order, pool->options_.reserve_tokens, pool->capacity_final_, pool->options_.max_returns),
        several_(pool->endpoints_.size() > 1),
        went_away_("the server went away during this request " +
                   std::to_string(pool->options_.max_returns) + " times") {}

  // Runs the workers (as many on each endpoint as it was made with), the
  // writer and the watch monitor; returns the results once all have ended.
  std::vector<CallResult> Run();

 private:
  // What a worker does once a request's result has been dealt with.
  enum class Next { kNextRequest, kWorkerEnds, kDeliver };

  static std::vector<std::vector<std::unique_ptr<Client>>> MakeClients(RequestPool& pool,
                                                                       const std::vector<int>& workers);
  void WriteAnswers();
  int Hand(std::vector<std::pair<size_t, CallResult>>* batch, GroupCommit* group);
  std::thread StartMonitor();
  void Stop(const Status& why);
  void Drop(int e, const Status& why);
  void Push(int e, size_t i, CallResult r);
  CallResult FailReturned(CallResult r, const std::string& why) const;
  bool LeadOutage(int e);
  void Work(int e, int slot, Client* client);
  bool WaitWhilePaused();
  bool Acquire(int e, size_t* i, int* epoch);
  void CountInFlight(EndpointStats& es);
  CallResult Ask(int e, size_t i, Client* client);
  void Charge(size_t i);
  Next Settle(int e, size_t i, int epoch, CallResult* r);
  Next AfterCapacity(int e, size_t i, int epoch, CallResult* r);
  Next AfterUnreachable(int e, size_t i, CallResult* r);
  Next AfterNewConnection(int e, size_t i, CallResult* r);

  RequestPool& pool_;
  const PromptSource& prompts_;
  const std::function<void(size_t, const CallResult&)>& on_done_;
  CancelToken* const cancel_;
  const std::function<bool()>& should_pause_;
  const std::function<void()>& on_batch_end_;
  // Only the writer touches it until it is joined.
  std::vector<CallResult> results_;
  // Per prompt, what the asks before this one cost (attempts and their
  // causes): touched only by the worker that holds the prompt (handed on
  // through the scheduler's lock).
  std::vector<CallResult> asked_before_;
  // Per prompt, attempts not counted against max_attempts: those that got
  // no reply (a cut connection, a timeout) in an ask that ended kUnreachable
  // are forgiven while the pool finds out whether the server was down
  // (provisional_), and charged again when it was not (Charge). A reply (a
  // 503 loading or busy) always counts. Guarded by budget_mu_ (the next
  // ask may run on another endpoint's worker).
  std::vector<int> forgiven_;
  std::vector<int> provisional_;
  std::mutex budget_mu_;
  // Per endpoint, one client per worker, made (on the caller's thread)
  // before the scheduler starts its clock.
  std::vector<std::vector<std::unique_ptr<Client>>> clients_;
  AnswerQueue answers_;
  pool_internal::Scheduler sched_;
  // Ends an endpoint's wait for its server early: the run was cancelled,
  // stopped, or the other endpoints did the work meanwhile.
  CancelToken wait_cancel_;
  const bool several_;
  const std::string went_away_;
};

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

// The writer: on_done for every answer, one at a time, in arrival order,
// then on_batch_end once for all that were waiting together (the caller's
// group commit).
void RequestPool::Pass::WriteAnswers() {
  NameThisThread("evalrun-writer");
  std::vector<std::pair<size_t, CallResult>> batch;
  auto last_trim = SteadyClock::now();
  GroupCommit group;
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
    // with the run (measured: 526 MB of RSS over 5,000 RULER prompts at
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
int RequestPool::Pass::Hand(std::vector<std::pair<size_t, CallResult>>* batch, GroupCommit* group) {
  for (auto& [i, r] : *batch) {
    if (r.status == CallStatus::kOk) group->Answered(r.latency_ms);
    results_[i] = std::move(r);
    if (on_done_) on_done_(i, results_[i]);
  }
  const int n = static_cast<int>(batch->size());
  batch->clear();
  return n;
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

void RequestPool::Pass::Stop(const Status& why) {
  {
    std::lock_guard<std::mutex> l(pool_.mu_);
    if (pool_.stop_.ok()) pool_.stop_ = why;
  }
  sched_.Stop();
}

// `e` is dropped for `why`; the run stops when no endpoint is left.
void RequestPool::Pass::Drop(int e, const Status& why) {
  bool first = false;
  const int left = sched_.Drop(e, &first);
  if (!first) return;  // another of its workers found out first
  if (!several_) {
    Stop(why);
    return;
  }
  const std::string& name = pool_.endpoints_[e].name;
  {
    std::lock_guard<std::mutex> l(pool_.mu_);
    pool_.drops_.push_back({e, name, UtcNow(), why.message()});
  }
  if (left == 0) {
    Stop(why.Prefixed("no endpoint is left; the last one, " + name));
    return;
  }
  if (pool_.options_.note)
    pool_.options_.note("dropping endpoint " + name + " (" + why.message() + "); going on with " +
                        std::to_string(left) + " endpoint" + (left == 1 ? "" : "s"));
}

// A result for on_done, counted for its endpoint.
void RequestPool::Pass::Push(int e, size_t i, CallResult r) {
  r.endpoint = e;
  if (r.status == CallStatus::kFailed) ++pool_.endpoint_stats_[e]->failed;
  else ++pool_.endpoint_stats_[e]->answered;
  answers_.Push(i, std::move(r));
}

// A request that came back more than max_returns times: failed, asked
// once more than it was sent back.
CallResult RequestPool::Pass::FailReturned(CallResult r, const std::string& why) const {
  r.status = CallStatus::kFailed;
  r.error = why + (r.error.empty() ? "" : " (last: " + r.error + ")");
  return r;
}

// One worker of `e` waits for e's server; true when it had been down (the
// requests that failed there are asked again), false when it answered at
// once (the failures were the requests' own).
bool RequestPool::Pass::LeadOutage(int e) {
  Outage o;
  o.endpoint = e;
  o.endpoint_name = pool_.endpoints_[e].name;
  o.started_utc = UtcNow();
  const Stopwatch waited(pool_.options_.clock ? pool_.options_.clock : RealClock::Default());
  bool was_down = false;
  Status st = pool_.endpoints_[e].watch->AwaitRecovery(&wait_cancel_, &was_down);
  o.seconds = waited.Seconds();
  o.recovered = st.ok();
  if (st.ok() && !was_down) {
    sched_.EndOutage(e, false);
    return false;
  }
  if (!st.ok()) o.error = st.message();
  const bool cancelled = st.code() == Status::Code::kCancelled;
  if (cancelled && !(cancel_ && cancel_->cancelled()) && sched_.Idle())
    o.error = several_ ? "the other endpoints finished the work meanwhile" : "nothing was left to ask";
  // Dropped before e's other workers are let go, so that none of them
  // takes another request there.
  if (!st.ok() && !cancelled) Drop(e, st);
  o.requeued = sched_.EndOutage(e, true);
  {
    std::lock_guard<std::mutex> l(pool_.mu_);
    pool_.outages_.push_back(o);
  }
  return true;
}

// One worker: takes requests for endpoint `e` until the work runs out, the
// run stops or is cancelled, or `e` is dropped.
void RequestPool::Pass::Work(int e, int slot, Client* client) {
  NameThisThread(several_ ? "evalrun-e" + std::to_string(e) + "s" + std::to_string(slot)
                          : "evalrun-slot" + std::to_string(slot));
  for (;;) {
    if (cancel_ && cancel_->cancelled()) return;
    if (!WaitWhilePaused()) return;
    size_t i = 0;
    int epoch = 0;
    if (!Acquire(e, &i, &epoch)) return;
    CallResult r = Ask(e, i, client);
    if (Settle(e, i, epoch, &r) == Next::kWorkerEnds) return;
  }
}

// While should_pause says so; false when cancelled meanwhile.
bool RequestPool::Pass::WaitWhilePaused() {
  if (!should_pause_) return true;
  while (should_pause_()) {
    if (cancel_ ? !cancel_->SleepFor(0.2) : (std::this_thread::sleep_for(std::chrono::milliseconds(200)), false))
      return false;
  }
  return true;
}

// The next request for `e` (counting an admission wait); false when none is left.
bool RequestPool::Pass::Acquire(int e, size_t* i, int* epoch) {
  int64_t waited_us = 0;
  bool waited = false;
  const bool got = sched_.Acquire(e, cancel_, i, epoch, &waited_us, &waited);
  if (waited) {
    ++pool_.stats_.admission_waits;
    pool_.stats_.admission_wait_us += waited_us;
  }
  if (got) CountInFlight(*pool_.endpoint_stats_[e]);
  return got;
}

// One more request in flight, in the pool's and its endpoint's counts and maxima.
void RequestPool::Pass::CountInFlight(EndpointStats& es) {
  PoolStats& stats = pool_.stats_;
  for (auto* s : {&stats.in_flight, &es.in_flight}) {
    const int now = ++*s;
    std::atomic<int>& max = s == &stats.in_flight ? stats.max_in_flight : es.max_in_flight;
    int seen = max.load();
    while (now > seen && !max.compare_exchange_weak(seen, now)) {
    }
  }
}

// Attempts of `r` that count against PoolOptions::max_attempts: all but
// those that could not connect.
static int CountedAttempts(const CallResult& r) {
  int refused = 0;
  for (const AttemptRecord& a : r.attempt_log) refused += a.cause == "connect_refused";
  return std::max(0, r.attempts - refused);
}

// Attempts of `r` that got no reply at all (cut, timed out).
static int UnansweredAttempts(const CallResult& r) {
  int n = 0;
  for (const AttemptRecord& a : r.attempt_log) n += a.cause == "connection_cut" || a.cause == "timeout";
  return n;
}

// Prompt i asked on `client` (or failed when it could not be made, or when
// the earlier asks spent its attempts), its attempts joined to theirs.
CallResult RequestPool::Pass::Ask(int e, size_t i, Client* client) {
  Prompt prompt;
  CallResult r;
  const int max = pool_.options_.max_attempts;
  CallResult before;
  int used = 0;
  {
    std::lock_guard<std::mutex> l(budget_mu_);
    before = asked_before_[i];
    used = CountedAttempts(before) - forgiven_[i];
  }
  Status ps = prompts_(i, &prompt);
  if (!ps.ok()) {
    r.status = CallStatus::kFailed;
    r.error = ps.message();
  } else if (max > 0 && used >= max) {
    r.status = CallStatus::kFailed;
    r.http_status = before.http_status;
    r.error = "no attempt left (" + std::to_string(used) + " made, server.retries + 1 in all); last: " + before.error;
  } else {
    r = max > 0 ? client->CompleteWithin(prompt, max - used) : client->Complete(prompt);
  }
  const int unanswered = r.status == CallStatus::kUnreachable ? UnansweredAttempts(r) : 0;
  r.attempts += before.attempts;
  r.attempt_log.insert(r.attempt_log.begin(), before.attempt_log.begin(), before.attempt_log.end());
  {
    std::lock_guard<std::mutex> l(budget_mu_);
    asked_before_[i] = r;
    asked_before_[i].completion = Completion();
    forgiven_[i] += unanswered;
    provisional_[i] = unanswered;
  }
  --pool_.stats_.in_flight;
  --pool_.endpoint_stats_[e]->in_flight;
  return r;
}

// The server answered /health at once: the attempts of i's last ask that
// got no reply were its own failures after all, and count.
void RequestPool::Pass::Charge(size_t i) {
  std::lock_guard<std::mutex> l(budget_mu_);
  forgiven_[i] -= provisional_[i];
  provisional_[i] = 0;
}

// Sends the result of request i on `e` back to the queue, to the writer, or
// (the endpoint was dropped) nowhere.
RequestPool::Pass::Next RequestPool::Pass::Settle(int e, size_t i, int epoch, CallResult* r) {
  const PoolEndpoint& ep = pool_.endpoints_[e];
  if (r->status == CallStatus::kCapacity) return AfterCapacity(e, i, epoch, r);
  if (r->status == CallStatus::kUnreachable && ep.watch) {
    const Next next = AfterUnreachable(e, i, r);
    if (next != Next::kDeliver) return next;
  }
  if (r->status == CallStatus::kUnreachable) r->status = CallStatus::kFailed;
  if (r->status == CallStatus::kOk && r->new_connection && ep.watch) {
    const Next next = AfterNewConnection(e, i, r);
    if (next != Next::kDeliver) return next;
  }
  sched_.Release(e, i, r->status == CallStatus::kOk);  // answers let a tightened admission recover
  Push(e, i, std::move(*r));
  return Next::kNextRequest;
}

// No room on the server: back to the queue, or failed past max_returns.
RequestPool::Pass::Next RequestPool::Pass::AfterCapacity(int e, size_t i, int epoch, CallResult* r) {
  ++pool_.stats_.capacity_returns;
  bool tightened = false;
  const bool back = sched_.ReturnForCapacity(e, i, epoch, &tightened);
  if (tightened) ++pool_.stats_.tightenings;
  if (back) return Next::kNextRequest;
  // Not attempts at an answer (the client does not count them), but asks.
  r->attempts = pool_.options_.max_returns + 1;
  Push(e, i, FailReturned(std::move(*r), "the server had no room for this request " +
                                             std::to_string(pool_.options_.max_returns) + " times"));
  return Next::kNextRequest;
}

// Is the server gone? The request goes back to the queue at once (another
// endpoint may take it); one worker of this endpoint finds out (and waits
// for it); its other workers wait for that. kDeliver: it answered at once
// and the failure (*r, now kFailed) was the request's own.
RequestPool::Pass::Next RequestPool::Pass::AfterUnreachable(int e, size_t i, CallResult* r) {
  const bool returned = sched_.ReturnForOutage(e, i);
  if (sched_.dropped(e)) {
    if (!returned) Push(e, i, FailReturned(std::move(*r), went_away_));
    return Next::kWorkerEnds;
  }
  const bool down = sched_.BeginOutage(e) ? LeadOutage(e) : sched_.WaitOutage(e, cancel_);
  if (down) {
    if (!returned) Push(e, i, FailReturned(std::move(*r), went_away_));
    return Next::kNextRequest;
  }
  // It answered at once: the failure was this request's own, unless
  // another endpoint has taken it meanwhile.
  Charge(i);
  if (returned && !sched_.Reclaim(e, i)) return Next::kNextRequest;
  r->status = CallStatus::kFailed;
  if (!returned) {
    Push(e, i, std::move(*r));
    return Next::kNextRequest;
  }
  return Next::kDeliver;
}

// The answer came over a new connection: the server may have been
// restarted with another model. kDeliver: it was not, keep the answer.
RequestPool::Pass::Next RequestPool::Pass::AfterNewConnection(int e, size_t i, CallResult* r) {
  Status st = pool_.endpoints_[e].watch->CheckSame();
  if (st.ok()) return Next::kDeliver;
  if (st.code() == Status::Code::kChanged) {
    // Not this answer; the question goes back for another endpoint.
    sched_.ReturnForOutage(e, i);
    Drop(e, st);
    return Next::kWorkerEnds;
  }
  sched_.Release(e, i);
  // /props did not answer: treat as the server going away.
  r->status = CallStatus::kUnreachable;
  r->error = st.message();
  Push(e, i, FailReturned(std::move(*r), "could not check the server after a new connection"));
  return Next::kNextRequest;
}

}  // namespace evalrun
