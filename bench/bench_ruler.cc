// Section "ruler": RULER prompt preparation.
//
// In-process: GenerateRulerSamples (evals/parts/ruler_tasks.h) for
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
#include "evals/parts/ruler_inputs.h"
#include "evals/parts/ruler_tasks.h"
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

}  // namespace

bool RunRulerSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "ruler";
  const int per_task = o.ruler_samples_per_task;
  const int prompts = per_task * static_cast<int>(o.ruler_tasks.size());
  out->push_back({sec, "load average (1/5/15 min) at start", LoadAverage(), "", Verdict::kInfo});
  out->push_back({sec, "tasks x samples", JsonList(o.ruler_tasks) + Fmt(" x %d = %d prompts", per_task, prompts), "",
                  Verdict::kInfo});

  // ---- In-process preparation.
  std::fprintf(stderr, "bench: ruler inputs ...\n");
  RulerInputs inputs;
  RulerLoadOptions lo;
  lo.tasks = o.ruler_tasks;
  lo.punkt_dir = o.data_dir + "/punkt-english";
  double t0 = NowSeconds();
  Status st = LoadRulerInputs(o.data_dir + "/ruler", lo, &inputs);
  if (!st.ok()) {
    std::fprintf(stderr, "bench: %s\n", st.ToString().c_str());
    out->push_back({sec, "load RULER inputs", st.ToString(), "", Verdict::kMiss});
    return false;
  }
  out->push_back({sec, "load RULER inputs (essays, word lists, Punkt), once", Fmt("%.3f s", NowSeconds() - t0), "",
                  Verdict::kInfo});
  std::vector<RulerTaskConfig> tasks;
  for (const auto& name : o.ruler_tasks) {
    RulerTaskConfig c;
    st = RulerTaskByName(name, &c);
    if (!st.ok()) {
      out->push_back({sec, "task " + name, st.ToString(), "", Verdict::kMiss});
      return false;
    }
    tasks.push_back(c);
  }

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
  bool ok = true;
  out->push_back({sec, "in-process tokenizer client TCP_NODELAY",
                  o.client_nodelay ? "on (--client-nodelay)" : "off (as evalrun ships)", "", Verdict::kInfo});
  SetClientNoDelay(o.client_nodelay);
  int expected_128k = prompts;  // what the binary run (default profile) should send
  for (const RulerProfile profile : {RulerProfile::kNvidia, RulerProfile::kFit})
  for (const int length : {32768, 131072}) {
    const std::string tag = Fmt("%dK %s", length / 1024, RulerProfileName(profile));
    std::fprintf(stderr, "bench: ruler preparation at %s ...\n", tag.c_str());
    TimingTokenizer tok(MakeServerTokenizer(MakeHttpTransport(server.origin(), ""), sc, false));
    const int server_calls_before = server.tokenize_requests();
    const double wall0 = NowSeconds(), cpu0 = ThreadCpuSeconds();
    int made = 0, skipped = 0;
    double max_calls_per_sample = 0;
    for (auto task : tasks) {
      task.profile = profile;
      RulerGenStats stats;
      const RulerSampleSink sink = [&](RulerSample s) {
        ++made;
        max_calls_per_sample = std::max<double>(max_calls_per_sample, s.tokenizer_calls);
        return Status::Ok();
      };
      st = GenerateRulerSamples(inputs, task, length, per_task, 42, &tok, sink, &stats);
      if (!st.ok()) break;
      if (stats.cannot_prepare) {
        made -= stats.samples;
        ++skipped;
        std::fprintf(stderr, "bench:   %s\n", stats.reason.c_str());
      }
      if (o.verbose)
        std::fprintf(stderr, "bench:   %s %s: %d samples, %d tokenizer calls (%d setup)\n", task.name.c_str(),
                     tag.c_str(), stats.cannot_prepare ? 0 : stats.samples, stats.tokenizer_calls,
                     stats.setup_calls);
    }
    const double wall = NowSeconds() - wall0, cpu = ThreadCpuSeconds() - cpu0;
    if (!st.ok()) {
      std::fprintf(stderr, "bench: ruler at %s: %s\n", tag.c_str(), st.ToString().c_str());
      out->push_back({sec, tag + ": preparation", st.ToString(), "", Verdict::kMiss});
      ok = false;
      continue;
    }
    if (profile == RulerProfile::kNvidia && length == 131072) expected_128k = made;
    const int calls = tok.calls();
    const double own = wall - tok.seconds();
    out->push_back({sec, Fmt("%s: %d prompts prepared (%d tasks skipped), wall", tag.c_str(), made, skipped),
                    Fmt("%.3f s", wall), "", Verdict::kInfo});
    out->push_back({sec, tag + ": tokenizer calls (per prompt, max per prompt)",
                    Fmt("%d (%.1f, %.0f); server saw %d", calls, calls / static_cast<double>(std::max(made, 1)),
                        max_calls_per_sample, server.tokenize_requests() - server_calls_before),
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
  SetClientNoDelay(false);
  server.Stop();

  // ---- The real binary at 128K: peak RSS.
  std::fprintf(stderr, "bench: ruler 128K through evalrun ...\n");
  FakeServerOptions fo2 = fo;
  fo2.slots = 4;
  fo2.n_ctx = 140000;
  FakeServer server2(fo2);
  if (!server2.Start()) {
    out->push_back({sec, "fake server (128K run)", "did not start", "", Verdict::kMiss});
    return false;
  }
  std::mutex mu;
  double first_chat = 0, cpu_at_first = 0;
  int64_t hwm_at_first = 0;
  std::atomic<int> child_pid{0};
  server2.SetResponder([&](const nlohmann::json&) {
    {
      std::lock_guard<std::mutex> l(mu);
      if (first_chat == 0) {
        first_chat = NowSeconds();
        if (child_pid.load() > 0) ReadProcCpuAndHwm(child_pid.load(), &cpu_at_first, &hwm_at_first);
      }
    }
    FakeReply r;
    r.content = "The special magic numbers are 1234567 and 7654321.";
    r.delay_ms = 50;
    return r;
  });
  const std::string card_path = o.work_dir + "/ruler-128k.json";
  testing::WriteFile(card_path, R"({
  "name": "bench-ruler",
  "model": {"name": "fake"},
  "server": {"base_url": ")" + server2.base_url() + R"(", "slots": 4, "ready_timeout_s": 20},
  "sampling": {"temperature": 0, "top_k": 1, "seed": 42},
  "thinking": false,
  "parts": {"ruler": {"lengths": [131072], "tasks": )" + JsonList(o.ruler_tasks) +
                                R"(, "samples_per_task": )" + std::to_string(per_task) + R"(}}
}
)");
  ChildProcess child;
  if (!child.Start({o.evalrun_binary, "--card", card_path, "--out", o.work_dir + "/runs", "--job", "ruler-128k",
                    "--data-dir", o.data_dir},
                   o.work_dir, "ruler-128k")) {
    out->push_back({sec, "128K run: evalrun", "could not be started", "", Verdict::kMiss});
    return false;
  }
  child_pid = child.pid();
  ChildRun run = child.Wait(900);
  if (run.exit_code != 0 || server2.chat_requests() != expected_128k) {
    std::fprintf(stderr, "bench: ruler 128K run: exit %d%s, %d chat requests; stderr tail:\n%s\n", run.exit_code,
                 run.timed_out ? " (timed out)" : "", server2.chat_requests(), FileTail(run.err_path).c_str());
    out->push_back({sec, "128K run through evalrun", Fmt("exit %d, %d/%d requests", run.exit_code,
                    server2.chat_requests(), expected_128k), "exit 0", Verdict::kMiss});
    return false;
  }
  double prep;
  {
    std::lock_guard<std::mutex> l(mu);
    prep = first_chat - run.start_s;
  }
  const double rss_mb = run.max_rss_kb / 1024.0;
  out->push_back({sec, "128K run (evalrun): peak RSS", Fmt("%.1f MB", rss_mb), "< 100 MB",
                  rss_mb < 100 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, "128K run (evalrun): peak RSS when prepared (first request)",
                  Fmt("%.1f MB", hwm_at_first / 1024.0), "", Verdict::kInfo});
  out->push_back({sec, "128K run (evalrun): spawn -> first request (load + prepare)",
                  Fmt("%.3f s, %.3f s CPU", prep, cpu_at_first), "", Verdict::kInfo});
  out->push_back({sec, "128K run (evalrun): wall, CPU (user + sys)",
                  Fmt("%.3f s, %.3f s (%.3f + %.3f)", run.wall_s(), run.cpu_s(), run.user_s, run.sys_s), "",
                  Verdict::kInfo});
  out->push_back({sec, "128K run (evalrun): tokenizer calls seen by the server",
                  Fmt("%d", server2.tokenize_requests()), "", Verdict::kInfo});
  server2.Stop();
  out->push_back({sec, "load average (1/5/15 min) at end", LoadAverage(), "", Verdict::kInfo});
  return ok;
}

}  // namespace evalrun::bench
