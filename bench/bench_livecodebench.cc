// Section "livecodebench" (not in the default sections: --only
// livecodebench): what grading model-written code costs on this machine.
//
//   grading cost   one answer graded in the sandbox (scorers/
//                  lcb_sandbox_runner.h) at each level the machine makes
//                  (namespaces, unshare, seccomp, rlimits) on a stdin problem of 1 and of
//                  `kCostTests` tests: the fixed cost per answer (the
//                  interpreter's start, the harness, the sandbox) and the cost
//                  per test case, (t(kCostTests) - t(1)) / (kCostTests - 1),
//                  the median of kCostRuns runs each;
//   fixture set    the answers of tests/fixtures/livecodebench (answers.jsonl
//                  and answers_more.jsonl, 62) graded at the strongest level,
//                  4 at a time, official profile, per-test timeout 3 s:
//                  answers per second, over all of them and over those
//                  that end before any time limit (the grading cost proper;
//                  the others wait out their limits), best of 3;
//   occupancy      the real evalrun binary runs `kProblems` synthetic
//                  problems (a data_file) against the in-process fake
//                  server (4 slots, `kServiceMs` per answer) while it grades
//                  every answer (scoring.concurrency 2, niced): the slots'
//                  busy share n x service / (slots x span) (the card says
//                  kv_cache per_slot, as the fake server has it: assumed
//                  shared, 3 answers of 2,000 tokens fit its 8K, not 4), as
//                  tests/engine/scoring_stage_test.cc measures it (target >= 95 %).
#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "scorers/livecodebench/lcb_prompt.h"
#include "evals/proc/process_runner.h"
#include "evals/sandbox/sandbox.h"
#include "scorers/livecodebench/lcb_sandbox_runner.h"
#include "tests/support/fake_server.h"
#include "tests/support/lcb_fixtures.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

constexpr int kTests = 40;       // per synthetic problem of the occupancy run
constexpr int kCostTests = 200;  // the long grading of the cost per test case
constexpr int kCostRuns = 7;     // runs of each grading (the median is kept)
constexpr int kProblems = 24;
constexpr int kServiceMs = 300;
constexpr int kSlots = 4;

const char* kCode = "n = int(input())\nprint(sum(map(int, input().split())))\n";

LcbTestCases SumTests(int n) {
  LcbTestCases t;
  for (int i = 0; i < n; ++i) {
    t.inputs.push_back("3\n" + std::to_string(i) + " 1 2\n");
    t.outputs.push_back(std::to_string(i + 3) + "\n");
  }
  return t;
}

// The median wall seconds of grading kCode on `tests` tests, `runs` times.
bool MedianGrade(const LcbRunner& runner, int tests, int runs, double* median, std::string* why) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    LcbGrade g;
    const double t0 = NowSeconds();
    Status st = GradeLcbCode(kCode, SumTests(tests), {}, runner, &g);
    t.push_back(NowSeconds() - t0);
    if (!st.ok() || !g.passed()) {
      *why = st.ok() ? "the answer did not pass: " + g.error_message : st.ToString();
      return false;
    }
  }
  std::sort(t.begin(), t.end());
  *median = t[t.size() / 2];
  return true;
}

// The grading cost at `level` (capped there; the rlimits level with
// unsafe_exec). False when the machine cannot make that level.
bool GradingCostAt(SandboxLevel level, std::vector<Figure>* out) {
  const char* sec = "livecodebench";
  SandboxOptions options = LcbSandboxOptions("/usr/bin/python3", level == SandboxLevel::kRlimits);
  options.max_level = level;
  std::unique_ptr<CodeSandbox> box;
  SandboxProbe probe;
  Status st = MakeSandbox(options, RealProcessRunner::Default(), &box, &probe);
  const std::string name = SandboxLevelName(level);
  if (!st.ok() || box->level() != name) {
    const std::string why = !st.ok() ? st.ToString() : probe.levels[static_cast<size_t>(level)].second;
    out->push_back({sec, "sandbox level " + name, "not available here: " + why, "", Verdict::kInfo});
    return false;
  }
  const LcbRunner runner = SandboxLcbRunner(box.get());
  double one = 0, many = 0;
  std::string why;
  if (!MedianGrade(runner, 1, kCostRuns, &one, &why) || !MedianGrade(runner, kCostTests, kCostRuns, &many, &why)) {
    out->push_back({sec, "grading at " + name, why, "", Verdict::kMiss});
    return false;
  }
  out->push_back({sec, "grading at " + name + ": one answer, 1 test (fixed cost: interpreter, harness, sandbox)",
                  Fmt("%.0f ms", one * 1e3), "", Verdict::kInfo});
  out->push_back({sec, Fmt("grading at %s: cost per test case (%d tests: %.0f ms)", name.c_str(), kCostTests, many * 1e3),
                  Fmt("%.2f ms", (many - one) / (kCostTests - 1) * 1e3), "", Verdict::kInfo});
  return true;
}

// Each level this machine makes; the first (strongest) is what a run takes.
bool GradingCost(std::vector<Figure>* out) {
  bool any = false;
  for (SandboxLevel level : AllSandboxLevels()) any |= GradingCostAt(level, out);
  if (!any) out->push_back({"livecodebench", "sandbox", "no level could grade", "", Verdict::kMiss});
  return any;
}

struct FixtureAnswer {
  std::string code, question;
  bool timed;  // the official verdict is a time limit or a lost result (waits out a limit)
};

std::vector<FixtureAnswer> FixtureAnswers() {
  std::vector<FixtureAnswer> out;
  for (const auto& [answers, verdicts] : {std::pair{"answers.jsonl", "official_verdicts.json"},
                                          std::pair{"answers_more.jsonl", "official_verdicts_more.json"}}) {
    const nlohmann::json official =
        nlohmann::json::parse(testing::ReadFile(testing::LcbFixtureDir() + verdicts))["verdicts"];
    const std::vector<nlohmann::json> lines = testing::LcbFixtureAnswers(answers);
    for (size_t i = 0; i < lines.size(); ++i) {
      const int code = official[i]["error_code"].is_null() ? 0 : official[i]["error_code"].get<int>();
      out.push_back({ExtractLcbCode(lines[i]["response"].get<std::string>()),
                     lines[i]["question_id"].get<std::string>(), code == -3 || code == -5});
    }
  }
  return out;
}

// Seconds to grade `answers` 4 at a time.
double GradeFixtureSet(const LcbRunner& runner, const std::vector<FixtureAnswer>& answers,
                       const std::map<std::string, LcbTestCases>& problems) {
  const double t0 = NowSeconds();
  std::mutex mu;
  size_t next = 0;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&] {
      for (;;) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (next == answers.size()) return;
          i = next++;
        }
        LcbGrade g;
        GradeLcbCode(answers[i].code, problems.at(answers[i].question), {3, LcbProfile::kOfficial}, runner, &g);
      }
    });
  for (auto& t : workers) t.join();
  return NowSeconds() - t0;
}

bool FixtureThroughput(std::vector<Figure>* out) {
  std::unique_ptr<CodeSandbox> box;
  if (!MakeSandbox(LcbSandboxOptions("/usr/bin/python3", false), RealProcessRunner::Default(), &box).ok()) {
    out->push_back({"livecodebench", "fixture set", "no isolating sandbox level here", "", Verdict::kMiss});
    return false;
  }
  std::map<std::string, LcbTestCases> problems;
  if (Status st = testing::LcbFixtureProblems(&problems); !st.ok()) {
    out->push_back({"livecodebench", "fixture set", st.ToString(), "", Verdict::kMiss});
    return false;
  }
  const std::vector<FixtureAnswer> all = FixtureAnswers();
  std::vector<FixtureAnswer> quick;
  for (const auto& a : all)
    if (!a.timed) quick.push_back(a);
  const LcbRunner runner = SandboxLcbRunner(box.get());
  double best_all = 1e9, best_quick = 1e9;
  for (int round = 0; round < 3; ++round) {
    best_all = std::min(best_all, GradeFixtureSet(runner, all, problems));
    best_quick = std::min(best_quick, GradeFixtureSet(runner, quick, problems));
  }
  out->push_back({"livecodebench", Fmt("fixture set at %s: all %zu answers", box->level().c_str(), all.size()),
                  Fmt("%.2f answers/s (%.2f s)", all.size() / best_all, best_all), "", Verdict::kInfo});
  out->push_back({"livecodebench",
                  Fmt("fixture set at %s: the %zu that end before any limit", box->level().c_str(), quick.size()),
                  Fmt("%.2f answers/s (%.2f s)", quick.size() / best_quick, best_quick), "", Verdict::kInfo});
  return true;
}

// kProblems stdin problems of kTests tests each, in the dataset's row format.
std::string SyntheticRows() {
  std::string rows;
  const LcbTestCases t = SumTests(kTests);
  for (int p = 0; p < kProblems; ++p) {
    nlohmann::json tests = nlohmann::json::array();
    for (int i = 0; i < kTests; ++i)
      tests.push_back({{"input", t.inputs[i]}, {"output", t.outputs[i]}, {"testtype", "stdin"}});
    nlohmann::json row = {{"question_title", "sum " + std::to_string(p)},
                          {"question_content", "Problem " + std::to_string(p) + ": print the sum of the N numbers."},
                          {"platform", "atcoder"}, {"question_id", "bench_" + std::to_string(p)},
                          {"contest_id", "bench"}, {"contest_date", "2024-09-01T00:00:00"}, {"starter_code", ""},
                          {"difficulty", p % 2 ? "easy" : "medium"},
                          {"public_test_cases", nlohmann::json::array().dump()},
                          {"private_test_cases", tests.dump()}, {"metadata", "{}"}};
    rows += row.dump() + "\n";
  }
  return rows;
}

bool Occupancy(const BenchOptions& o, std::vector<Figure>* out) {
  const char* sec = "livecodebench";
  testing::FakeServer server({.slots = kSlots});
  if (!server.Start()) {
    out->push_back({sec, "occupancy", "the fake server did not start", "", Verdict::kMiss});
    return false;
  }
  std::mutex mu;
  std::vector<double> starts;
  server.SetResponder([&](const nlohmann::json&) {
    {
      std::lock_guard<std::mutex> l(mu);
      starts.push_back(NowSeconds());
    }
    testing::FakeReply r;
    r.content = std::string("```python\n") + kCode + "```\n";
    r.delay_ms = kServiceMs;
    return r;
  });
  const std::string rows = o.work_dir + "/lcb_rows.jsonl", card = o.work_dir + "/lcb_card.json";
  testing::WriteFile(rows, SyntheticRows());
  testing::WriteFile(card, nlohmann::json{{"name", "bench-lcb"}, {"model", {{"name", "fake"}}},
                                          {"server", {{"base_url", server.base_url()}, {"slots", kSlots}, {"kv_cache", "per_slot"}}},
                                          {"scoring", {{"concurrency", 2}}},
                                          {"parts", {{"livecodebench", {{"data_file", rows}, {"unsafe_exec", true}}}}}}
                                   .dump());
  ChildProcess child;
  if (!child.Start({o.evalrun_binary, "--card", card, "--out", o.work_dir + "/runs", "--job", "lcb", "--data-dir",
                    o.data_dir},
                   o.work_dir, "lcb")) {
    out->push_back({sec, "occupancy", "evalrun could not be started", "", Verdict::kMiss});
    return false;
  }
  ChildRun run = child.Wait(600);
  if (run.exit_code != 0 || starts.size() != static_cast<size_t>(kProblems)) {
    out->push_back({sec, "occupancy", Fmt("exit %d: %s", run.exit_code, FileTail(run.err_path, 400).c_str()), "exit 0",
                    Verdict::kMiss});
    return false;
  }
  std::lock_guard<std::mutex> l(mu);
  std::sort(starts.begin(), starts.end());
  if (o.verbose)
    for (double t : starts) std::fprintf(stderr, "livecodebench: request at +%.3f s\n", t - starts.front());
  const double span = *std::max_element(starts.begin(), starts.end()) + kServiceMs / 1e3 -
                      *std::min_element(starts.begin(), starts.end());
  const double occ = starts.size() * (kServiceMs / 1e3) / (kSlots * span);
  out->push_back({sec, Fmt("pool occupancy with grading on (%d answers of %d tests, %d slots, %d ms each, 2 graders)",
                           kProblems, kTests, kSlots, kServiceMs),
                  Fmt("%.1f %%", occ * 100), ">= 95 %", occ >= 0.95 ? Verdict::kPass : Verdict::kMiss});
  out->push_back({sec, "the whole run: wall, CPU (user + sys)", Fmt("%.1f s, %.1f s", run.wall_s(), run.cpu_s()), "",
                  Verdict::kInfo});
  return true;
}

}  // namespace

bool RunLiveCodeBenchSection(const BenchOptions& o, std::vector<Figure>* out) {
  bool ok = GradingCost(out);
  ok = FixtureThroughput(out) && ok;
  return Occupancy(o, out) && ok;
}

}  // namespace evalrun::bench
