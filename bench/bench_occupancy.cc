// Section "occupancy": the real evalrun binary (an MMLU-Pro card of
// `requests` questions, the real runner path: card, dataset, pool, client,
// scoring, samples.jsonl) against the in-process fake llama-server.
//
// Service time. Every chat request is "served" by the Responder, which
// sleeps `service_ms` and measures what it actually slept (the Responder
// runs as the request arrives, before the fake's own slot wait, which is
// then zero: FakeReply.delay_ms = 0). So the exact service each request got
// is known, and
//   occupancy = sum(service) / (slots x phase)
// where phase runs from the first service start to the last service end:
// the brief's "wall time against the ideal sum(service) / slots". What is
// lost is everything outside the service: the fake server's JSON and
// tokenizer work, HTTP, and evalrun's own turnaround between requests.
//
// The same bodies replayed by a bare closed-loop client (`slots` threads
// posting back to back, TCP_NODELAY, nothing else) give the best occupancy
// any client reaches against this server on this machine now; it runs
// before and after each evalrun run. Two verdicts: evalrun's occupancy
// itself (target >= 99 %), and evalrun's relative to the bare client's
// (>= 99 %), so that a miss caused by the machine or the fake (the bare
// client misses too) can be told from one caused by the runner.
//
// The pool must never exceed the slots: the Responder counts requests being
// served at once, and results.json's max_in_flight is read back.
//
// Times: startup = spawn -> first request (card, dataset load once,
// /health, /props); shutdown = last reply -> exit (aggregate, results.json).
// CPU per request: the child's rusage (wait4) minus its CPU at the first
// request (/proc/<pid>/stat, 10 ms ticks), over the requests.
//
// Several endpoints (server.endpoints): two fake servers of 4 slots behind
// one card, the same requests; its CPU per request beside one endpoint's of
// 4 and of 8 slots run right after, and each endpoint at its 4 slots.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "bench/tcp_nodelay_shim.h"
#include "evals/server/http.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

using evalrun::testing::FakeReply;
using evalrun::testing::FakeServer;
using evalrun::testing::FakeServerOptions;

// What the Responder served: the start and end of every service, how many
// ran at once, and the child's CPU and peak RSS when the first one began.
// Thread-safe.
class ServiceLog {
 public:
  // The process whose CPU and peak RSS are read at the first request (0: none).
  void set_child(int pid) { child_pid_ = pid; }

  // The per-thread CPU is read when the `first`-th and the `last`-th
  // requests begin (1-based). Both must come before the pool's workers run
  // out of work and exit: an exited thread's CPU is no longer listed.
  void set_thread_snapshots(int first, int last) {
    first_request_ = first;
    last_request_ = last;
  }

  double Begin() {
    std::lock_guard<std::mutex> l(mu_);
    if (starts_.empty() && child_pid_.load() > 0)
      ReadProcCpuAndHwm(child_pid_.load(), &cpu_at_first_, &hwm_at_first_kb_);
    if (static_cast<int>(starts_.size()) + 1 == first_request_ && child_pid_.load() > 0)
      threads_at_first_ = ReadThreadCpu(child_pid_.load());
    if (static_cast<int>(starts_.size()) + 1 == last_request_ && child_pid_.load() > 0)
      threads_at_last_ = ReadThreadCpu(child_pid_.load());
    const double now = NowSeconds();
    starts_.push_back(now);
    max_concurrent_ = std::max(max_concurrent_, ++concurrent_);
    return now;
  }
  void End(double start) {
    const double now = NowSeconds();
    std::lock_guard<std::mutex> l(mu_);
    --concurrent_;
    service_s_ += now - start;
    last_end_ = std::max(last_end_, now);
    ++served_;
  }

  struct Summary {
    int served = 0;
    int max_concurrent = 0;
    double first_start = 0, last_end = 0, service_s = 0;
    double cpu_at_first = 0;
    int64_t hwm_at_first_kb = 0;
    // CPU seconds by thread between the two snapshot requests, and how
    // many requests began in between.
    std::map<int, ThreadCpu> thread_cpu;
    int thread_cpu_requests = 0;
    double phase() const { return last_end - first_start; }
  };
  Summary Get() const {
    std::lock_guard<std::mutex> l(mu_);
    Summary s;
    s.served = served_;
    s.max_concurrent = max_concurrent_;
    s.first_start = starts_.empty() ? 0 : *std::min_element(starts_.begin(), starts_.end());
    s.last_end = last_end_;
    s.service_s = service_s_;
    s.cpu_at_first = cpu_at_first_;
    s.hwm_at_first_kb = hwm_at_first_kb_;
    s.thread_cpu_requests = last_request_ - first_request_;
    for (const auto& [tid, t] : threads_at_last_) {
      auto it = threads_at_first_.find(tid);
      s.thread_cpu[tid] = {t.cpu_s - (it == threads_at_first_.end() ? 0.0 : it->second.cpu_s), t.name};
    }
    return s;
  }

 private:
  mutable std::mutex mu_;
  std::atomic<int> child_pid_{0};
  std::vector<double> starts_;
  int concurrent_ = 0, max_concurrent_ = 0, served_ = 0;
  double service_s_ = 0, last_end_ = 0;
  double cpu_at_first_ = 0;
  int64_t hwm_at_first_kb_ = 0;
  int first_request_ = 0, last_request_ = 0;
  std::map<int, ThreadCpu> threads_at_first_, threads_at_last_;
};

// A short answer of the kind a small max_tokens gives, cycling the letters.
FakeReply Answer(int k) {
  static const char* kAnswers[] = {
      "The answer is (B).", "Answer: D", "**C**", "Looking at the options, (A) fits best. The answer is (A).",
      "The answer is (J)", "E"};
  FakeReply r;
  r.content = kAnswers[k % 6];
  r.delay_ms = 0;  // the Responder serves (ServiceLog)
  return r;
}

// Routes the server's requests to `log` (or answers unlogged when null),
// serving each for `service_ms`. The Responder shares the log: a request
// still in the server after the caller moved on (a killed child) is safe.
void Serve(FakeServer* server, std::shared_ptr<ServiceLog> log, int service_ms) {
  auto k = std::make_shared<std::atomic<int>>(0);
  server->SetResponder([log, service_ms, k](const nlohmann::json&) {
    const double start = log ? log->Begin() : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(service_ms));
    if (log) log->End(start);
    return Answer((*k)++);
  });
}

// What a bare closed-loop client achieved.
struct BareResult {
  ServiceLog::Summary served;
  double latency_ms = 0;  // mean time inside Post()
};

// Posts `bodies` (cycled) `rounds` x `threads` times from `threads` threads,
// each with its own keep-alive connection, back to back.
BareResult BareReplay(FakeServer* server, const std::vector<std::string>& bodies, int threads, int rounds,
                      int service_ms) {
  const int total = rounds * threads;
  std::vector<std::unique_ptr<HttpTransport>> conns;
  for (int t = 0; t < threads; ++t) conns.push_back(MakeHttpTransport(server->origin(), ""));
  // The bare client's sockets get TCP_NODELAY (tcp_nodelay_shim.h): no
  // Nagle stall. On for the whole replay: the server closes a keep-alive
  // connection after a few requests and the client connects again.
  SetClientNoDelay(true);
  // One warm-up request per connection (it connects), not logged.
  for (auto& c : conns) c->Get("/health", 10);
  auto log = std::make_shared<ServiceLog>();
  Serve(server, log, service_ms);
  std::atomic<int> next{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> busy(threads, 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load()) std::this_thread::yield();
      for (;;) {
        const int k = next.fetch_add(1);
        if (k >= total) return;
        const double t0 = NowSeconds();
        conns[t]->Post("/v1/chat/completions", bodies[k % bodies.size()], 60);
        busy[t] += NowSeconds() - t0;
      }
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  go = true;
  for (auto& th : pool) th.join();
  SetClientNoDelay(false);
  Serve(server, nullptr, service_ms);
  BareResult r;
  r.served = log->Get();
  double sum = 0;
  for (double b : busy) sum += b;
  r.latency_ms = sum / total * 1000.0;
  return r;
}

double Occupancy(const ServiceLog::Summary& s, int slots) {
  return s.phase() > 0 ? s.service_s / (slots * s.phase()) * 100.0 : 0;
}

// The mean of samples.jsonl's latency_ms (evalrun's own time inside each
// request); -1 when the file cannot be read.
double MeanSampleLatencyMs(const std::string& path) {
  std::istringstream in(testing::ReadFile(path));
  std::string line;
  double sum = 0;
  int n = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("latency_ms") || !j["latency_ms"].is_number()) continue;
    sum += j["latency_ms"].get<double>();
    ++n;
  }
  return n ? sum / n : -1;
}

std::string Card(const std::string& base_url, int slots, int questions) {
  return R"({
  "name": "bench-occupancy",
  "model": {"name": "fake"},
  "server": {"base_url": ")" + base_url + R"(", "slots": )" + std::to_string(slots) +
         R"(, "ready_timeout_s": 20},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
  "thinking": false,
  "max_failed": 0,
  "parts": {"mmlupro": {"questions": )" + std::to_string(questions) + R"(, "max_tokens": 16}}
}
)";
}

// One evalrun run against `server` and what it showed.
struct EvalrunRun {
  ChildRun run;
  ServiceLog::Summary served;
  double latency_ms = -1;  // mean of samples.jsonl latency_ms
  int max_in_flight = -1;  // results.json parts.mmlupro.max_in_flight
};

// One evalrun run of `card` against `servers` (all serving into one log),
// `slots` in all.
bool RunEvalrunOn(const BenchOptions& o, const std::vector<FakeServer*>& servers, const std::string& card, int slots,
                  const std::string& job, EvalrunRun* r) {
  const int n = o.requests;
  const std::string card_path = o.work_dir + "/" + job + ".json";
  testing::WriteFile(card_path, card);
  ChildProcess child;
  const std::vector<std::string> argv = {o.evalrun_binary, "--card", card_path, "--out", o.work_dir + "/runs",
                                         "--job", job, "--data-dir", o.data_dir};
  auto log = std::make_shared<ServiceLog>();
  // Per-thread CPU over the middle of the run: from the (4 x slots)-th
  // request, when every worker runs, to the (n - 4 x slots)-th, before any
  // has run out of work.
  if (n > 8 * slots + 1) log->set_thread_snapshots(4 * slots, n - 4 * slots);
  for (FakeServer* server : servers) Serve(server, log, o.service_ms);
  if (!child.Start(argv, o.work_dir, job)) {
    for (FakeServer* server : servers) Serve(server, nullptr, o.service_ms);
    std::fprintf(stderr, "bench: %s: cannot start %s\n", job.c_str(), o.evalrun_binary.c_str());
    return false;
  }
  // Set before the first request in practice: the child loads its dataset
  // first. Were it later, only the CPU-at-start figure would read 0.
  log->set_child(child.pid());
  r->run = child.Wait(60 + 4.0 * n / slots * o.service_ms / 1000.0);
  for (FakeServer* server : servers) Serve(server, nullptr, o.service_ms);
  r->served = log->Get();
  const std::string dir = o.work_dir + "/runs/" + job;
  r->latency_ms = MeanSampleLatencyMs(dir + "/mmlupro/samples.jsonl");
  auto res = nlohmann::json::parse(testing::ReadFile(dir + "/results.json"), nullptr, false);
  if (!res.is_discarded()) {
    const auto& p = res["parts"]["mmlupro"];
    if (p.contains("max_in_flight") && p["max_in_flight"].is_number_integer()) r->max_in_flight = p["max_in_flight"];
  }
  if (r->run.exit_code != 0 || r->served.served != n) {
    std::fprintf(stderr, "bench: %s: evalrun exit %d%s, %d/%d requests; stderr tail:\n%s\n", job.c_str(),
                 r->run.exit_code, r->run.timed_out ? " (timed out)" : "", r->served.served, n,
                 FileTail(r->run.err_path).c_str());
    return false;
  }
  return true;
}

bool RunEvalrun(const BenchOptions& o, FakeServer* server, int slots, const std::string& job, EvalrunRun* r) {
  return RunEvalrunOn(o, {server}, Card(server->base_url(), slots, o.requests), slots, job, r);
}

// The card of the two-endpoint run: `slots` per endpoint.
std::string TwoEndpointCard(const FakeServer& a, const FakeServer& b, int slots, int questions) {
  return R"({
  "name": "bench-occupancy-endpoints",
  "model": {"name": "fake"},
  "server": {"endpoints": [{"base_url": ")" + a.base_url() + R"("}, {"base_url": ")" + b.base_url() + R"("}],
             "slots": )" + std::to_string(slots) + R"(, "ready_timeout_s": 20},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
  "thinking": false,
  "max_failed": 0,
  "parts": {"mmlupro": {"questions": )" + std::to_string(questions) + R"(, "max_tokens": 16}}
}
)";
}

// Two in-process fake servers of 4 slots behind one card: the runner's CPU
// per request beside one endpoint's of 4 and of 8 slots (the same number
// of requests), and each endpoint at most its slots.
bool RunTwoEndpoints(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "occupancy";
  const int per = 4, n = o.requests;
  std::fprintf(stderr, "bench: occupancy, 2 endpoints x %d slots, %d requests x %d ms ...\n", per, n, o.service_ms);
  FakeServerOptions fo;
  fo.slots = per;
  FakeServer a(fo), b(fo);
  if (!a.Start() || !b.Start()) {
    out->push_back({sec, "2 endpoints x 4 slots: fake servers", "did not start", "", Verdict::kMiss});
    return false;
  }
  EvalrunRun two;
  const bool ran = RunEvalrunOn(o, {&a, &b}, TwoEndpointCard(a, b, per, n), 2 * per, "occupancy-2x4", &two);
  const int served_a = a.chat_requests(), served_b = b.chat_requests();
  const int waiting = a.max_waiting() + b.max_waiting();
  // Each endpoint's most in flight, as evalrun's results.json says (the
  // Responder serves before the fake's slot wait, so the fake's own count
  // is not the service concurrency; the log's is, over both servers).
  int max_a = -1, max_b = -1;
  const auto res = nlohmann::json::parse(
      testing::ReadFile(o.work_dir + "/runs/occupancy-2x4/results.json"), nullptr, false);
  if (!res.is_discarded()) {
    const auto& eps = res["parts"]["mmlupro"]["endpoints"];
    if (eps.is_array() && eps.size() == 2) max_a = eps[0].value("max_in_flight", -1), max_b = eps[1].value("max_in_flight", -1);
  }
  a.Stop();
  b.Stop();
  // One endpoint of 4 and of 8 slots, the same requests, right after.
  EvalrunRun one4, one8;
  bool ran_one = true;
  for (auto [slots, run] : {std::pair<int, EvalrunRun*>{per, &one4}, {2 * per, &one8}}) {
    FakeServerOptions f1;
    f1.slots = slots;
    FakeServer s(f1);
    ran_one = ran_one && s.Start() && RunEvalrun(o, &s, slots, Fmt("occupancy-1x%d", slots), run);
    s.Stop();
  }
  if (!ran || !ran_one) {
    out->push_back({sec, "2 endpoints x 4 slots: evalrun run", Fmt("exit %d, %d/%d requests", two.run.exit_code,
                    two.served.served, n), "exit 0", Verdict::kMiss});
    return false;
  }
  auto cpu_per = [n](const EvalrunRun& e) { return (e.run.cpu_s() - e.served.cpu_at_first) / n * 1000.0; };
  const double c2 = cpu_per(two), c4 = cpu_per(one4), c8 = cpu_per(one8);
  out->push_back({sec, "2 endpoints x 4 slots: evalrun CPU per request (after startup)", Fmt("%.3f ms", c2),
                  "<= 0.3 ms", c2 <= 0.3 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, "1 endpoint x 4 / x 8 slots, run beside it: CPU per request",
                  Fmt("%.3f / %.3f ms", c4, c8), "(reference)", Verdict::kInfo});
  const double ratio = c8 > 0 ? c2 / c8 : 0;
  out->push_back({sec, "2 endpoints x 4 slots: CPU per request relative to 1 endpoint x 8", Fmt("%.2f x", ratio),
                  "<= 1.2 x", ratio <= 1.2 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, "2 endpoints x 4 slots: occupancy: sum(service) / (slots x phase)",
                  Fmt("%.2f %%", Occupancy(two.served, 2 * per)), "(info)", Verdict::kInfo});
  const bool matched = max_a == per && max_b == per && two.served.max_concurrent <= 2 * per && waiting == 0 &&
                       served_a + served_b == n;
  out->push_back({sec, "2 endpoints x 4 slots: max in flight a / b, served at once, queued, answered a + b",
                  Fmt("%d / %d, %d, %d, %d + %d", max_a, max_b, two.served.max_concurrent, waiting, served_a, served_b),
                  Fmt("%d / %d, <= %d, 0, %d", per, per, 2 * per, n), matched ? Verdict::kPass : Verdict::kMiss});
  return matched;
}

// A first run on 16 slots: warms the page cache and the binary, and its
// request bodies (the same questions every run: same card, same seed) feed
// the bare client (*bodies).
bool WarmUp(const BenchOptions& o, std::vector<std::string>* bodies, std::vector<Figure>* out) {
  const std::string sec = "occupancy";
  std::fprintf(stderr, "bench: occupancy, warm-up run (16 slots) ...\n");
  FakeServerOptions fo;
  fo.slots = 16;
  FakeServer server(fo);
  EvalrunRun warm;
  if (!server.Start() || !RunEvalrun(o, &server, 16, "occupancy-warmup", &warm)) {
    out->push_back({sec, "warm-up run", "failed (see stderr)", "exit 0", Verdict::kMiss});
    return false;
  }
  for (const auto& b : server.requests()) bodies->push_back(b.dump());
  out->push_back({sec, "warm-up run, 16 slots (wall, startup)",
                  Fmt("%.3f s, %.3f s", warm.run.wall_s(), warm.served.first_start - warm.run.start_s), "",
                  Verdict::kInfo});
  return true;
}

// One slot count's measurements: evalrun's run between two bare replays.
struct SlotRun {
  int slots = 0;
  std::string tag;          // "4 slots"
  std::string load_before;  // LoadAverage() before the first bare replay
  int rounds = 0;           // of each bare replay
  BareResult before, after;
  EvalrunRun e;
  int max_waiting = 0;  // the server's, after evalrun's run
};

// Occupancy against the bare client's, and where a slot's time goes.
void AddOccupancyFigures(const BenchOptions& o, const SlotRun& m, std::vector<Figure>* out) {
  const std::string sec = "occupancy";
  const int n = o.requests, slots = m.slots;
  const std::string& tag = m.tag;
  const ServiceLog::Summary& s = m.e.served;
  const double occ = Occupancy(s, slots);
  const double occ_before = Occupancy(m.before.served, slots), occ_after = Occupancy(m.after.served, slots);
  const double mean_service_ms = s.service_s / n * 1000.0;
  const double ideal = s.service_s / slots;
  // Per request and slot: the slot's time not spent serving, split into
  // the time inside evalrun's request (HTTP, the fake's JSON work) and the
  // time between two of its requests (evalrun's turnaround).
  const double per_request_ms = slots * s.phase() / n * 1000.0;
  const double bare_latency = (m.before.latency_ms + m.after.latency_ms) / 2;

  out->push_back({sec, tag + ": load average before", m.load_before, "", Verdict::kInfo});
  out->push_back({sec, tag + ": occupancy: sum(service) / (slots x phase)", Fmt("%.2f %%", occ), ">= 99 %",
                  occ >= 99.0 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, tag + ": occupancy of a bare client (before / after)",
                  Fmt("%.2f %% / %.2f %%", occ_before, occ_after), "(reference)", Verdict::kInfo});
  const double relative = occ / ((occ_before + occ_after) / 2) * 100.0;
  out->push_back({sec, tag + ": occupancy relative to the bare client", Fmt("%.2f %%", relative), ">= 99 %",
                  relative >= 99.0 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, tag + ": phase / ideal sum(service)/slots / nominal",
                  Fmt("%.3f / %.3f / %.3f s", s.phase(), ideal, n / static_cast<double>(slots) * o.service_ms / 1000),
                  "", Verdict::kInfo});
  out->push_back({sec, tag + ": per request: slot time / service / inside request / between",
                  Fmt("%.2f / %.2f / %.2f / %.2f ms", per_request_ms, mean_service_ms, m.e.latency_ms,
                      per_request_ms - m.e.latency_ms),
                  "", Verdict::kInfo});
  const double bare_slot_ms = (m.before.served.phase() + m.after.served.phase()) / (2.0 * m.rounds) * 1000;
  const double bare_service_ms =
      (m.before.served.service_s + m.after.served.service_s) / (2.0 * m.rounds * slots) * 1000;
  out->push_back({sec, tag + ": bare client: slot time / service / inside request / between",
                  Fmt("%.2f / %.2f / %.2f / %.2f ms", bare_slot_ms, bare_service_ms, bare_latency,
                      bare_slot_ms - bare_latency),
                  "", Verdict::kInfo});
}

// Mid-run CPU per request by thread name (evals/base/thread_name.h): the
// pool's slot workers (HTTP + JSON), its writer (scoring, samples.jsonl,
// fsync), the main thread (waits in the pool) and the rest (progress, noise
// sampler, signals).
void AddThreadCpuFigure(const SlotRun& m, std::vector<Figure>* out) {
  const ServiceLog::Summary& s = m.e.served;
  double workers_s = 0, writer_s = 0, main_s = 0, rest_s = 0;
  size_t rest_n = 0;
  for (const auto& [tid, t] : s.thread_cpu) {
    if (tid == m.e.run.pid) main_s += t.cpu_s;
    else if (t.name.rfind("evalrun-slot", 0) == 0) workers_s += t.cpu_s;
    else if (t.name == "evalrun-writer") writer_s += t.cpu_s;
    else rest_s += t.cpu_s, ++rest_n;
  }
  const double per = 1000.0 / s.thread_cpu_requests;
  out->push_back({"occupancy", m.tag + ": mid-run CPU per request: slots / writer / main / other threads",
                  Fmt("%.3f / %.3f / %.3f / %.3f ms (%zu other threads)", workers_s * per, writer_s * per,
                      main_s * per, rest_s * per, rest_n),
                  "", Verdict::kInfo});
}

// evalrun's startup, shutdown, CPU, peak RSS and context switches.
void AddRunCostFigures(const BenchOptions& o, const SlotRun& m, std::vector<Figure>* out) {
  const std::string sec = "occupancy";
  const std::string& tag = m.tag;
  const ChildRun& run = m.e.run;
  const ServiceLog::Summary& s = m.e.served;
  const double cpu_per_req_ms = (run.cpu_s() - s.cpu_at_first) / o.requests * 1000.0;
  out->push_back({sec, tag + ": startup (spawn -> first request)",
                  Fmt("%.3f s, %.0f ms CPU", s.first_start - run.start_s, s.cpu_at_first * 1000), "",
                  Verdict::kInfo});
  out->push_back({sec, tag + ": shutdown (last reply -> exit)", Fmt("%.3f s", run.end_s - s.last_end), "",
                  Verdict::kInfo});
  out->push_back({sec, tag + ": evalrun CPU per request (after startup)", Fmt("%.3f ms", cpu_per_req_ms),
                  "<= 0.3 ms", cpu_per_req_ms <= 0.3 ? Verdict::kPass : Verdict::kMiss});
  if (!s.thread_cpu.empty()) AddThreadCpuFigure(m, out);
  out->push_back({sec, tag + ": evalrun CPU total (user + sys)",
                  Fmt("%.3f s (%.3f + %.3f)", run.cpu_s(), run.user_s, run.sys_s), "", Verdict::kInfo});
  out->push_back({sec, tag + ": evalrun CPU share of wall",
                  Fmt("%.1f %% of one core", run.cpu_s() / run.wall_s() * 100), "", Verdict::kInfo});
  out->push_back({sec, tag + ": evalrun peak RSS (at first request / end)",
                  Fmt("%.1f / %.1f MB", s.hwm_at_first_kb / 1024.0, run.max_rss_kb / 1024.0), "", Verdict::kInfo});
  out->push_back({sec, tag + ": context switches (voluntary / involuntary)",
                  Fmt("%lld / %lld", static_cast<long long>(run.vol_ctx), static_cast<long long>(run.invol_ctx)), "",
                  Verdict::kInfo});
}

// One slot count: evalrun's run between two bare replays of `bodies`, and
// its figures. False when it could not be measured.
bool MeasureSlotCount(const BenchOptions& o, int slots, const std::vector<std::string>& bodies,
                      std::vector<Figure>* out) {
  const std::string sec = "occupancy";
  const int n = o.requests;
  SlotRun m;
  m.slots = slots;
  m.tag = Fmt("%d slot%s", slots, slots == 1 ? "" : "s");
  std::fprintf(stderr, "bench: occupancy, %s, %d requests x %d ms ...\n", m.tag.c_str(), n, o.service_ms);
  FakeServerOptions fo;
  fo.slots = slots;
  FakeServer server(fo);
  if (!server.Start()) {
    out->push_back({sec, m.tag + ": fake server", "did not start", "", Verdict::kMiss});
    return false;
  }
  Serve(&server, nullptr, o.service_ms);
  m.load_before = LoadAverage();
  // About 3 s of bare replay before and after (150 rounds at 20 ms).
  m.rounds = std::max(1, std::min(n / slots, std::max(25, 3000 / o.service_ms)));
  m.before = BareReplay(&server, bodies, slots, m.rounds, o.service_ms);
  const bool ran = RunEvalrun(o, &server, slots, Fmt("occupancy-%d", slots), &m.e);
  m.max_waiting = server.max_waiting();
  m.after = BareReplay(&server, bodies, slots, m.rounds, o.service_ms);
  server.Stop();
  if (!ran) {
    out->push_back({sec, m.tag + ": evalrun run", Fmt("exit %d, %d/%d requests", m.e.run.exit_code,
                    m.e.served.served, n), "exit 0", Verdict::kMiss});
    return false;
  }
  AddOccupancyFigures(o, m, out);
  AddRunCostFigures(o, m, out);
  // Never more than the slots in the server; the pool filled every slot.
  const ServiceLog::Summary& s = m.e.served;
  const bool matched = s.max_concurrent <= slots && m.e.max_in_flight == slots && m.max_waiting == 0;
  out->push_back({sec, m.tag + ": served at once / evalrun max_in_flight / queued",
                  Fmt("%d / %d / %d", s.max_concurrent, m.e.max_in_flight, m.max_waiting),
                  Fmt("%d / %d / 0", slots, slots), matched ? Verdict::kPass : Verdict::kMiss});
  return true;
}

}  // namespace

bool RunOccupancySection(const BenchOptions& o, std::vector<Figure>* out) {
  bool ok = true;
  const std::string sec = "occupancy";
  out->push_back({sec, "load average (1/5/15 min) at start", LoadAverage(), "", Verdict::kInfo});
  out->push_back({sec, "fake server sockets as llama-server's (TCP_NODELAY, backlog 512)",
                  ServerSocketsLikeLlamaServer() ? "yes (bench shim)" : "no (--fake-httplib-defaults)", "",
                  Verdict::kInfo});
  const int client_sockets_before = ShimClientSockets();
  std::vector<std::string> bodies;
  if (!WarmUp(o, &bodies, out)) return false;
  for (const int slots : o.slot_counts) ok = MeasureSlotCount(o, slots, bodies, out) && ok;
  ok = RunTwoEndpoints(o, out) && ok;
  out->push_back({sec, "shim: bare client sockets / accepted sockets / listen backlogs raised",
                  Fmt("%d / %d / %d", ShimClientSockets() - client_sockets_before, ShimServerSockets(),
                      ShimListenSockets()),
                  "", Verdict::kInfo});
  out->push_back({sec, "load average (1/5/15 min) at end", LoadAverage(), "", Verdict::kInfo});
  return ok;
}

}  // namespace evalrun::bench
