// Section "ruler": RULER prompt preparation.
//
// In-process: GenerateRulerSamples (evals/benchmarks/ruler/ruler_tasks.h) for
// `ruler_tasks` x `ruler_samples_per_task` prompts at 32K and at 128K, with
// each profile (nvidia, the default, and fit), each count a round trip to the
// fake server's /apply-template + /tokenize (MakeServerTokenizer,
// evals/server/server_tokenizer.h), which answers after `tokenize_delay_ms`. A
// wrapping tokenizer times every call, so the figures split the wall time
// into the tokenizer's round trips and evalrun's own work (and the driving
// thread's CPU). Tasks that NVIDIA's script could not prepare at a length
// (RulerGenStats::cannot_prepare) are counted as skipped.
//
// Through the real binary: a card with part `ruler` at lengths [131072]
// (default profile), the same tasks and samples, slots 4 and a fake server
// with a 128K+ context; its peak RSS (wait4 ru_maxrss, and VmHWM when the
// first chat request arrives, i.e. right after the preparation).
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "bench/tcp_nodelay_shim.h"
#include "evals/run/card.h"
#include "evals/server/http.h"
#include "evals/benchmarks/ruler/ruler_inputs.h"
#include "evals/benchmarks/ruler/ruler_tasks.h"
#include "evals/server/server_tokenizer.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

using evalrun::testing::FakeReply;
using evalrun::testing::FakeServer;
using evalrun::testing::FakeServerOptions;

// Delegates every count and adds up the wall time spent in them.
class TimingTokenizer : public Tokenizer {
 public:
  explicit TimingTokenizer(std::unique_ptr<Tokenizer> inner) : inner_(std::move(inner)) {}
  Status Count(std::string_view text, int* n) override {
    const double t0 = NowSeconds();
    Status st = inner_->Count(text, n);
    seconds_ += NowSeconds() - t0;
    return st;
  }
  Status CountChat(std::string_view content, int* n) override {
    const double t0 = NowSeconds();
    Status st = inner_->CountChat(content, n);
    seconds_ += NowSeconds() - t0;
    return st;
  }
  int calls() const override { return inner_->calls(); }
  double seconds() const { return seconds_; }

 private:
  std::unique_ptr<Tokenizer> inner_;
  double seconds_ = 0;
};

std::string JsonList(const std::vector<std::string>& v) {
  nlohmann::json j = v;
  return j.dump();
}

// What the section carries from one phase to the next.
struct RulerState {
  RulerInputs inputs;
  std::vector<RulerTaskConfig> tasks;
  int expected_128k = 0;  // what the binary run (default profile) should send
  bool ok = true;         // false when an in-process preparation failed
};

// Loads the RULER inputs (timed) and the tasks' configs into *s.
bool LoadRulerSetup(const BenchOptions& o, RulerState* s, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  std::fprintf(stderr, "bench: ruler inputs ...\n");
  RulerLoadOptions lo;
  lo.tasks = o.ruler_tasks;
  lo.punkt_dir = o.data_dir + "/punkt-english";
  double t0 = NowSeconds();
  Status st = LoadRulerInputs(o.data_dir + "/ruler", lo, &s->inputs);
  if (!st.ok()) {
    std::fprintf(stderr, "bench: %s\n", st.ToString().c_str());
    out->push_back({sec, "load RULER inputs", st.ToString(), "", Verdict::kMiss});
    return false;
  }
  out->push_back({sec, "load RULER inputs (essays, word lists, Punkt), once", Fmt("%.3f s", NowSeconds() - t0), "",
                  Verdict::kInfo});
  for (const auto& name : o.ruler_tasks) {
    RulerTaskConfig c;
    st = RulerTaskByName(name, &c);
    if (!st.ok()) {
      out->push_back({sec, "task " + name, st.ToString(), "", Verdict::kMiss});
      return false;
    }
    s->tasks.push_back(c);
  }
  return true;
}

// What one preparation pass made.
struct PrepCounts {
  int made = 0, skipped = 0;
  double max_calls_per_sample = 0;
};

// Generates every task's samples at `length` with `profile`; stops at the
// first error.
Status GenerateAllTasks(const BenchOptions& o, const RulerState& s, RulerProfile profile, int length,
                        const std::string& tag, Tokenizer* tok, PrepCounts* c) {
  Status st;
  for (auto task : s.tasks) {
    task.profile = profile;
    RulerGenStats stats;
    const RulerSampleSink sink = [&](RulerSample sample) {
      ++c->made;
      c->max_calls_per_sample = std::max<double>(c->max_calls_per_sample, sample.tokenizer_calls);
      return Status::Ok();
    };
    st = GenerateRulerSamples(s.inputs, task, length, o.ruler_samples_per_task, 42, tok, sink, &stats);
    if (!st.ok()) break;
    if (stats.cannot_prepare) {
      c->made -= stats.samples;
      ++c->skipped;
      std::fprintf(stderr, "bench:   %s\n", stats.reason.c_str());
    }
    if (o.verbose)
      std::fprintf(stderr, "bench:   %s %s: %d samples, %d tokenizer calls (%d setup)\n", task.name.c_str(),
                   tag.c_str(), stats.cannot_prepare ? 0 : stats.samples, stats.tokenizer_calls,
                   stats.setup_calls);
  }
  return st;
}

// One in-process preparation (a profile at a length) and its figures: wall
// time split into the tokenizer's round trips and evalrun's own work.
void PrepareAt(const BenchOptions& o, RulerProfile profile, int length, const FakeServer& server,
               const ServerConfig& sc, RulerState* s, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  const std::string tag = Fmt("%dK %s", length / 1024, RulerProfileName(profile));
  std::fprintf(stderr, "bench: ruler preparation at %s ...\n", tag.c_str());
  TimingTokenizer tok(MakeServerTokenizer(MakeHttpTransport(server.origin(), ""), sc, false));
  const int server_calls_before = server.tokenize_requests();
  const double wall0 = NowSeconds(), cpu0 = ThreadCpuSeconds();
  PrepCounts c;
  const Status st = GenerateAllTasks(o, *s, profile, length, tag, &tok, &c);
  const double wall = NowSeconds() - wall0, cpu = ThreadCpuSeconds() - cpu0;
  if (!st.ok()) {
    std::fprintf(stderr, "bench: ruler at %s: %s\n", tag.c_str(), st.ToString().c_str());
    out->push_back({sec, tag + ": preparation", st.ToString(), "", Verdict::kMiss});
    s->ok = false;
    return;
  }
  if (profile == RulerProfile::kNvidia && length == 131072) s->expected_128k = c.made;
  const int calls = tok.calls();
  const double own = wall - tok.seconds();
  out->push_back({sec, Fmt("%s: %d prompts prepared (%d tasks skipped), wall", tag.c_str(), c.made, c.skipped),
                  Fmt("%.3f s", wall), "", Verdict::kInfo});
  out->push_back({sec, tag + ": tokenizer calls (per prompt, max per prompt)",
                  Fmt("%d (%.1f, %.0f); server saw %d", calls, calls / static_cast<double>(std::max(c.made, 1)),
                      c.max_calls_per_sample, server.tokenize_requests() - server_calls_before),
                  "", Verdict::kInfo});
  out->push_back({sec, tag + Fmt(": time in tokenizer round trips (%d ms delay each)", o.tokenize_delay_ms),
                  Fmt("%.3f s (%.3f s of it the delay)", tok.seconds(), calls * o.tokenize_delay_ms / 1000.0), "",
                  Verdict::kInfo});
  // The 10 s target is the fit profile's (few counts per prompt); nvidia
  // makes NVIDIA's ~20 counts per task and length plus one per sample.
  const bool target = length == 131072 && profile == RulerProfile::kFit;
  out->push_back({sec, tag + ": own work (wall - tokenizer calls)", Fmt("%.3f s", own),
                  target ? "< 10 s" : "", target ? (own < 10 ? Verdict::kPass : Verdict::kMiss) : Verdict::kInfo});
  out->push_back({sec, tag + ": driver thread CPU (generation + client JSON)", Fmt("%.3f s", cpu), "",
                  Verdict::kInfo});
}

// In-process preparation at 32K and 128K with each profile, against a fake
// server's tokenizer. False when the fake server did not start.
bool RunInProcessPreparation(const BenchOptions& o, RulerState* s, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  FakeServerOptions fo;
  fo.tokenize_delay_ms = o.tokenize_delay_ms;
  fo.n_ctx = 140000;
  FakeServer server(fo);
  if (!server.Start()) {
    out->push_back({sec, "fake server", "did not start", "", Verdict::kMiss});
    return false;
  }
  ServerConfig sc;
  sc.base_url = server.base_url();
  out->push_back({sec, "in-process tokenizer client TCP_NODELAY",
                  o.client_nodelay ? "on (--client-nodelay)" : "off (as evalrun ships)", "", Verdict::kInfo});
  SetClientNoDelay(o.client_nodelay);
  for (const RulerProfile profile : {RulerProfile::kNvidia, RulerProfile::kFit})
    for (const int length : {32768, 131072}) PrepareAt(o, profile, length, server, sc, s, out);
  SetClientNoDelay(false);
  server.Stop();
  return true;
}

// When the first chat request arrived, and the child's CPU and peak RSS then.
struct FirstChat {
  std::mutex mu;
  double at = 0, cpu = 0;
  int64_t hwm_kb = 0;
  std::atomic<int> child_pid{0};
};

// Answers every chat request after 50 ms, noting the first in *first.
void AnswerNotingFirstChat(FakeServer* server, FirstChat* first) {
  server->SetResponder([first](const nlohmann::json&) {
    {
      std::lock_guard<std::mutex> l(first->mu);
      if (first->at == 0) {
        first->at = NowSeconds();
        if (first->child_pid.load() > 0) ReadProcCpuAndHwm(first->child_pid.load(), &first->cpu, &first->hwm_kb);
      }
    }
    FakeReply r;
    r.content = "The special magic numbers are 1234567 and 7654321.";
    r.delay_ms = 50;
    return r;
  });
}

// The card of the 128K run: part `ruler` at [131072], the section's tasks.
std::string Ruler128kCard(const BenchOptions& o, const std::string& base_url) {
  return R"({
  "name": "bench-ruler",
  "model": {"name": "fake"},
  "server": {"base_url": ")" + base_url + R"(", "slots": 4, "ready_timeout_s": 20},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
  "thinking": false,
  "parts": {"ruler": {"lengths": [131072], "tasks": )" + JsonList(o.ruler_tasks) +
         R"(, "samples_per_task": )" + std::to_string(o.ruler_samples_per_task) + R"(}}
}
)";
}

// The figures of a successful 128K run.
void AddBinaryRunFigures(const ChildRun& run, FirstChat* first, const FakeServer& server, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  double prep;
  {
    std::lock_guard<std::mutex> l(first->mu);
    prep = first->at - run.start_s;
  }
  const double rss_mb = run.max_rss_kb / 1024.0;
  out->push_back({sec, "128K run (evalrun): peak RSS", Fmt("%.1f MB", rss_mb), "< 100 MB",
                  rss_mb < 100 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, "128K run (evalrun): peak RSS when prepared (first request)",
                  Fmt("%.1f MB", first->hwm_kb / 1024.0), "", Verdict::kInfo});
  out->push_back({sec, "128K run (evalrun): spawn -> first request (load + prepare)",
                  Fmt("%.3f s, %.3f s CPU", prep, first->cpu), "", Verdict::kInfo});
  out->push_back({sec, "128K run (evalrun): wall, CPU (user + sys)",
                  Fmt("%.3f s, %.3f s (%.3f + %.3f)", run.wall_s(), run.cpu_s(), run.user_s, run.sys_s), "",
                  Verdict::kInfo});
  out->push_back({sec, "128K run (evalrun): tokenizer calls seen by the server",
                  Fmt("%d", server.tokenize_requests()), "", Verdict::kInfo});
}

// A 128K RULER run of the real binary (default profile): its peak RSS.
bool RunBinaryAt128k(const BenchOptions& o, int expected_128k, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  std::fprintf(stderr, "bench: ruler 128K through evalrun ...\n");
  FirstChat first;
  FakeServerOptions fo;
  fo.tokenize_delay_ms = o.tokenize_delay_ms;
  fo.slots = 4;
  fo.n_ctx = 140000;
  FakeServer server(fo);
  if (!server.Start()) {
    out->push_back({sec, "fake server (128K run)", "did not start", "", Verdict::kMiss});
    return false;
  }
  AnswerNotingFirstChat(&server, &first);
  const std::string card_path = o.work_dir + "/ruler-128k.json";
  testing::WriteFile(card_path, Ruler128kCard(o, server.base_url()));
  ChildProcess child;
  if (!child.Start({o.evalrun_binary, "--card", card_path, "--out", o.work_dir + "/runs", "--job", "ruler-128k",
                    "--data-dir", o.data_dir},
                   o.work_dir, "ruler-128k")) {
    out->push_back({sec, "128K run: evalrun", "could not be started", "", Verdict::kMiss});
    return false;
  }
  first.child_pid = child.pid();
  ChildRun run = child.Wait(900);
  if (run.exit_code != 0 || server.chat_requests() != expected_128k) {
    std::fprintf(stderr, "bench: ruler 128K run: exit %d%s, %d chat requests; stderr tail:\n%s\n", run.exit_code,
                 run.timed_out ? " (timed out)" : "", server.chat_requests(), FileTail(run.err_path).c_str());
    out->push_back({sec, "128K run through evalrun", Fmt("exit %d, %d/%d requests", run.exit_code,
                    server.chat_requests(), expected_128k), "exit 0", Verdict::kMiss});
    return false;
  }
  AddBinaryRunFigures(run, &first, server, out);
  server.Stop();
  return true;
}

}  // namespace

bool RunRulerSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  const int per_task = o.ruler_samples_per_task;
  const int prompts = per_task * static_cast<int>(o.ruler_tasks.size());
  out->push_back({sec, "load average (1/5/15 min) at start", LoadAverage(), "", Verdict::kInfo});
  out->push_back({sec, "tasks x samples", JsonList(o.ruler_tasks) + Fmt(" x %d = %d prompts", per_task, prompts), "",
                  Verdict::kInfo});

  // ---- In-process preparation.
  RulerState s;
  s.expected_128k = prompts;
  if (!LoadRulerSetup(o, &s, out)) return false;
  if (!RunInProcessPreparation(o, &s, out)) return false;

  // ---- The real binary at 128K: peak RSS.
  if (!RunBinaryAt128k(o, s.expected_128k, out)) return false;
  out->push_back({sec, "load average (1/5/15 min) at end", LoadAverage(), "", Verdict::kInfo});
  return s.ok;
}

}  // namespace evalrun::bench
