// --repeat 2 (RunRepeat, evals/run/run_steps.h): a question part asked a
// second time into <job>/repeat-2, and the flip rate between the repeats
// (for a probe: the positions whose top token changed, and the KLD between
// the repeats).
#include <unistd.h>

#include <cstdio>
#include <map>
#include <variant>

#include "evals/base/exit_codes.h"
#include "evals/base/files.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"
#include "evals/run/utc_now.h"
#include "evals/run/verdict.h"
#include "scorers/noise_floor.h"
#include "scorers/probe_divergence.h"

namespace evalrun::run_internal {

std::string RepeatDir(const Job& job) { return job.dir.path() + "/repeat-2"; }

namespace {

// A probe's repeats: its distributions, not scores. "flips" are the
// positions whose top token changed; the KLD between the repeats is the A/A
// floor an A/B probe comparison is read against (compare --noise).
nlohmann::json ProbeRepeatJson(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second) {
  std::map<std::string, const LogprobsVerdict*> by_id;
  for (const auto& rec : second) by_id[rec.id] = &std::get<LogprobsVerdict>(rec.verdict);
  std::vector<double> kld;
  int64_t changed = 0;
  for (const auto& rec : first) {
    auto it = by_id.find(rec.id);
    const auto& v = std::get<LogprobsVerdict>(rec.verdict);
    if (it == by_id.end() || v.top.empty() || it->second->top.empty()) continue;
    const PositionDivergence d = ComparePosition(v.top, it->second->top);
    kld.push_back(d.kld);
    changed += !d.same_top;
  }
  const ValueSummary k = Summarize(kld);
  const int64_t n = static_cast<int64_t>(kld.size());
  nlohmann::json j;
  j["kind"] = "logprobs";
  j["pairs"] = n;
  j["flips"] = changed;
  j["flip_rate"] = n > 0 ? static_cast<double>(changed) / n : 0.0;
  j["kld"] = {{"mean", k.mean}, {"median", k.median}, {"p95", k.p95}, {"p99", k.p99}, {"max", k.max}};
  j["mde"] = nullptr;
  j["mde_below"] = nullptr;
  char text[320];
  std::snprintf(text, sizeof text,
                "KLD(repeat 1 || repeat 2) over %lld positions: mean %.3g, p99 %.3g, max %.3g; the top token changed "
                "at %lld",
                static_cast<long long>(n), k.mean, k.p99, k.max, static_cast<long long>(changed));
  j["text"] = text;
  return j;
}

}  // namespace

nlohmann::json RepeatJson(const std::vector<SampleRecord>& first, const std::vector<SampleRecord>& second,
                          const nlohmann::json& second_result) {
  if (!first.empty() && std::holds_alternative<LogprobsVerdict>(first.front().verdict)) {
    nlohmann::json j = ProbeRepeatJson(first, second);
    j["repeats"] = 2;
    j["dir"] = "repeat-2";
    j["n_repeat_2"] = second_result.value("n", nlohmann::json());
    j["complete_repeat_2"] = second_result.value("complete", nlohmann::json());
    return j;
  }
  std::map<std::string, double> by_id;
  for (const auto& rec : second) by_id[rec.id] = HeadlineScore(rec.verdict);
  std::vector<double> x, y;
  for (const auto& rec : first) {
    auto it = by_id.find(rec.id);
    if (it == by_id.end()) continue;
    x.push_back(HeadlineScore(rec.verdict));
    y.push_back(it->second);
  }
  // The floor for a comparison of as many items as both repeats answered.
  const NoiseFloor f = ComputeNoiseFloor(x, y, static_cast<int64_t>(x.size()), 0.05, kNoisePower);
  nlohmann::json j = NoiseFloorJson(f);
  j["repeats"] = 2;
  j["dir"] = "repeat-2";
  j["score_repeat_2"] = second_result.value("score", nlohmann::json());
  j["n_repeat_2"] = second_result.value("n", nlohmann::json());
  j["complete_repeat_2"] = second_result.value("complete", nlohmann::json());
  return j;
}

StepExit RunRepeat(PartRun* r, const RunServices& s, PartOutcome* first) {
  const Job& job = *s.job;
  const std::string dir = r->dir, name = r->name;
  r->dir = RepeatDir(job) + "/" + name;
  r->name = name + " (repeat 2)";  // progress and messages only
  r->answered = std::move(r->answered_repeat);
  PartOutcome second;
  StepExit e = RunQuestionPart(r, s, &second);
  r->dir = dir;
  r->name = name;
  if (e) return e;
  // The job's run.json beside it, so that the folder reads as a run of its own.
  std::string run_json;
  if (access((RepeatDir(job) + "/run.json").c_str(), F_OK) != 0 &&
      ReadFileToString(job.dir.path() + "/run.json", &run_json).ok()) {
    Status w = WriteFileAtomically(RepeatDir(job) + "/run.json", run_json);
    if (!w.ok()) return Stop(s.err, w, kExitIncomplete);
  }
  nlohmann::json extra = {
      {"finished_utc", UtcNow()}, {"server", s.server->props.ToJson()}, {"repeat_of", job.dir.job()}};
  Status st = WriteResults(RepeatDir(job), job.card, job.dir.job() + "/repeat-2", {{name, second.result}}, extra);
  if (!st.ok()) return Stop(s.err, st, kExitIncomplete);
  first->result["repeat"] = RepeatJson(first->records, second.records, second.result);
  first->failed += second.failed;
  if (first->stopped.ok()) first->stopped = second.stopped;
  return std::nullopt;
}

}  // namespace evalrun::run_internal
