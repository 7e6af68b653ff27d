// Section "ruler-full": RULER at its published size through the real
// binary: all 13 tasks x 500 samples (--ruler-full-samples) at 32K and at
// 128K, against the fake server's tokenizer (/apply-template + /tokenize,
// no delay), 4 slots answering at once. Figures: preparation time (spawn to
// the first chat request, which comes after every prompt is made), peak RSS
// then (VmHWM) and over the whole run (wait4 ru_maxrss), target < 200 MB:
// prompts are spooled to disk (evals/run/prompt_spool.h), not held in memory.
#include <atomic>
#include <mutex>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {

namespace {

// When the first chat request arrived, and the child's CPU and peak RSS then.
struct FirstChat {
  std::mutex mu;
  double at = 0, cpu = 0;
  int64_t hwm_kb = 0;
  std::atomic<int> child_pid{0};
};

// Answers every chat request at once, noting the first in *first.
void AnswerNotingFirstChat(testing::FakeServer* server, FirstChat* first) {
  server->SetResponder([first](const nlohmann::json&) {
    {
      std::lock_guard<std::mutex> l(first->mu);
      if (first->at == 0) {
        first->at = NowSeconds();
        if (first->child_pid.load() > 0) ReadProcCpuAndHwm(first->child_pid.load(), &first->cpu, &first->hwm_kb);
      }
    }
    testing::FakeReply r;
    r.content = "The special magic numbers are 1234567 and 7654321.";
    return r;
  });
}

// The card of one length's run: every task, --ruler-full-samples each.
nlohmann::json RulerFullCard(const BenchOptions& o, const testing::FakeServer& server, int length,
                             const nlohmann::json& task_list) {
  return {
      {"name", "bench-ruler-full"},
      {"server", {{"base_url", server.base_url()}, {"slots", 4}, {"ready_timeout_s", 20}, {"kv_cache", "per_slot"}}},
      {"parts", {{"ruler", {{"lengths", {length}}, {"tasks", task_list},
                            {"samples_per_task", o.ruler_full_samples}}}}}};
}

// The figures of one length's successful run (`part`: results.json's
// parts.ruler).
void AddLengthFigures(const std::string& tag, const ChildRun& run, FirstChat* first,
                      const testing::FakeServer& server, const nlohmann::json& part, std::vector<Figure>* out) {
  const std::string sec = "ruler-full";
  double prep;
  {
    std::lock_guard<std::mutex> l(first->mu);
    prep = first->at - run.start_s;
  }
  const int n = part.value("n", 0);
  const int skipped = part["info"]["skipped"].is_array() ? static_cast<int>(part["info"]["skipped"].size()) : 0;
  const double rss_mb = run.max_rss_kb / 1024.0;
  out->push_back({sec, Fmt("%s: prompts asked (task-lengths skipped)", tag.c_str()),
                  Fmt("%d (%d), %d chat requests", n, skipped, server.chat_requests()), "", Verdict::kInfo});
  out->push_back({sec, tag + ": preparation (spawn -> first request), its CPU",
                  Fmt("%.1f s, %.1f s CPU", prep, first->cpu), "", Verdict::kInfo});
  out->push_back({sec, tag + ": peak RSS when prepared", Fmt("%.1f MB", first->hwm_kb / 1024.0), "< 200 MB",
                  first->hwm_kb / 1024.0 < 200 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, tag + ": peak RSS, whole run", Fmt("%.1f MB", rss_mb), "< 200 MB",
                  rss_mb < 200 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, tag + ": tokenizer calls seen by the server", Fmt("%d", server.tokenize_requests()), "",
                  Verdict::kInfo});
  out->push_back({sec, tag + ": wall, CPU (user + sys)",
                  Fmt("%.1f s, %.1f s (%.1f + %.1f)", run.wall_s(), run.cpu_s(), run.user_s, run.sys_s), "",
                  Verdict::kInfo});
}

// How one length's run ended.
enum class LengthRun {
  kMeasured,
  kFailed,  // a MISS; the next length still runs
  kStopped  // the section cannot go on
};

// One length through the real binary against a fake server of 4 slots.
LengthRun RunAtLength(const BenchOptions& o, int length, const nlohmann::json& task_list, std::vector<Figure>* out) {
  const std::string sec = "ruler-full";
  const std::string tag = Fmt("%dK", length / 1024);
  std::fprintf(stderr, "bench: ruler-full at %s ...\n", tag.c_str());
  FirstChat first;
  testing::FakeServerOptions fo;
  fo.slots = 4;
  fo.n_ctx = length + 1024;
  testing::FakeServer server(fo);
  if (!server.Start()) {
    out->push_back({sec, tag + ": fake server", "did not start", "", Verdict::kMiss});
    return LengthRun::kStopped;
  }
  AnswerNotingFirstChat(&server, &first);
  const std::string job = "ruler-full-" + std::to_string(length);
  const std::string card_path = o.work_dir + "/" + job + ".json";
  testing::WriteFile(card_path, RulerFullCard(o, server, length, task_list).dump(2));
  ChildProcess child;
  if (!child.Start({o.evalrun_binary, "--card", card_path, "--out", o.work_dir + "/runs", "--job", job,
                    "--data-dir", o.data_dir},
                   o.work_dir, job)) {
    out->push_back({sec, tag + ": evalrun", "could not be started", "", Verdict::kMiss});
    return LengthRun::kStopped;
  }
  first.child_pid = child.pid();
  ChildRun run = child.Wait(3 * 3600);
  const auto results = nlohmann::json::parse(testing::ReadFile(o.work_dir + "/runs/" + job + "/results.json"),
                                             nullptr, false);
  const auto& part = results.is_object() ? results["parts"]["ruler"] : nlohmann::json();
  if (run.exit_code != 0 || !part.is_object()) {
    std::fprintf(stderr, "bench: ruler-full %s: exit %d%s; stderr tail:\n%s\n", tag.c_str(), run.exit_code,
                 run.timed_out ? " (timed out)" : "", FileTail(run.err_path).c_str());
    out->push_back({sec, tag + ": run through evalrun", Fmt("exit %d", run.exit_code), "exit 0", Verdict::kMiss});
    return LengthRun::kFailed;
  }
  AddLengthFigures(tag, run, &first, server, part, out);
  server.Stop();
  return LengthRun::kMeasured;
}

}  // namespace

bool RunRulerFullSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "ruler-full";
  const std::vector<std::string> tasks = {"niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
                                          "niah_multikey_2", "niah_multikey_3", "niah_multivalue",
                                          "niah_multiquery", "vt", "cwe", "fwe", "qa_1", "qa_2"};
  nlohmann::json task_list = tasks;
  out->push_back({sec, "load average (1/5/15 min) at start", LoadAverage(), "", Verdict::kInfo});
  out->push_back({sec, "tasks x samples", Fmt("13 x %d (qa_1/qa_2 skip without SQuAD/HotpotQA)",
                                              o.ruler_full_samples), "", Verdict::kInfo});
  bool ok = true;
  for (const int length : {32768, 131072}) {
    const LengthRun r = RunAtLength(o, length, task_list, out);
    if (r == LengthRun::kStopped) return false;
    if (r == LengthRun::kFailed) ok = false;
  }
  out->push_back({sec, "load average (1/5/15 min) at end", LoadAverage(), "", Verdict::kInfo});
  return ok;
}

}  // namespace evalrun::bench
