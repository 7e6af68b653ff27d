// --repeat 2 (RunRepeat, evals/run/run_steps.h): a question part asked a
// second time into <job>/repeat-2, and what moved between the repeats
// (evals/run/repeat_summary.h).
#include <unistd.h>

#include "evals/base/exit_codes.h"
#include "evals/base/files.h"
#include "evals/run/repeat_summary.h"
#include "evals/run/run_files.h"
#include "evals/run/run_steps.h"
#include "evals/run/utc_now.h"

namespace evalrun::run_internal {

std::string RepeatDir(const Job& job) { return job.dir.path() + "/repeat-2"; }

StepExit RunRepeat(PartRun* r, const RunServices& s, PartOutcome* first) {
  const Job& job = *s.job;
  const std::string dir = r->dir, name = r->name;
  r->dir = RepeatDir(job) + "/" + name;
  r->name = name + " (repeat 2)";  // progress and messages only
  r->answered = std::move(r->answered_repeat);
  r->journaled = std::move(r->journaled_repeat);
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
    if (!w.ok()) return Stop(s.err, w, kExitWriteFailed);
  }
  nlohmann::json extra = {
      {"finished_utc", UtcNow()}, {"server", s.server->props.ToJson()}, {"repeat_of", job.dir.job()}};
  Status st = WriteResults(RepeatDir(job), job.card, job.dir.job() + "/repeat-2", {{name, second.result}}, extra);
  if (!st.ok()) return Stop(s.err, st, kExitWriteFailed);
  first->result["repeat"] = RepeatSummary(first->records, second.records, second.result);
  first->failed += second.failed;
  if (first->stopped.ok()) first->stopped = second.stopped;
  return std::nullopt;
}

}  // namespace evalrun::run_internal
